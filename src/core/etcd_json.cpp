#include "core/etcd_json.hpp"

#include "core/etcd_gateway.hpp"

#include <cstdio>

namespace snowflake {

using etcd_gateway::json;
using etcd_gateway::json_int;
using etcd_gateway::parse_first;

namespace {

std::string four_digits(uint32_t shard) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04u", shard);
  return buf;
}

}  // namespace

std::string base64_encode(const std::string &in) {
  static const char *abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t v =
        (uint32_t(uint8_t(in[i])) << 16) | (uint32_t(uint8_t(in[i + 1])) << 8) | uint8_t(in[i + 2]);
    out += abc[v >> 18];
    out += abc[(v >> 12) & 63];
    out += abc[(v >> 6) & 63];
    out += abc[v & 63];
  }
  if (i + 1 == in.size()) {
    const uint32_t v = uint32_t(uint8_t(in[i])) << 16;
    out += abc[v >> 18];
    out += abc[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    const uint32_t v = (uint32_t(uint8_t(in[i])) << 16) | (uint32_t(uint8_t(in[i + 1])) << 8);
    out += abc[v >> 18];
    out += abc[(v >> 12) & 63];
    out += abc[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

bool base64_decode(const std::string &in, std::string *out) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (in.size() % 4 != 0) return false;
  out->clear();
  for (size_t i = 0; i < in.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = in[i + k];
      if (c == '=' && i + 4 == in.size() && k >= 2) {
        v[k] = 0;
        ++pad;
      } else {
        if (pad) return false;
        v[k] = value(c);
        if (v[k] < 0) return false;
      }
    }
    const uint32_t x =
        (uint32_t(v[0]) << 18) | (uint32_t(v[1]) << 12) | (uint32_t(v[2]) << 6) | uint32_t(v[3]);
    out->push_back(char(x >> 16));
    if (pad < 2) out->push_back(char((x >> 8) & 255));
    if (pad < 1) out->push_back(char(x & 255));
  }
  return true;
}

std::string etcd_owner_key(const std::string &prefix, uint32_t shard) {
  return prefix + "/owner/" + four_digits(shard);
}

std::string etcd_mark_key(const std::string &prefix, uint32_t shard) {
  return prefix + "/mark/" + four_digits(shard);
}

std::string etcd_range_end(std::string key) {
  for (size_t i = key.size(); i-- > 0;) {
    if (uint8_t(key[i]) < 0xff) {
      key[i] = char(uint8_t(key[i]) + 1);
      key.resize(i + 1);
      return key;
    }
  }
  return std::string(1, '\0');  // every key
}

bool etcd_parse_error(const std::string &body, std::string *message) {
  const json j = parse_first(body);
  if (!j.is_object()) return false;
  for (const char *key : {"error", "message", "Error"}) {
    auto it = j.find(key);
    if (it == j.end()) continue;
    if (it->is_string()) {
      *message = it->get<std::string>();
      return true;
    }
    if (it->is_object() && it->contains("message") && (*it)["message"].is_string()) {
      *message = (*it)["message"].get<std::string>();  // a streaming call's error
      return true;
    }
  }
  return false;
}

bool etcd_parse_lease_id(const std::string &body, int64_t *id, int64_t *ttl_s) {
  const json j = parse_first(body);
  if (!j.is_object()) return false;
  return json_int(j, "ID", id) && json_int(j, "TTL", ttl_s) && *id != 0 && *ttl_s > 0;
}

bool etcd_parse_keepalive(const std::string &body, int64_t *ttl_s) {
  const json j = parse_first(body);
  if (!j.is_object() || !j.contains("result") || !j["result"].is_object()) return false;
  *ttl_s = 0;
  int64_t ttl = 0;
  if (json_int(j["result"], "TTL", &ttl) && ttl > 0) *ttl_s = ttl;
  return true;
}

bool etcd_parse_mark(const std::string &value, StoredMark *mark) {
  const json j = json::parse(value, nullptr, false);
  if (!j.is_object()) return false;
  int64_t unix_ms, epoch;
  if (!json_int(j, "unix_ms", &unix_ms) || !json_int(j, "epoch_ms", &epoch) || unix_ms <= 0 ||
      epoch < 0)
    return false;
  mark->unix_ms = static_cast<uint64_t>(unix_ms);
  mark->epoch_ms = static_cast<uint64_t>(epoch);
  return true;
}

bool etcd_token_refused(long status, const std::string &body) {
  if (status == 401) return true;
  std::string message;
  if (!etcd_parse_error(body, &message)) return false;
  for (const char *refusal :
       {"etcdserver: invalid auth token", "etcdserver: revision of auth store is old",
        "etcdserver: user name is empty"})
    if (message.find(refusal) != std::string::npos) return true;
  return false;
}

std::string etcd_mark_value(const StoredMark &mark) {
  return "{\"unix_ms\":" + std::to_string(mark.unix_ms) +
         ",\"epoch_ms\":" + std::to_string(mark.epoch_ms) + "}";
}

}  // namespace snowflake
