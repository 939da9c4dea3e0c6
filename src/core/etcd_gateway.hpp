// What the etcd files share of the gateway's JSON (etcd_json, etcd_transport, etcd_store):
// included by their .cpp files alone, so that nlohmann-json stays out of the glue.
#pragma once
#include "core/pg_free.hpp"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace snowflake::etcd_gateway {

using json = nlohmann::json;

// etcd's gateway sends 64-bit integers as strings, and leaves out fields at their default.
inline bool json_int(const json &j, const char *key, int64_t *out) {
  auto it = j.find(key);
  if (it == j.end()) return false;
  if (it->is_number_integer()) {
    *out = it->get<int64_t>();
    return true;
  }
  if (!it->is_string()) return false;
  const std::string s = it->get<std::string>();
  if (s.empty()) return false;
  char *end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

// The first JSON object of a body (a streaming call's answer may carry more after it).
inline json parse_first(const std::string &body) {
  json j = json::parse(body, nullptr, false);
  if (!j.is_discarded()) return j;
  const size_t nl = body.find('\n');
  if (nl == std::string::npos) return j;
  return json::parse(body.substr(0, nl), nullptr, false);
}

}  // namespace snowflake::etcd_gateway
