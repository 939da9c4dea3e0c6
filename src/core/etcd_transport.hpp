// How the lease store reaches etcd: a POST of a JSON body to a path of etcd's v3 JSON gateway
// (etcd 3.4 and later). HttpTransport does it with one blocking libcurl handle over the
// endpoints in turn (failover while a member cannot be reached or has no quorum), takes a
// token when authentication is on and a new one whenever etcd refuses the one it has (as
// clientv3's retry interceptor); every call is bounded in time and abandoned when abort()
// says so. Nothing here throws.
#pragma once
#include "core/pg_free.hpp"

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

// An answer of etcd's gateway.
struct EtcdResponse {
  long status = 0;
  std::string body;
};

// How the store reaches etcd: POST a JSON body to a gateway path. The store's own is libcurl
// over the endpoints, with failover and tokens; unit tests give canned answers.
class EtcdTransport {
 public:
  virtual ~EtcdTransport() = default;
  // false with *error when no endpoint answered.
  virtual bool call(const char *path, const std::string &body, EtcdResponse *out,
                    std::string *error) = 0;
};

class HttpTransport : public EtcdTransport {
 public:
  HttpTransport(EtcdSettings settings, std::function<bool()> abort);
  ~HttpTransport() override;
  HttpTransport(const HttpTransport &) = delete;
  HttpTransport &operator=(const HttpTransport &) = delete;

  void reconfigure(EtcdSettings settings);
  const std::string &endpoint() const noexcept { return endpoint_; }

  // POSTs body to path at the endpoint in use, then at the others in turn while they cannot
  // be reached; with authentication, a token is taken first, and again when etcd refuses it.
  // false with *error when no endpoint answered.
  bool call(const char *path, const std::string &body, EtcdResponse *out,
            std::string *error) override;

 private:
  bool post(const std::string &url, const char *path, const std::string &body, EtcdResponse *out,
            std::string *error, long timeout_ms);
  bool authenticate(const std::string &url, std::string *error, long timeout_ms);

  EtcdSettings settings_;
  std::function<bool()> abort_;
  void *curl_ = nullptr;
  size_t current_ = 0;
  std::string endpoint_;
  std::string token_;
};

}  // namespace snowflake
