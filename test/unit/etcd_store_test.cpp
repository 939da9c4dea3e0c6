// Unit tests of what the etcd store reads and writes (etcd_store.hpp): keys, base64, the
// endpoint list, and etcd's answers as its JSON gateway sends them (etcd 3.4 and 3.5).
#include "core/etcd_store.hpp"

#include <gtest/gtest.h>

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
