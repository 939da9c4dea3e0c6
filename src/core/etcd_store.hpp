// The lease store on etcd, through its v3 JSON gateway (etcd 3.4 and later): one blocking
// libcurl handle, every request bounded in time and abandoned when abort() says so. Keys,
// under the fleet's prefix, with shard numbers in four digits so that a range of keys is a
// range of shards:
//   PREFIX/owner/NNNN  tied to the holder's lease (etcd deletes it with the lease); its value
//                      names the holder, for operators
//   PREFIX/mark/NNNN   no lease: no ID of the shard reached this time ({"unix_ms","epoch_ms"})
// Nothing here throws: every failure is a StoreResult with etcd's or libcurl's own words.
#pragma once
#include "core/pg_free.hpp"

#include "core/lease.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace snowflake {

struct EtcdSettings {
  std::vector<std::string> endpoints;  // http(s)://host:port, tried in turn
  std::string prefix = "/snowflake";
  std::string cafile, certfile, keyfile;  // TLS: the CA to trust, a client certificate
  std::string user, password;             // etcd authentication, when user is set
  long connect_timeout_ms = 1000;
  long request_timeout_ms = 2000;
  std::string holder;  // the owner keys' value
};

// "a, b,c" into its URLs; false (and *error) when one is not an http:// or https:// URL.
bool parse_endpoints(const std::string &text, std::vector<std::string> *out, std::string *error);

std::string base64_encode(const std::string &in);
bool base64_decode(const std::string &in, std::string *out);

std::string etcd_owner_key(const std::string &prefix, uint32_t shard);
std::string etcd_mark_key(const std::string &prefix, uint32_t shard);
// The first key past every key that starts with key (etcd's prefix range end).
std::string etcd_range_end(std::string key);

// The parts of etcd's answers that the lease uses, read from the JSON text (empty string and
// a false return when it is not what etcd sends).
bool etcd_parse_error(const std::string &body, std::string *message);
bool etcd_parse_lease_id(const std::string &body, int64_t *id, int64_t *ttl_s);
// A keepalive's answer: false if it is not one; *ttl_s is 0 when the lease is gone.
bool etcd_parse_keepalive(const std::string &body, int64_t *ttl_s);
bool etcd_parse_mark(const std::string &value, StoredMark *mark);
// Whether an answer says the request's token is no good, so that a new one must be taken
// and the request sent again: HTTP 401, or etcd's "invalid auth token", "revision of auth
// store is old" (any change to users or roles anywhere in the cluster makes every JWT token
// taken before it so: HTTP 400 through the gateway) or "user name is empty", whatever the
// status, as etcd's Go client does (clientv3's shouldRefreshToken).
bool etcd_token_refused(long status, const std::string &body);
std::string etcd_mark_value(const StoredMark &mark);

class EtcdStore : public LeaseStore {
 public:
  EtcdStore(EtcdSettings settings, std::function<bool()> abort);
  ~EtcdStore() override;
  EtcdStore(const EtcdStore &) = delete;
  EtcdStore &operator=(const EtcdStore &) = delete;

  void reconfigure(EtcdSettings settings);
  const std::string &endpoint() const noexcept { return endpoint_; }

  StoreResult grant(int64_t ttl_s, int64_t *lease) override;
  StoreResult held(uint32_t low, uint32_t high, std::vector<ShardOwner> *owners) override;
  StoreResult acquire(int64_t lease, uint32_t first, uint32_t count, StoredMark *mark) override;
  StoreResult renew(int64_t lease, int64_t *ttl_s) override;
  StoreResult mark(int64_t lease, uint32_t first, uint32_t count, StoredMark *mark) override;
  StoreResult release(int64_t lease) override;

 private:
  struct Response {
    long status = 0;
    std::string body;
  };
  // POSTs body to path at the endpoint in use, then at the others in turn while they cannot
  // be reached; with authentication, a token is taken first, and again when etcd says it
  // expired. false with *error when no endpoint answered.
  bool call(const char *path, const std::string &body, Response *out, std::string *error);
  bool post(const std::string &url, const char *path, const std::string &body, Response *out,
            std::string *error, long timeout_ms);
  bool authenticate(const std::string &url, std::string *error, long timeout_ms);
  // The answer to a range request over [from, to) (*body), or what went wrong, named what.
  StoreResult range(const char *what, const std::string &from, const std::string &to,
                    bool keys_only, std::string *body);

  EtcdSettings settings_;
  std::function<bool()> abort_;
  void *curl_ = nullptr;
  size_t current_ = 0;
  std::string endpoint_;
  std::string token_;
};

}  // namespace snowflake
