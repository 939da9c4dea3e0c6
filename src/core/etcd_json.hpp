// Pure conversions for etcd's v3 JSON gateway: base64, the keys' layout, and the parts of
// etcd's answers that the lease uses, read from their JSON text. No I/O.
#pragma once
#include "core/pg_free.hpp"

#include "core/lease.hpp"

#include <cstdint>
#include <string>

namespace snowflake {

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

}  // namespace snowflake
