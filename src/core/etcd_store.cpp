#include "core/etcd_store.hpp"

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace snowflake {

using json = nlohmann::json;

namespace {

constexpr size_t kMaxResponse = 1 << 20;  // etcd's answers here are a few hundred bytes
constexpr const char *kLeaseNotFound = "requested lease not found";

std::string trim(const std::string &s) {
  const size_t b = s.find_first_not_of(" \t\n\r");
  if (b == std::string::npos) return {};
  const size_t e = s.find_last_not_of(" \t\n\r");
  return s.substr(b, e - b + 1);
}

// etcd's gateway sends 64-bit integers as strings, and leaves out fields at their default.
bool json_int(const json &j, const char *key, int64_t *out) {
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
json parse_first(const std::string &body) {
  json j = json::parse(body, nullptr, false);
  if (!j.is_discarded()) return j;
  const size_t nl = body.find('\n');
  if (nl == std::string::npos) return j;
  return json::parse(body.substr(0, nl), nullptr, false);
}

size_t append_body(char *data, size_t size, size_t n, void *out) noexcept {
  std::string &body = *static_cast<std::string *>(out);
  if (body.size() + size * n > kMaxResponse) return 0;  // too large: fails the transfer
  try {
    body.append(data, size * n);
  } catch (...) {
    return 0;  // no memory: fails the transfer (nothing may unwind through libcurl)
  }
  return size * n;
}

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

int abort_check(void *abort, curl_off_t, curl_off_t, curl_off_t, curl_off_t) noexcept {
  const auto &fn = *static_cast<std::function<bool()> *>(abort);
  return fn && fn() ? 1 : 0;
}

// A streaming call (a keepalive) answers 200 and puts a member's failure in the body.
bool member_failed(const std::string &body) {
  const json j = parse_first(body);
  if (!j.is_object() || !j.contains("error") || !j["error"].is_object()) return false;
  const json &e = j["error"];
  return e.contains("http_code") && e["http_code"].is_number_integer() &&
         e["http_code"].get<int>() >= 500;
}

std::string four_digits(uint32_t shard) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04u", shard);
  return buf;
}

std::string lease_text(int64_t lease) { return std::to_string(lease); }

}  // namespace

bool parse_endpoints(const std::string &text, std::vector<std::string> *out, std::string *error) {
  out->clear();
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    std::string url = trim(text.substr(pos, comma - pos));
    pos = comma + 1;
    if (url.empty()) continue;
    if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
      *error = "\"" + url + "\" is not an http:// or https:// URL";
      return false;
    }
    const size_t host = url.find("://") + 3;
    if (host >= url.size() || url[host] == '/') {
      *error = "\"" + url + "\" names no host";
      return false;
    }
    while (!url.empty() && url.back() == '/') url.pop_back();
    out->push_back(url);
  }
  return true;
}

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

EtcdStore::EtcdStore(EtcdSettings settings, std::function<bool()> abort)
    : settings_(std::move(settings)), abort_(std::move(abort)) {
  static bool curl_ready = false;
  if (!curl_ready) curl_ready = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  curl_ = curl_easy_init();
}

EtcdStore::~EtcdStore() {
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL *>(curl_));
}

void EtcdStore::reconfigure(EtcdSettings settings) {
  settings_ = std::move(settings);
  current_ = 0;
  token_.clear();
  endpoint_.clear();
  // Certificates or endpoints may have changed: no connection is kept from before.
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL *>(curl_));
  curl_ = curl_easy_init();
}

bool EtcdStore::post(const std::string &url, const char *path, const std::string &body,
                     Response *out, std::string *error, long timeout_ms) {
  CURL *curl = static_cast<CURL *>(curl_);
  if (curl == nullptr) {
    *error = "libcurl could not be initialised";
    return false;
  }
  curl_easy_reset(curl);
  out->body.clear();
  const std::string full = url + path;
  struct curl_slist *headers = curl_slist_append(nullptr, "Content-Type: application/json");
  std::string auth;
  if (!token_.empty() && std::strcmp(path, "/v3/auth/authenticate") != 0) {
    auth = "Authorization: " + token_;
    headers = curl_slist_append(headers, auth.c_str());
  }
  char curl_error[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(curl, CURLOPT_URL, full.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   std::min(settings_.connect_timeout_ms, timeout_ms));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
  // Straight to etcd: never through a proxy named in the server's environment.
  curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &out->body);
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, abort_check);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &abort_);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_error);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  if (!settings_.cafile.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, settings_.cafile.c_str());
  if (!settings_.certfile.empty())
    curl_easy_setopt(curl, CURLOPT_SSLCERT, settings_.certfile.c_str());
  if (!settings_.keyfile.empty()) curl_easy_setopt(curl, CURLOPT_SSLKEY, settings_.keyfile.c_str());
  const CURLcode rc = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  if (rc != CURLE_OK) {
    *error = url + ": " + (curl_error[0] != '\0' ? curl_error : curl_easy_strerror(rc));
    return false;
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &out->status);
  return true;
}

bool EtcdStore::authenticate(const std::string &url, std::string *error, long timeout_ms) {
  token_.clear();
  std::string body;
  try {
    body = json{{"name", settings_.user}, {"password", settings_.password}}.dump();
  } catch (const json::exception &) {
    *error = "snowflake.etcd_user or the password is not valid UTF-8";
    return false;
  }
  Response r;
  if (!post(url, "/v3/auth/authenticate", body, &r, error, timeout_ms)) return false;
  const json j = parse_first(r.body);
  if (r.status == 200 && j.is_object() && j.contains("token") && j["token"].is_string()) {
    token_ = j["token"].get<std::string>();
    return true;
  }
  std::string message;
  // etcd's own words, never the request: it holds the password.
  *error = url + ": authentication as \"" + settings_.user + "\" failed: " +
           (etcd_parse_error(r.body, &message) ? message : "HTTP " + std::to_string(r.status));
  return false;
}

bool EtcdStore::call(const char *path, const std::string &body, Response *out, std::string *error) {
  if (settings_.endpoints.empty()) {
    *error = "snowflake.etcd_endpoints is empty";
    return false;
  }
  std::string errors;
  // One request timeout for the whole call, every request of it included: a hung member costs
  // one call, and the next call starts at the member after it.
  const auto started = std::chrono::steady_clock::now();
  auto left_ms = [&] {
    const long spent = static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                             std::chrono::steady_clock::now() - started)
                                             .count());
    return std::max(settings_.request_timeout_ms - spent, 100L);
  };
  for (size_t tried = 0; tried < settings_.endpoints.size(); ++tried) {
    if (abort_ && abort_()) break;
    if (tried > 0 && std::chrono::steady_clock::now() - started >=
                         std::chrono::milliseconds(settings_.request_timeout_ms))
      break;
    const size_t i = (current_ + tried) % settings_.endpoints.size();
    const std::string &url = settings_.endpoints[i];
    std::string err;
    bool ok = settings_.user.empty() || !token_.empty() || authenticate(url, &err, left_ms());
    if (ok) ok = post(url, path, body, out, &err, left_ms());
    // A token etcd no longer takes (expired, or older than a change to users or roles): take
    // a new one, once.
    if (ok && !settings_.user.empty() && etcd_token_refused(out->status, out->body)) {
      ok = authenticate(url, &err, left_ms()) && post(url, path, body, out, &err, left_ms());
    }
    // A member without a leader or quorum answers 503 (a streaming call: 200, with the 503 in
    // its body): another may have one.
    if (ok && out->status < 500 && !member_failed(out->body)) {
      current_ = i;
      endpoint_ = url;
      return true;
    }
    if (ok) {
      std::string message;
      err =
          url + ": " +
          (etcd_parse_error(out->body, &message) ? message : "HTTP " + std::to_string(out->status));
    }
    token_.clear();  // a token is a member's own until the next authentication
    current_ = (i + 1) % settings_.endpoints.size();
    if (!errors.empty()) errors += "; ";
    errors += err;
  }
  *error = errors.empty() ? std::string("interrupted") : errors;
  return false;
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
  Response r;
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
                             bool keys_only, std::string *body) {
  json req = {{"key", base64_encode(from)}, {"range_end", base64_encode(to)}};
  if (keys_only) req["keys_only"] = true;
  Response r;
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

StoreResult EtcdStore::held(uint32_t low, uint32_t high, std::vector<ShardOwner> *owners) try {
  std::string body;
  const StoreResult r = range("range of owner keys", etcd_owner_key(settings_.prefix, low),
                              etcd_owner_key(settings_.prefix, high + 1), true, &body);
  if (r.status != StoreStatus::kOk) return r;
  const std::string head = settings_.prefix + "/owner/";
  for (const json &kv : kvs_of(body)) {
    std::string key;
    if (!kv.is_object() || !kv.contains("key") || !kv["key"].is_string() ||
        !base64_decode(kv["key"].get<std::string>(), &key) || key.rfind(head, 0) != 0)
      continue;
    const std::string digits = key.substr(head.size());
    if (digits.size() != 4 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    int64_t lease = 0;  // keys_only leaves the lease in (etcd clears the value alone)
    (void)json_int(kv, "lease", &lease);
    owners->push_back({static_cast<uint32_t>(std::stoul(digits)), lease});
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

// How many of the owner keys carry lease, and how many another.
void count_owners(const json &kvs, int64_t lease, uint32_t *ours, uint32_t *others) {
  *ours = *others = 0;
  if (!kvs.is_array()) return;
  for (const json &kv : kvs) {
    int64_t owner = 0;
    if (kv.is_object() && json_int(kv, "lease", &owner) && owner == lease)
      ++*ours;
    else
      ++*others;
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

StoreResult EtcdStore::acquire(int64_t lease, uint32_t first, uint32_t count,
                               StoredMark *mark) try {
  json compare = json::array(), success = json::array();
  const std::string holder = base64_encode(settings_.holder);
  for (uint32_t s = first; s < first + count; ++s) {
    const std::string key = base64_encode(etcd_owner_key(settings_.prefix, s));
    compare.push_back({{"key", key}, {"target", "CREATE"}, {"create_revision", "0"}});
    success.push_back(
        {{"request_put", {{"key", key}, {"value", holder}, {"lease", lease_text(lease)}}}});
  }
  success.push_back(range_reads(settings_.prefix, first, count)[1]);
  const json req = {{"compare", compare},
                    {"success", success},
                    {"failure", range_reads(settings_.prefix, first, count)}};
  Response r;
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
        j["responses"].size() != count + 1)
      return StoreResult::failed("claim of shards: etcd's answer has no range of marks");
    marks = txn_kvs(j, count);
  } else {
    // Taken; or ours already: by this very claim whose answer was lost on the way, or by the
    // lease a previous worker of this server held.
    uint32_t ours = 0, others = 0;
    count_owners(txn_kvs(j, 0), lease, &ours, &others);
    if (ours != count) return StoreResult::taken();
    marks = txn_kvs(j, 1);
  }
  if (!fold_marks(marks, mark))
    return StoreResult::failed("a mark under " + settings_.prefix +
                               "/mark/ is not one this extension wrote");
  mark->revision = header_revision(j);
  return StoreResult::ok();
} catch (const json::exception &e) {
  return StoreResult::failed(std::string("claim of shards: ") + e.what());
} catch (...) {
  return StoreResult::failed("claim of shards: out of memory");
}

StoreResult EtcdStore::renew(int64_t lease, int64_t *ttl_s) try {
  Response r;
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
    compare.push_back({{"key", base64_encode(etcd_owner_key(settings_.prefix, s))},
                       {"target", "LEASE"},
                       {"lease", lease_text(lease)}});
    compare.push_back({{"key", base64_encode(etcd_mark_key(settings_.prefix, s))},
                       {"target", "MOD"},
                       {"result", "LESS"},
                       {"mod_revision", below}});
    success.push_back(
        {{"request_put",
          {{"key", base64_encode(etcd_mark_key(settings_.prefix, s))}, {"value", value}}}});
  }
  const json req = {{"compare", compare},
                    {"success", success},
                    {"failure", range_reads(settings_.prefix, first, count)}};
  Response r;
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
  count_owners(txn_kvs(j, 0), lease, &ours, &others);
  if (ours != count) return StoreResult::lost();
  StoredMark stored;
  if (!fold_marks(txn_kvs(j, 1), &stored))
    return StoreResult::failed("a mark under " + settings_.prefix +
                               "/mark/ is not one this extension wrote");
  stored.revision = header_revision(j);
  *m = stored;
  return StoreResult::taken();
} catch (const json::exception &e) {
  return StoreResult::failed(std::string("write of the mark: ") + e.what());
} catch (...) {
  return StoreResult::failed("write of the mark: out of memory");
}

StoreResult EtcdStore::release(int64_t lease) try {
  Response r;
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
