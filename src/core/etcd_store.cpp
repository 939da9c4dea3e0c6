#include "core/etcd_store.hpp"

#include "core/etcd_gateway.hpp"

#include <string>

namespace snowflake {

using etcd_gateway::json;
using etcd_gateway::json_int;
using etcd_gateway::parse_first;

namespace {

constexpr const char *kLeaseNotFound = "requested lease not found";

// The highest of a range's marks, and any epoch among them other than its.
bool fold_marks(const json &kvs, StoredMark *mark) {
  *mark = StoredMark{};
  std::vector<StoredMark> marks;
  if (kvs.is_array())
    for (const json &kv : kvs) {
      std::string value;
      StoredMark m;
      if (!kv.is_object() || !kv.contains("value") || !kv["value"].is_string() ||
          !base64_decode(kv["value"].get<std::string>(), &value) || !etcd_parse_mark(value, &m))
        return false;
      marks.push_back(m);
    }
  for (const StoredMark &m : marks)
    if (m.unix_ms > mark->unix_ms) *mark = m;
  for (const StoredMark &m : marks)
    if (m.epoch_ms != mark->epoch_ms) mark->other_epoch_ms = m.epoch_ms;
  return true;
}

std::string lease_text(int64_t lease) { return std::to_string(lease); }

}  // namespace

EtcdStore::EtcdStore(EtcdSettings settings, std::function<bool()> abort)
    : prefix_(settings.prefix),
      holder_(settings.holder),
      http_(std::make_unique<HttpTransport>(std::move(settings), std::move(abort))),
      transport_(*http_) {}

EtcdStore::EtcdStore(EtcdSettings settings, EtcdTransport &transport)
    : prefix_(settings.prefix), holder_(settings.holder), transport_(transport) {}

void EtcdStore::reconfigure(EtcdSettings settings) {
  prefix_ = settings.prefix;
  holder_ = settings.holder;
  if (http_) http_->reconfigure(std::move(settings));
}

const std::string &EtcdStore::endpoint() const noexcept {
  static const std::string none;
  return http_ ? http_->endpoint() : none;
}

bool EtcdStore::call(const char *path, const std::string &body, EtcdResponse *out,
                     std::string *error) {
  return transport_.call(path, body, out, error);
}

namespace {

// An answer that is not 200 (or carries an error): etcd's message.
StoreResult answer_error(const char *what, long status, const std::string &body) {
  std::string message;
  if (!etcd_parse_error(body, &message)) message = "HTTP " + std::to_string(status);
  return StoreResult::failed(std::string(what) + ": " + message);
}

}  // namespace

StoreResult EtcdStore::grant(int64_t ttl_s, int64_t *lease) try {
  EtcdResponse r;
  std::string error;
  if (!call("/v3/lease/grant", json{{"TTL", std::to_string(ttl_s)}}.dump(), &r, &error))
    return StoreResult::failed(error);
  int64_t ttl = 0;
  if (r.status != 200 || !etcd_parse_lease_id(r.body, lease, &ttl))
    return answer_error("lease grant", r.status, r.body);
  return StoreResult::ok();
} catch (const json::exception &e) {
  return StoreResult::failed(std::string("lease grant: ") + e.what());
} catch (...) {
  return StoreResult::failed("lease grant: out of memory");
}

StoreResult EtcdStore::range(const char *what, const std::string &from, const std::string &to,
                             bool keys_only, int64_t limit, std::string *body, int64_t revision) {
  json req = {{"key", base64_encode(from)}, {"range_end", base64_encode(to)}};
  if (keys_only) req["keys_only"] = true;
  if (limit > 0) req["limit"] = std::to_string(limit);
  if (revision > 0) req["revision"] = std::to_string(revision);
  EtcdResponse r;
  std::string error;
  if (!call("/v3/kv/range", req.dump(), &r, &error)) return StoreResult::failed(error);
  const json j = parse_first(r.body);
  if (r.status != 200 || !j.is_object() || j.contains("error"))
    return answer_error(what, r.status, r.body);
  *body = std::move(r.body);
  return StoreResult::ok();
}

namespace {

// The key-values of a range's answer (etcd leaves the field out when there are none).
json kvs_of(const std::string &body) {
  const json j = parse_first(body);
  return j.contains("kvs") && j["kvs"].is_array() ? j["kvs"] : json::array();
}

}  // namespace

StoreResult EtcdStore::held(uint32_t low, uint32_t high, std::vector<ShardOwner> *owners,
                            int64_t *revision) try {
  *revision = 0;
  const std::string head = prefix_ + "/owner/";
  const std::string to = etcd_owner_key(prefix_, high + 1);
  std::string from = etcd_owner_key(prefix_, low);
  // Page by page: every owner key of a large pool in one answer would pass the 1 MiB an
  // answer may take (about 7,500 keys), and every claim of every server would fail.
  const uint32_t pages = (high - low + 1) / kOwnerKeysPerPage + 2;
  for (uint32_t page = 0;; ++page) {
    if (page == pages)
      return StoreResult::failed("range of owner keys: etcd answers more pages than keys");
    std::string body;
    // Every page as of the first one's revision: one listing, never keys of two moments.
    const StoreResult r = range("range of owner keys", from, to, true, kOwnerKeysPerPage, &body,
                                page == 0 ? 0 : *revision);
    if (r.status != StoreStatus::kOk) return r;
    std::string last;
    for (const json &kv : kvs_of(body)) {
      std::string key;
      if (!kv.is_object() || !kv.contains("key") || !kv["key"].is_string() ||
          !base64_decode(kv["key"].get<std::string>(), &key))
        continue;
      last = key;
      if (key.rfind(head, 0) != 0) continue;
      const std::string digits = key.substr(head.size());
      if (digits.size() != 4 || digits.find_first_not_of("0123456789") != std::string::npos)
        continue;
      int64_t lease = 0;  // keys_only leaves the lease in (etcd clears the value alone)
      (void)json_int(kv, "lease", &lease);
      owners->push_back({static_cast<uint32_t>(std::stoul(digits)), lease});
    }
    const json j = parse_first(body);
    // The first page's: a claim of this lease after it fences the claim chosen from the list.
    if (page == 0 && j.contains("header") && j["header"].is_object())
      (void)json_int(j["header"], "revision", revision);
    if (!j.value("more", false)) break;
    if (last.empty())
      return StoreResult::failed("range of owner keys: more, but no key, in etcd's answer");
    from = last + std::string(1, '\0');  // the first key after the last one read
  }
  return StoreResult::ok();
} catch (const json::exception &e) {
  return StoreResult::failed(std::string("range of owner keys: ") + e.what());
} catch (...) {
  return StoreResult::failed("range of owner keys: out of memory");
}

namespace {

// The revision an answer was read or written at (its header's).
int64_t header_revision(const json &j) {
  int64_t revision = 0;
  if (j.contains("header") && j["header"].is_object())
    (void)json_int(j["header"], "revision", &revision);
  return revision;
}

// The key-values of the i-th answer of a transaction, when it is a range.
json txn_kvs(const json &j, size_t i) {
  if (!j.contains("responses") || !j["responses"].is_array() || j["responses"].size() <= i)
    return json::array();
  const json &r = j["responses"][i];
  return r.contains("response_range") && r["response_range"].contains("kvs")
             ? r["response_range"]["kvs"]
             : json::array();
}

// How many of the owner keys carry lease, and how many another; *foreign, how many carry
// lease but name another holder than holder (when holder is not empty: the value is read).
void count_owners(const json &kvs, int64_t lease, const std::string &holder, uint32_t *ours,
                  uint32_t *others, uint32_t *foreign = nullptr) {
  *ours = *others = 0;
  if (foreign != nullptr) *foreign = 0;
  if (!kvs.is_array()) return;
  for (const json &kv : kvs) {
    int64_t owner = 0;
    if (kv.is_object() && json_int(kv, "lease", &owner) && owner == lease) {
      ++*ours;
      std::string value;
      if (foreign != nullptr &&
          !(kv.contains("value") && kv["value"].is_string() &&
            base64_decode(kv["value"].get<std::string>(), &value) && value == holder))
        ++*foreign;
    } else {
      ++*others;
    }
  }
}

// The two reads a compare that failed answers with: the range's owner keys, then its marks.
json range_reads(const std::string &prefix, uint32_t first, uint32_t count) {
  return json::array({{{"request_range",
                        {{"key", base64_encode(etcd_owner_key(prefix, first))},
                         {"range_end", base64_encode(etcd_owner_key(prefix, first + count))}}}},
                      {{"request_range",
                        {{"key", base64_encode(etcd_mark_key(prefix, first))},
                         {"range_end", base64_encode(etcd_mark_key(prefix, first + count))}}}}});
}

}  // namespace

StoreResult EtcdStore::acquire(int64_t lease, uint32_t first, uint32_t count, int64_t listed,
                               StoredMark *mark) try {
  json compare = json::array(), success = json::array();
  const std::string holder = base64_encode(holder_);
  for (uint32_t s = first; s < first + count; ++s) {
    const std::string key = base64_encode(etcd_owner_key(prefix_, s));
    compare.push_back({{"key", key}, {"target", "CREATE"}, {"create_revision", "0"}});
    success.push_back(
        {{"request_put", {{"key", key}, {"value", holder}, {"lease", lease_text(lease)}}}});
  }
  // No claim of this lease went through after the listing this one was chosen from.
  const std::string claim = base64_encode(prefix_ + "/claim/" + lease_text(lease));
  compare.push_back({{"key", claim},
                     {"target", "MOD"},
                     {"result", "LESS"},
                     {"mod_revision", std::to_string(listed + 1)}});
  success.push_back(
      {{"request_put", {{"key", claim}, {"value", ""}, {"lease", lease_text(lease)}}}});
  success.push_back(range_reads(prefix_, first, count)[1]);
  const json req = {
      {"compare", compare}, {"success", success}, {"failure", range_reads(prefix_, first, count)}};
  EtcdResponse r;
  std::string error;
  if (!call("/v3/kv/txn", req.dump(), &r, &error)) return StoreResult::failed(error);
  std::string message;
  if (etcd_parse_error(r.body, &message) && message.find(kLeaseNotFound) != std::string::npos)
    return StoreResult::lost();
  const json j = parse_first(r.body);
  if (r.status != 200 || !j.is_object() || j.contains("error"))
    return answer_error("claim of shards", r.status, r.body);
  json marks;
  if (j.value("succeeded", false)) {
    if (!j.contains("responses") || !j["responses"].is_array() ||
        j["responses"].size() != count + 2)
      return StoreResult::failed("claim of shards: etcd's answer has no range of marks");
    marks = txn_kvs(j, count + 1);
  } else {
    // Taken; or ours already: by this very claim whose answer was lost on the way, or by the
    // lease a previous worker of this server held.
    uint32_t ours = 0, others = 0, foreign = 0;
    count_owners(txn_kvs(j, 0), lease, holder_, &ours, &others, &foreign);
    // Our lease's id on keys that name another holder: etcd granted that id again (a member
    // restarted with its clock behind), and the lease is another server's. Not ours to take
    // back, nor to revoke: forgotten.
    if (foreign != 0)
      return {StoreStatus::kLost, "lease " + lease_text(lease) +
                                      " holds shards in etcd under another holder's name: "
                                      "forgotten, not taken back"};
    if (ours != count) return StoreResult::taken();
    marks = txn_kvs(j, 1);
  }
  if (!fold_marks(marks, mark))
    return StoreResult::failed("a mark under " + prefix_ +
                               "/mark/ is not one this extension wrote");
  mark->revision = header_revision(j);
  return StoreResult::ok();
} catch (const json::exception &e) {
  return StoreResult::failed(std::string("claim of shards: ") + e.what());
} catch (...) {
  return StoreResult::failed("claim of shards: out of memory");
}

StoreResult EtcdStore::renew(int64_t lease, int64_t *ttl_s) try {
  EtcdResponse r;
  std::string error;
  if (!call("/v3/lease/keepalive", json{{"ID", lease_text(lease)}}.dump(), &r, &error))
    return StoreResult::failed(error);
  if (r.status != 200 || !etcd_parse_keepalive(r.body, ttl_s))
    return answer_error("lease keepalive", r.status, r.body);
  return *ttl_s > 0 ? StoreResult::ok() : StoreResult::lost();
} catch (const json::exception &e) {
  return StoreResult::failed(std::string("lease keepalive: ") + e.what());
} catch (...) {
  return StoreResult::failed("lease keepalive: out of memory");
}

StoreResult EtcdStore::mark(int64_t lease, uint32_t first, uint32_t count, StoredMark *m) try {
  json compare = json::array(), success = json::array();
  const std::string value = base64_encode(etcd_mark_value(*m));
  // Fenced twice: every owner key still carries the lease, and no mark changed after the
  // revision the marks were last read or written at (a missing key's is 0). A write whose
  // answer was lost and that lands late finds the later write's revision, and is refused.
  const std::string below = std::to_string(m->revision + 1);
  for (uint32_t s = first; s < first + count; ++s) {
    compare.push_back({{"key", base64_encode(etcd_owner_key(prefix_, s))},
                       {"target", "LEASE"},
                       {"lease", lease_text(lease)}});
    compare.push_back({{"key", base64_encode(etcd_mark_key(prefix_, s))},
                       {"target", "MOD"},
                       {"result", "LESS"},
                       {"mod_revision", below}});
    success.push_back(
        {{"request_put", {{"key", base64_encode(etcd_mark_key(prefix_, s))}, {"value", value}}}});
  }
  const json req = {
      {"compare", compare}, {"success", success}, {"failure", range_reads(prefix_, first, count)}};
  EtcdResponse r;
  std::string error;
  if (!call("/v3/kv/txn", req.dump(), &r, &error)) return StoreResult::failed(error);
  const json j = parse_first(r.body);
  if (r.status != 200 || !j.is_object() || j.contains("error"))
    return answer_error("write of the mark", r.status, r.body);
  if (j.value("succeeded", false)) {
    m->revision = header_revision(j);
    return StoreResult::ok();
  }
  uint32_t ours = 0, others = 0;
  count_owners(txn_kvs(j, 0), lease, holder_, &ours, &others);
  if (ours != count) return StoreResult::lost();
  StoredMark stored;
  if (!fold_marks(txn_kvs(j, 1), &stored))
    return StoreResult::failed("a mark under " + prefix_ +
                               "/mark/ is not one this extension wrote");
  stored.revision = header_revision(j);
  *m = stored;
  return StoreResult::taken();
} catch (const json::exception &e) {
  return StoreResult::failed(std::string("write of the mark: ") + e.what());
} catch (...) {
  return StoreResult::failed("write of the mark: out of memory");
}

StoreResult EtcdStore::owned(int64_t lease, uint32_t first, uint32_t count) try {
  std::string body;
  const StoreResult r = range("range of owner keys", etcd_owner_key(prefix_, first),
                              etcd_owner_key(prefix_, first + count), false, 0, &body);
  if (r.status != StoreStatus::kOk) return r;
  uint32_t ours = 0, others = 0, foreign = 0;
  count_owners(kvs_of(body), lease, holder_, &ours, &others, &foreign);
  return ours == count && foreign == 0 ? StoreResult::ok() : StoreResult::lost();
} catch (const json::exception &e) {
  return StoreResult::failed(std::string("range of owner keys: ") + e.what());
} catch (...) {
  return StoreResult::failed("range of owner keys: out of memory");
}

StoreResult EtcdStore::release(int64_t lease) try {
  EtcdResponse r;
  std::string error;
  if (!call("/v3/lease/revoke", json{{"ID", lease_text(lease)}}.dump(), &r, &error))
    return StoreResult::failed(error);
  std::string message;
  if (r.status == 200 && !etcd_parse_error(r.body, &message)) return StoreResult::ok();
  if (etcd_parse_error(r.body, &message) && message.find(kLeaseNotFound) != std::string::npos)
    return StoreResult::ok();  // gone already
  return answer_error("lease revoke", r.status, r.body);
} catch (const json::exception &e) {
  return StoreResult::failed(std::string("lease revoke: ") + e.what());
} catch (...) {
  return StoreResult::failed("lease revoke: out of memory");
}

}  // namespace snowflake
