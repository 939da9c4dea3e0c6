// Unit tests of what the etcd store reads and writes (etcd_store.hpp): keys, base64, the
// endpoint list, and etcd's answers as its JSON gateway sends them (etcd 3.4 and 3.5).
#include "core/etcd_store.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <set>

using namespace snowflake;

TEST(Etcd, Base64RoundTrips) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("a"), "YQ==");
  EXPECT_EQ(base64_encode("ab"), "YWI=");
  EXPECT_EQ(base64_encode("abc"), "YWJj");
  EXPECT_EQ(base64_encode("/snowflake/owner/0007"), "L3Nub3dmbGFrZS9vd25lci8wMDA3");
  std::string out;
  for (const std::string &s :
       std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)}) {
    ASSERT_TRUE(base64_decode(base64_encode(s), &out)) << s;
    EXPECT_EQ(out, s);
  }
  EXPECT_FALSE(base64_decode("YQ=", &out));
  EXPECT_FALSE(base64_decode("Y=Q=", &out));
  EXPECT_FALSE(base64_decode("YQ!=", &out));
}

TEST(Etcd, KeysSortAsShards) {
  EXPECT_EQ(etcd_owner_key("/fleet", 7), "/fleet/owner/0007");
  EXPECT_EQ(etcd_mark_key("/fleet", 8191), "/fleet/mark/8191");
  EXPECT_LT(etcd_owner_key("/p", 9), etcd_owner_key("/p", 10));
  EXPECT_LT(etcd_owner_key("/p", 999), etcd_owner_key("/p", 1000));
  EXPECT_EQ(etcd_range_end("/p/"), "/p0");
  EXPECT_EQ(etcd_range_end(std::string("a\xff", 2)), "b");
}

TEST(Etcd, Endpoints) {
  std::vector<std::string> eps;
  std::string error;
  ASSERT_TRUE(parse_endpoints(" http://127.0.0.1:2379, https://etcd-b:2379/ ,", &eps, &error));
  ASSERT_EQ(eps.size(), 2u);
  EXPECT_EQ(eps[0], "http://127.0.0.1:2379");
  EXPECT_EQ(eps[1], "https://etcd-b:2379");
  ASSERT_TRUE(parse_endpoints("", &eps, &error));
  EXPECT_TRUE(eps.empty());
  EXPECT_FALSE(parse_endpoints("127.0.0.1:2379", &eps, &error));
  EXPECT_NE(error.find("not an http:// or https:// URL"), std::string::npos);
  EXPECT_FALSE(parse_endpoints("http://", &eps, &error));
  EXPECT_FALSE(parse_endpoints("ftp://x", &eps, &error));
}

TEST(Etcd, Answers) {
  int64_t id = 0, ttl = 0;
  ASSERT_TRUE(etcd_parse_lease_id(
      R"({"header":{"revision":"9"},"ID":"2324035594113753365","TTL":"5"})", &id, &ttl));
  EXPECT_EQ(id, 2324035594113753365);
  EXPECT_EQ(ttl, 5);
  EXPECT_FALSE(etcd_parse_lease_id(R"({"header":{}})", &id, &ttl));
  // A keepalive: alive, and gone (no TTL at all).
  ASSERT_TRUE(etcd_parse_keepalive(
      R"({"result":{"header":{"revision":"9"},"ID":"2324035594113753365","TTL":"5"}})", &ttl));
  EXPECT_EQ(ttl, 5);
  ASSERT_TRUE(etcd_parse_keepalive(
      R"({"result":{"header":{"revision":"9"},"ID":"23240355941137"}})", &ttl));
  EXPECT_EQ(ttl, 0);
  EXPECT_FALSE(etcd_parse_keepalive(R"({"error":"x"})", &ttl));
  EXPECT_FALSE(etcd_parse_keepalive("not json", &ttl));
  std::string message;
  ASSERT_TRUE(etcd_parse_error(
      R"({"error":"etcdserver: requested lease not found","message":"etcdserver: requested lease not found","code":5})",
      &message));
  EXPECT_EQ(message, "etcdserver: requested lease not found");
  ASSERT_TRUE(etcd_parse_error(
      R"({"error":{"grpc_code":14,"http_code":503,"message":"etcdserver: no leader"}})", &message));
  EXPECT_EQ(message, "etcdserver: no leader");
  EXPECT_FALSE(etcd_parse_error(R"({"header":{}})", &message));
}

TEST(Etcd, Marks) {
  StoredMark m{1795552233828, 1577836800000};
  StoredMark back;
  ASSERT_TRUE(etcd_parse_mark(etcd_mark_value(m), &back));
  EXPECT_EQ(back.unix_ms, m.unix_ms);
  EXPECT_EQ(back.epoch_ms, m.epoch_ms);
  EXPECT_FALSE(etcd_parse_mark("{}", &back));
  EXPECT_FALSE(etcd_parse_mark(R"({"unix_ms":0,"epoch_ms":0})", &back));
  EXPECT_FALSE(etcd_parse_mark("garbage", &back));
}

TEST(Etcd, NoEndpointIsAnErrorNotAHang) {
  EtcdSettings s;
  EtcdStore store(s, nullptr);
  int64_t lease = 0;
  const StoreResult r = store.grant(30, &lease);
  EXPECT_EQ(r.status, StoreStatus::kError);
  EXPECT_EQ(r.error, "snowflake.etcd_endpoints is empty");
}

TEST(Etcd, TokenRefusalsMeanAuthenticateAgain) {
  // What etcd's gateway answers (3.4, 3.5), status and body: a new token, or not.
  EXPECT_TRUE(etcd_token_refused(401, R"({"error":"etcdserver: invalid auth token"})"));
  EXPECT_TRUE(etcd_token_refused(401, ""));
  // Any change to users or roles makes older JWT tokens so, answered 400.
  EXPECT_TRUE(etcd_token_refused(
      400,
      R"({"error":"etcdserver: revision of auth store is old","code":3,"message":"etcdserver: revision of auth store is old"})"));
  EXPECT_TRUE(etcd_token_refused(
      400, R"({"code":3,"message":"etcdserver: invalid auth token","details":[]})"));
  EXPECT_TRUE(
      etcd_token_refused(500, R"({"error":"etcdserver: revision of auth store is old","code":2})"));
  // A streaming call (keepalive) answers 200 with the error in its body.
  EXPECT_TRUE(etcd_token_refused(
      200,
      R"({"error":{"grpc_code":3,"http_code":400,"message":"etcdserver: revision of auth store is old","http_status":"Bad Request"}})"));
  EXPECT_TRUE(etcd_token_refused(400, R"({"error":"etcdserver: user name is empty","code":3})"));
  // Not about the token: no new one.
  EXPECT_FALSE(
      etcd_token_refused(200, R"({"header":{"revision":"9"},"succeeded":true,"responses":[]})"));
  EXPECT_FALSE(etcd_token_refused(403, R"({"error":"etcdserver: permission denied","code":7})"));
  EXPECT_FALSE(
      etcd_token_refused(404, R"({"error":"etcdserver: requested lease not found","code":5})"));
  EXPECT_FALSE(etcd_token_refused(
      400, R"({"error":"etcdserver: authentication failed, invalid user ID or password"})"));
  EXPECT_FALSE(etcd_token_refused(503, R"({"error":"etcdserver: no leader"})"));
  EXPECT_FALSE(etcd_token_refused(400, "not json"));
}

// etcd behind its gateway, as far as the lease store uses it: leases, ranges with limit and
// keys_only, transactions with compares on CREATE, LEASE and MOD, and answers shaped as the
// gateway shapes them (64-bit numbers as strings, defaults left out). An answer past 1 MiB
// fails, as the store's transfer does; an answer can be lost after the request was done.
namespace {

using json = nlohmann::json;

struct FakeEtcd : EtcdTransport {
  struct Kv {
    std::string value;
    int64_t lease = 0, create = 0, mod = 0, version = 0;
  };
  std::map<std::string, Kv> kvs;
  std::set<int64_t> leases;
  int64_t revision = 1000000;  // a cluster that has lived
  int64_t next_lease = 7587869873548743000;
  int lose_txn_answers = 0;  // transactions done, their answers lost
  int hold_txns = 0;         // transactions kept (land_held), answered with a timeout
  std::vector<json> held_txns;
  std::function<void()> before_next_txn;  // run once, at the next transaction
  size_t largest = 0;                     // the largest answer sent
  std::vector<std::string> paths;

  static std::string b64(const json &j) {
    std::string out;
    EXPECT_TRUE(base64_decode(j.get<std::string>(), &out));
    return out;
  }
  static int64_t num(const json &j) {
    return j.is_string() ? std::stoll(j.get<std::string>()) : j.get<int64_t>();
  }
  json header() const { return {{"revision", std::to_string(revision)}}; }
  json kv_json(const std::string &key, const Kv &kv, bool keys_only) const {
    json j = {{"key", base64_encode(key)},
              {"create_revision", std::to_string(kv.create)},
              {"mod_revision", std::to_string(kv.mod)},
              {"version", std::to_string(kv.version)}};
    if (kv.lease != 0) j["lease"] = std::to_string(kv.lease);
    if (!keys_only && !kv.value.empty()) j["value"] = base64_encode(kv.value);
    return j;
  }
  json range(const json &req) const {
    const std::string from = b64(req["key"]), to = b64(req["range_end"]);
    const int64_t limit = req.contains("limit") ? num(req["limit"]) : 0;
    const bool keys_only = req.value("keys_only", false);
    json out = {{"header", header()}};
    json list = json::array();
    int64_t count = 0;
    for (auto it = kvs.lower_bound(from); it != kvs.end() && it->first < to; ++it, ++count)
      if (limit == 0 || count < limit) list.push_back(kv_json(it->first, it->second, keys_only));
    if (!list.empty()) out["kvs"] = list;
    if (limit != 0 && count > limit) out["more"] = true;
    if (count != 0) out["count"] = std::to_string(count);
    return out;
  }
  void put(const std::string &key, const std::string &value, int64_t lease) {
    Kv &kv = kvs[key];
    if (kv.create == 0) kv.create = revision;
    kv.mod = revision;
    ++kv.version;
    kv.value = value;
    kv.lease = lease;
  }
  bool holds(const json &c) const {
    auto it = kvs.find(b64(c["key"]));
    const Kv none;
    const Kv &kv = it == kvs.end() ? none : it->second;
    const std::string target = c["target"];
    const std::string result = c.value("result", "EQUAL");
    int64_t have = 0, want = 0;
    if (target == "CREATE") have = kv.create, want = num(c["create_revision"]);
    if (target == "MOD") have = kv.mod, want = num(c["mod_revision"]);
    if (target == "LEASE") have = kv.lease, want = num(c["lease"]);
    if (result == "LESS") return have < want;
    return have == want;
  }
  json txn(const json &req, EtcdResponse *out) {
    bool ok = true;
    for (const json &c : req["compare"]) ok = ok && holds(c);
    const json &ops = ok ? req["success"] : req.value("failure", json::array());
    for (const json &op : ops)
      if (op.contains("request_put") && op["request_put"].contains("lease") &&
          !leases.count(num(op["request_put"]["lease"]))) {
        out->status = 404;
        return {{"error", "etcdserver: requested lease not found"}, {"code", 5}};
      }
    bool wrote = false;
    for (const json &op : ops) wrote = wrote || op.contains("request_put");
    if (wrote) ++revision;
    json responses = json::array();
    for (const json &op : ops) {
      if (op.contains("request_put")) {
        const json &p = op["request_put"];
        put(b64(p["key"]), b64(p["value"]), p.contains("lease") ? num(p["lease"]) : 0);
        responses.push_back({{"response_put", {{"header", header()}}}});
      } else {
        responses.push_back({{"response_range", range(op["request_range"])}});
      }
    }
    json j = {{"header", header()}, {"responses", responses}};
    if (ok) j["succeeded"] = true;
    return j;
  }
  bool call(const char *path, const std::string &body, EtcdResponse *out,
            std::string *error) override {
    paths.push_back(path);
    const json req = json::parse(body);
    out->status = 200;
    json j;
    const std::string p = path;
    if (p == "/v3/lease/grant") {
      leases.insert(next_lease);
      j = {{"header", header()}, {"ID", std::to_string(next_lease++)}, {"TTL", req["TTL"]}};
    } else if (p == "/v3/lease/keepalive") {
      j = {{"result", {{"header", header()}, {"ID", req["ID"]}}}};
      if (leases.count(num(req["ID"]))) j["result"]["TTL"] = "30";
    } else if (p == "/v3/lease/revoke") {
      leases.erase(num(req["ID"]));
      for (auto it = kvs.begin(); it != kvs.end();)
        it = it->second.lease == num(req["ID"]) ? kvs.erase(it) : std::next(it);
      j = {{"header", header()}};
    } else if (p == "/v3/kv/range") {
      j = range(req);
    } else if (p == "/v3/kv/txn") {
      if (before_next_txn) {
        auto f = std::move(before_next_txn);
        before_next_txn = nullptr;
        f();
      }
      if (hold_txns > 0) {
        --hold_txns;
        held_txns.push_back(req);
        *error = "http://etcd:2379: Operation timed out after 2000 milliseconds";
        return false;
      }
      j = txn(req, out);
      if (lose_txn_answers > 0) {
        --lose_txn_answers;
        *error = "http://etcd:2379: Operation timed out after 2000 milliseconds";
        return false;
      }
    } else {
      out->status = 404;
    }
    out->body = j.dump();
    largest = std::max(largest, out->body.size());
    if (out->body.size() > (1 << 20)) {
      *error = "http://etcd:2379: Failure writing output to destination";
      return false;
    }
    return true;
  }
};

// A server around the machine, with a clock the test moves.
struct FakeHost : LeaseHost {
  int64_t now = 1000000000;
  uint64_t floor_ms = 0;
  int64_t mono_ns() override { return now; }
  uint64_t wall_unix_ms() override { return 1763000000000 + static_cast<uint64_t>(now / 1000000); }
  uint64_t ids_unix_ms() override { return wall_unix_ms(); }
  uint64_t needed_unix_ms() override { return 0; }
  uint64_t epoch_ms() override { return 1577836800000; }
  void taken(uint32_t, uint32_t, uint64_t mark) override { floor_ms = mark; }
  void resumed(uint32_t, uint32_t) override {}
  void lost(const std::string &) override {}
  void changed() override {}
};

LeaseSettings pool(uint32_t low, uint32_t high) {
  LeaseSettings s;
  s.pool_low = low;
  s.pool_high = high;
  return s;
}

EtcdSettings fake_settings() {
  EtcdSettings s;
  s.prefix = "/snowflake";
  s.holder = R"({"host":"db1","port":5432})";
  return s;
}

}  // namespace

TEST(EtcdStore, ALargePoolIsListedPageByPage) {
  FakeEtcd etcd;
  // 8,000 shards of the pool 0-8191 leased by other servers (a lease each, as in a fleet):
  // 1000 to 1191 are free.
  for (uint32_t s = 0; s < 8192; ++s)
    if (s < 1000 || s >= 1192) etcd.put(etcd_owner_key("/snowflake", s), "{}", etcd.next_lease++);
  ASSERT_EQ(etcd.kvs.size(), 8000u);
  EtcdStore store(fake_settings(), etcd);
  std::vector<ShardOwner> owners;
  int64_t listed = 0;
  const StoreResult r = store.held(0, 8191, &owners, &listed);
  EXPECT_EQ(listed, etcd.revision);
  ASSERT_EQ(r.status, StoreStatus::kOk) << r.error;
  EXPECT_EQ(owners.size(), etcd.kvs.size());
  EXPECT_LT(etcd.largest, size_t{1} << 20);
  // The server leases a free shard: the lowest, 1000.
  FakeHost host;
  LeaseSlot slot;
  slot.init();
  LeaseMachine machine(slot, host, pool(0, 8191), -1);
  (void)machine.step(store);
  ASSERT_EQ(static_cast<LeaseState>(slot.state.load()), LeaseState::kHeld) << machine.last_error();
  EXPECT_EQ(lease_word_first(slot.word.load()), 1000u);
}

TEST(EtcdStore, AClaimWhoseAnswerWasLostIsTakenBack) {
  FakeEtcd etcd;
  EtcdStore store(fake_settings(), etcd);
  FakeHost host;
  LeaseSlot slot;
  slot.init();
  LeaseMachine machine(slot, host, pool(0, 1), -1);
  etcd.lose_txn_answers = 1;
  host.now = machine.step(store);
  EXPECT_EQ(slot.word.load(), 0u);
  ASSERT_EQ(etcd.kvs.count(etcd_owner_key("/snowflake", 0)), 1u);  // the claim went through
  host.now = machine.step(store);
  ASSERT_EQ(static_cast<LeaseState>(slot.state.load()), LeaseState::kHeld) << machine.last_error();
  EXPECT_EQ(lease_word_first(slot.word.load()), 0u);
  EXPECT_EQ(etcd.kvs.count(etcd_owner_key("/snowflake", 1)), 0u);  // shard 1 stays free
}

TEST(EtcdStore, AMarkWriteFromBeforeALaterOneIsRefused) {
  FakeEtcd etcd;
  EtcdStore store(fake_settings(), etcd);
  int64_t lease = 0;
  ASSERT_EQ(store.grant(30, &lease).status, StoreStatus::kOk);
  StoredMark read;
  ASSERT_EQ(store.acquire(lease, 5, 2, etcd.revision, &read).status, StoreStatus::kOk);
  ASSERT_GT(read.revision, 0);
  const std::string key = etcd_mark_key("/snowflake", 6);
  // Two writes sent knowing the marks as read: the later, higher one lands first.
  StoredMark higher{1763000020000, 1577836800000}, lower{1763000010000, 1577836800000};
  higher.revision = lower.revision = read.revision;
  ASSERT_EQ(store.mark(lease, 5, 2, &higher).status, StoreStatus::kOk);
  EXPECT_GT(higher.revision, read.revision);
  const StoreResult late = store.mark(lease, 5, 2, &lower);
  EXPECT_EQ(late.status, StoreStatus::kTaken);
  EXPECT_EQ(lower.unix_ms, 1763000020000u);  // the mark as it stands, for the holder
  EXPECT_EQ(lower.revision, higher.revision);
  StoredMark stored;
  ASSERT_TRUE(etcd_parse_mark(etcd.kvs[key].value, &stored));
  EXPECT_EQ(stored.unix_ms, 1763000020000u);
  // Written again from the revision read, it goes through.
  StoredMark next{1763000030000, 1577836800000};
  next.revision = lower.revision;
  EXPECT_EQ(store.mark(lease, 5, 2, &next).status, StoreStatus::kOk);
  // Once the lease is gone, no mark is written.
  ASSERT_EQ(store.release(lease).status, StoreStatus::kOk);
  StoredMark after{1763000040000, 1577836800000};
  after.revision = next.revision;
  EXPECT_EQ(store.mark(lease, 5, 2, &after).status, StoreStatus::kLost);
}

namespace {

// The transactions held back reach etcd now: whether each went through.
std::vector<bool> land_held(FakeEtcd &etcd) {
  std::vector<bool> got;
  for (const json &req : etcd.held_txns) {
    EtcdResponse out;
    got.push_back(etcd.txn(req, &out).value("succeeded", false));
  }
  etcd.held_txns.clear();
  return got;
}

// A lease of another server holding shard, by a claim as the store sends it.
int64_t other_takes(FakeEtcd &etcd, uint32_t shard) {
  EtcdStore other(fake_settings(), etcd);
  int64_t lease = 0;
  EXPECT_EQ(other.grant(30, &lease).status, StoreStatus::kOk);
  StoredMark mark;
  EXPECT_EQ(other.acquire(lease, shard, 1, etcd.revision, &mark).status, StoreStatus::kOk);
  return lease;
}

void revoke(FakeEtcd &etcd, int64_t lease) {
  EtcdStore other(fake_settings(), etcd);
  EXPECT_EQ(other.release(lease).status, StoreStatus::kOk);
}

}  // namespace

TEST(EtcdStore, AClaimLandingAfterALaterOneIsRefused) {
  FakeEtcd etcd;
  EtcdStore store(fake_settings(), etcd);
  FakeHost host;
  LeaseSlot slot;
  slot.init();
  LeaseMachine machine(slot, host, pool(0, 1), -1);
  // The claim of shard 0 times out at one member, still on its way.
  etcd.hold_txns = 1;
  host.now = machine.step(store);
  ASSERT_EQ(etcd.held_txns.size(), 1u);
  // Meanwhile another server takes shard 0: the next try claims shard 1.
  const int64_t other = other_takes(etcd, 0);
  host.now = machine.step(store);
  ASSERT_EQ(static_cast<LeaseState>(slot.state.load()), LeaseState::kHeld) << machine.last_error();
  EXPECT_EQ(lease_word_first(slot.word.load()), 1u);
  // The other server leaves; then the old claim lands: refused, shard 0 stays free.
  revoke(etcd, other);
  EXPECT_EQ(land_held(etcd), std::vector<bool>{false});
  EXPECT_EQ(etcd.kvs.count(etcd_owner_key("/snowflake", 0)), 0u) << "shard 0 is pinned";
}

TEST(EtcdStore, AClaimLandingBeforeALaterOneMakesItsRangeTheOneTaken) {
  FakeEtcd etcd;
  EtcdStore store(fake_settings(), etcd);
  FakeHost host;
  LeaseSlot slot;
  slot.init();
  LeaseMachine machine(slot, host, pool(0, 1), -1);
  etcd.hold_txns = 1;
  host.now = machine.step(store);
  ASSERT_EQ(etcd.held_txns.size(), 1u);
  const int64_t other = other_takes(etcd, 0);
  // The next try lists the owners (shard 0 is the other's) and chooses shard 1; before its
  // claim, the other server leaves and the old claim of shard 0 lands.
  etcd.before_next_txn = [&] {
    revoke(etcd, other);
    EXPECT_EQ(land_held(etcd), std::vector<bool>{true});
  };
  host.now = machine.step(store);
  ASSERT_EQ(static_cast<LeaseState>(slot.state.load()), LeaseState::kHeld) << machine.last_error();
  // The claim of shard 1 was refused; the server found shard 0 its own, and holds it alone.
  EXPECT_EQ(lease_word_first(slot.word.load()), 0u);
  EXPECT_EQ(etcd.kvs.count(etcd_owner_key("/snowflake", 1)), 0u) << "shard 1 is pinned too";
}

TEST(EtcdStore, ALeaseIdOnAnotherHoldersKeysIsNotTakenBack) {
  FakeEtcd etcd;
  // etcd granted "our" lease id again, to another server (a member restarted with its clock
  // behind): its owner key of shard 3 names that server.
  const int64_t lease = etcd.next_lease++;
  etcd.leases.insert(lease);
  etcd.put(etcd_owner_key("/snowflake", 3), R"({"host":"db2","port":5432})", lease);
  EtcdStore store(fake_settings(), etcd);
  StoredMark mark;
  const StoreResult r = store.acquire(lease, 3, 1, etcd.revision, &mark);
  EXPECT_EQ(r.status, StoreStatus::kLost);
  EXPECT_NE(r.error.find("another holder"), std::string::npos) << r.error;
  // A worker restarted with that id as its known lease: it forgets it, without revoking it,
  // and leases a shard of its own.
  FakeHost host;
  LeaseSlot slot;
  slot.init();
  LeaseMachine machine(slot, host, pool(3, 4), -1, lease);
  for (int i = 0; i < 3 && slot.word.load() == 0; ++i) host.now = machine.step(store);
  ASSERT_EQ(static_cast<LeaseState>(slot.state.load()), LeaseState::kHeld) << machine.last_error();
  EXPECT_EQ(lease_word_first(slot.word.load()), 4u) << "the other server's shard was taken";
  EXPECT_NE(machine.lease(), lease);
  EXPECT_EQ(etcd.leases.count(lease), 1u);  // not revoked: it is the other server's
  EXPECT_EQ(etcd.kvs[etcd_owner_key("/snowflake", 3)].lease, lease);
}

TEST(EtcdStore, ALeaseIdGrantedAgainToAnotherServerIsNotResumed) {
  FakeEtcd etcd;
  EtcdStore ours(fake_settings(), etcd);
  FakeHost host;
  LeaseSlot slot;
  slot.init();
  LeaseSettings settings = pool(0, 0);
  LeaseMachine machine(slot, host, settings, -1);
  host.now = machine.step(ours);
  ASSERT_EQ(static_cast<LeaseState>(slot.state.load()), LeaseState::kHeld) << machine.last_error();
  const int64_t lease = machine.lease();
  // Cut off past lease_ttl: etcd expires the lease, and its owner key with it.
  host.now += (settings.ttl_ms + 1000) * 1000000;
  etcd.leases.erase(lease);
  for (auto it = etcd.kvs.begin(); it != etcd.kvs.end();)
    it = it->second.lease == lease ? etcd.kvs.erase(it) : std::next(it);
  // A member restarted with its clock behind grants the same id to another server, which
  // claims shard 0 and issues on it.
  etcd.next_lease = lease;
  EtcdSettings other_settings = fake_settings();
  other_settings.holder = R"({"host":"db2","port":5432})";
  EtcdStore other(other_settings, etcd);
  FakeHost other_host;
  LeaseSlot other_slot;
  other_slot.init();
  LeaseMachine other_machine(other_slot, other_host, settings, -1);
  (void)other_machine.step(other);
  ASSERT_EQ(other_machine.lease(), lease);
  ASSERT_EQ(static_cast<LeaseState>(other_slot.state.load()), LeaseState::kHeld);
  // Healed: the renewal of that id goes through, but the shard is the other server's now.
  for (int i = 0; i < 3; ++i) host.now = std::max(machine.step(ours), host.now + 1000000);
  EXPECT_EQ(slot.word.load(), 0u) << "the range of another server's lease was resumed";
  EXPECT_FALSE(slot.open_at(host.now));
  EXPECT_NE(static_cast<LeaseState>(slot.state.load()), LeaseState::kHeld);
  // Neither revoked nor written over: the other server's key and lease stand.
  EXPECT_EQ(etcd.leases.count(lease), 1u);
  EXPECT_EQ(etcd.kvs[etcd_owner_key("/snowflake", 0)].value, other_settings.holder);
}
