#include "core/etcd_transport.hpp"

#include "core/etcd_gateway.hpp"
#include "core/etcd_json.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cstring>

namespace snowflake {

using etcd_gateway::json;
using etcd_gateway::parse_first;

namespace {

constexpr size_t kMaxResponse = 1 << 20;  // etcd's answers here: a few hundred bytes, or a page

std::string trim(const std::string &s) {
  const size_t b = s.find_first_not_of(" \t\n\r");
  if (b == std::string::npos) return {};
  const size_t e = s.find_last_not_of(" \t\n\r");
  return s.substr(b, e - b + 1);
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

HttpTransport::HttpTransport(EtcdSettings settings, std::function<bool()> abort)
    : settings_(std::move(settings)), abort_(std::move(abort)) {
  static bool curl_ready = false;
  if (!curl_ready) curl_ready = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  curl_ = curl_easy_init();
}

HttpTransport::~HttpTransport() {
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL *>(curl_));
}

void HttpTransport::reconfigure(EtcdSettings settings) {
  settings_ = std::move(settings);
  current_ = 0;
  token_.clear();
  endpoint_.clear();
  // Certificates or endpoints may have changed: no connection is kept from before.
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL *>(curl_));
  curl_ = curl_easy_init();
}

bool HttpTransport::post(const std::string &url, const char *path, const std::string &body,
                         EtcdResponse *out, std::string *error, long timeout_ms) {
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

bool HttpTransport::authenticate(const std::string &url, std::string *error, long timeout_ms) {
  token_.clear();
  std::string body;
  try {
    body = json{{"name", settings_.user}, {"password", settings_.password}}.dump();
  } catch (const json::exception &) {
    *error = "snowflake.etcd_user or the password is not valid UTF-8";
    return false;
  }
  EtcdResponse r;
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

bool HttpTransport::call(const char *path, const std::string &body, EtcdResponse *out,
                         std::string *error) {
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

}  // namespace snowflake
