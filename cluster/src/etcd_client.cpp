// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/cluster/etcd_client.hpp"
#include "vod/cluster/etcd_url.hpp"

#include <curl/curl.h>
#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>

namespace vod::cluster {

namespace {

using nlohmann::json;
constexpr std::size_t kMaxResponse = 16u << 20;  // a range of many records; more is refused

std::string int_text(std::int64_t v) { return std::to_string(v); }

// The gateway writes 64-bit numbers as strings; absent means 0 (proto3's JSON mapping).
std::int64_t json_int(const json& j, const char* field) {
  const auto it = j.find(field);
  if (it == j.end()) return 0;
  if (it->is_number_integer()) return it->get<std::int64_t>();
  if (it->is_string()) return std::stoll(it->get<std::string>());
  throw EtcdError(std::string("etcd answered a non-number '") + field + "'");
}

}  // namespace

namespace {

json parse_answer(const char* call, const std::string& body) {
  json j = json::parse(body, nullptr, false);
  if (!j.is_object()) throw EtcdError(std::string(call) + ": etcd's answer is not a JSON object");
  return j;
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::string base64_decode(std::string_view text) {
  if (text.size() % 4) throw EtcdError("etcd sent a key or value that is not base64");
  std::string out(3 * text.size() / 4, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()), reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) throw EtcdError("etcd sent a key or value that is not base64");
  // EVP_DecodeBlock counts the padding's bytes as data: take them off.
  std::size_t length = static_cast<std::size_t>(n);
  if (!text.empty() && text.back() == '=') --length;
  if (text.size() > 1 && text[text.size() - 2] == '=') --length;
  out.resize(length);
  return out;
}

std::string prefix_end(std::string prefix) {
  while (!prefix.empty()) {
    if (static_cast<unsigned char>(prefix.back()) < 0xff) {
      prefix.back() = static_cast<char>(static_cast<unsigned char>(prefix.back()) + 1);
      return prefix;
    }
    prefix.pop_back();
  }
  return std::string(1, '\0');  // every key
}

// One easy handle (its keep-alive connection reused call after call) driven by its own multi
// handle, so that a call can be ended between two polls of at most kStopPoll (curl_easy_perform
// asks its progress callback only about once a second while a peer is silent).
struct EtcdClient::Curl {
  CURL* handle = nullptr;
  CURLM* multi = nullptr;
  curl_slist* headers = nullptr;
  ~Curl() {
    curl_slist_free_all(headers);
    if (multi) curl_multi_cleanup(multi);
    if (handle) curl_easy_cleanup(handle);
  }
};

namespace {
constexpr int kStopPollMs = 100;
}

EtcdClient::EtcdClient(EtcdEndpoint endpoint, std::chrono::milliseconds timeout, std::function<bool()> stop)
    : endpoint_(std::move(endpoint)), timeout_(timeout), stop_(std::move(stop)), curl_(std::make_unique<Curl>()) {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  curl_->handle = curl_easy_init();
  curl_->multi = curl_multi_init();
  if (!curl_->handle || !curl_->multi) throw EtcdError("curl_easy_init/curl_multi_init failed: no memory for an HTTP client");
  curl_->headers = curl_slist_append(nullptr, "Content-Type: application/json");
}

EtcdClient::~EtcdClient() = default;

namespace {

struct Transfer {
  std::string body;
  const std::function<bool(std::string&)>* on_data = nullptr;  // true: enough, end the transfer
  bool ended_by_reader = false;
  bool too_long = false;
  bool reader_failed = false;
};

size_t on_write(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  t->body.append(data, size * count);
  if (t->body.size() > kMaxResponse) {
    t->too_long = true;
    return 0;
  }
  try {  // nothing may be thrown through libcurl, which is C
    if (t->on_data && *t->on_data && (*t->on_data)(t->body)) {
      t->ended_by_reader = true;
      return 0;  // ends the transfer (CURLE_WRITE_ERROR, expected)
    }
  } catch (...) {
    t->reader_failed = true;
    return 0;
  }
  return size * count;
}

}  // namespace

namespace {

// etcd's answer when a token is missing, expired or revoked (the gateway maps gRPC's
// Unauthenticated to 401; an empty user name comes as 400 with this text).
class EtcdAuthExpired : public EtcdError {
 public:
  using EtcdError::EtcdError;
};

constexpr auto kTokenRenewal = std::chrono::seconds(60);

std::string read_password(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (!f) throw EtcdError("--etcd-password-file " + path + ": " + std::strerror(errno));
  std::string text;
  char buffer[512];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, f)) > 0 && text.size() < 4096;) text.append(buffer, n);
  std::fclose(f);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

}  // namespace

void EtcdClient::authenticate(std::chrono::milliseconds timeout) {
  const json body{{"name", endpoint_.security.user}, {"password", read_password(endpoint_.security.password_file)}};
  const json j = parse_answer("authenticate", post_once("authenticate", "/v3/auth/authenticate", body.dump(), timeout, {}, true, false));
  if (!j.contains("token") || !j["token"].is_string() || j["token"].get<std::string>().empty())
    throw EtcdError("authenticate at " + endpoint_.to_string() + " as " + endpoint_.security.user + ": no token in etcd's answer");
  token_ = j["token"].get<std::string>();
  token_at_ = std::chrono::steady_clock::now();
}

std::string EtcdClient::post(const char* call, const std::string& path, const std::string& body, std::chrono::milliseconds timeout,
                             const std::function<bool(std::string&)>& on_data, bool interruptible) {
  const bool auth = !endpoint_.security.user.empty();
  if (auth && (token_.empty() || std::chrono::steady_clock::now() - token_at_ >= kTokenRenewal)) authenticate(std::min(timeout, timeout_));
  try {
    return post_once(call, path, body, timeout, on_data, interruptible, auth);
  } catch (const EtcdAuthExpired&) {
    if (!auth) throw;
    authenticate(std::min(timeout, timeout_));  // expired or revoked meanwhile: once more with a new one
    return post_once(call, path, body, timeout, on_data, interruptible, auth);
  }
}

std::string EtcdClient::post_once(const char* call, const std::string& path, const std::string& body, std::chrono::milliseconds timeout,
                                  const std::function<bool(std::string&)>& on_data, bool interruptible, bool with_token) {
  const std::string url = std::string(endpoint_.tls ? "https://" : "http://") + format_host_port(endpoint_.host, endpoint_.port) + path;
  Transfer t;
  t.on_data = &on_data;
  CURL* h = curl_->handle;
  curl_easy_reset(h);
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  // The token goes in a header of this call only.
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(nullptr, curl_slist_free_all);
  if (with_token) {
    headers.reset(curl_slist_append(nullptr, "Content-Type: application/json"));
    curl_slist_append(headers.get(), ("Authorization: " + token_).c_str());
  }
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers ? headers.get() : curl_->headers);
  char error_text[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_text);
  if (endpoint_.tls) {
    const EtcdSecurity& s = endpoint_.security;
    if (!s.cacert.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, s.cacert.c_str());
    if (!s.cert.empty()) curl_easy_setopt(h, CURLOPT_SSLCERT, s.cert.c_str());
    if (!s.key.empty()) curl_easy_setopt(h, CURLOPT_SSLKEY, s.key.c_str());
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
  }
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM for name lookups
  // Never 0, which libcurl reads as "no timeout at all".
  const long total_ms = std::max<long>(1, static_cast<long>(timeout.count()));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, std::max<long>(1, static_cast<long>(std::min(timeout, timeout_).count())));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, total_ms);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, endpoint_.tls ? "https" : "http");  // never redirected elsewhere, nor down to plain HTTP

  CURLMcode mc = curl_multi_add_handle(curl_->multi, h);
  if (mc != CURLM_OK) throw EtcdError(std::string(call) + ": curl_multi_add_handle: " + curl_multi_strerror(mc));
  CURLcode rc = CURLE_OK;
  bool interrupted = false;
  for (int running = 1;;) {
    mc = curl_multi_perform(curl_->multi, &running);
    if (mc != CURLM_OK) break;
    if (!running) {
      int left = 0;
      while (CURLMsg* m = curl_multi_info_read(curl_->multi, &left))
        if (m->msg == CURLMSG_DONE && m->easy_handle == h) rc = m->data.result;
      break;
    }
    if (interruptible && stop_ && stop_()) {
      interrupted = true;
      break;
    }
    mc = curl_multi_poll(curl_->multi, nullptr, 0, kStopPollMs, nullptr);
    if (mc != CURLM_OK) break;
  }
  curl_multi_remove_handle(curl_->multi, h);
  if (mc != CURLM_OK) throw EtcdError(std::string(call) + " at " + endpoint_.to_string() + ": " + curl_multi_strerror(mc));
  if (interrupted) {
    if (on_data) return t.body;  // a watch ended by its owner: nothing changed that it will act on
    throw EtcdInterrupted(std::string(call) + " at " + endpoint_.to_string() + ": interrupted (stopping)");
  }
  if (t.too_long) throw EtcdError(std::string(call) + " at " + endpoint_.to_string() + ": the answer is longer than 16 MiB");
  if (t.reader_failed) throw EtcdError(std::string(call) + " at " + endpoint_.to_string() + ": its answer could not be read");
  if (t.ended_by_reader) return t.body;
  if (rc == CURLE_OPERATION_TIMEDOUT && on_data) return t.body;  // a watch that saw nothing
  if (rc != CURLE_OK) {
    // Over TLS 1.3 a server that wants a client certificate ends the connection after the
    // handshake, and libcurl then reports a failed send or receive: say what is likely missing.
    const bool no_client_cert = endpoint_.tls && endpoint_.security.cert.empty() &&
                                (rc == CURLE_SEND_ERROR || rc == CURLE_RECV_ERROR || rc == CURLE_SSL_CONNECT_ERROR);
    throw EtcdError(std::string(call) + " at " + endpoint_.to_string() + ": " + curl_easy_strerror(rc) +
                    (*error_text ? std::string(": ") + error_text : "") +
                    (no_client_cert ? " (etcd may require a client certificate: --etcd-cert and --etcd-key)" : ""));
  }
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  if (status != 200) {
    std::string message = t.body.substr(0, 200);
    const json j = json::parse(t.body, nullptr, false);
    if (j.is_object() && j.contains("message") && j["message"].is_string()) message = j["message"].get<std::string>();
    const std::string what = std::string(call) + " at " + endpoint_.to_string() + ": HTTP " + std::to_string(status) + ": " + message;
    if (with_token && (status == 401 || message.find("invalid auth token") != std::string::npos ||
                       message.find("user name is empty") != std::string::npos))
      throw EtcdAuthExpired(what);
    throw EtcdError(what);
  }
  return t.body;
}

std::int64_t EtcdClient::grant(std::chrono::seconds ttl) {
  const json j = parse_answer("lease grant", post("lease grant", "/v3/lease/grant", json{{"TTL", ttl.count()}}.dump(), timeout_));
  const std::int64_t id = json_int(j, "ID");
  if (id == 0)
    throw EtcdError("lease grant at " + endpoint_.to_string() + ": no lease in the answer" +
                    (j.contains("error") ? ": " + j["error"].dump() : ""));
  return id;
}

bool EtcdClient::keepalive(std::int64_t lease) {
  const json j =
      parse_answer("lease keepalive", post("lease keepalive", "/v3/lease/keepalive", json{{"ID", int_text(lease)}}.dump(), timeout_));
  const json& result = j.contains("result") ? j["result"] : j;
  return result.is_object() && json_int(result, "TTL") > 0;  // an unknown lease comes back without a TTL
}

void EtcdClient::revoke(std::int64_t lease, std::chrono::milliseconds timeout) {
  post("lease revoke", "/v3/lease/revoke", json{{"ID", int_text(lease)}}.dump(), timeout, {}, false);
}

void EtcdClient::put(const std::string& key, const std::string& value, std::int64_t lease) {
  json body{{"key", base64_encode(key)}, {"value", base64_encode(value)}};
  if (lease) body["lease"] = int_text(lease);
  post("put", "/v3/kv/put", body.dump(), timeout_);
}

void EtcdClient::erase(const std::string& key) { post("delete", "/v3/kv/deleterange", json{{"key", base64_encode(key)}}.dump(), timeout_); }

RangeResult EtcdClient::range_prefix(const std::string& prefix, std::size_t limit) {
  const json body{{"key", base64_encode(prefix)}, {"range_end", base64_encode(prefix_end(prefix))}, {"limit", limit}};
  const json j = parse_answer("range", post("range", "/v3/kv/range", body.dump(), timeout_));
  RangeResult r;
  try {
    r.revision = j.contains("header") ? json_int(j["header"], "revision") : 0;
    r.more = j.value("more", false);
    if (auto kvs = j.find("kvs"); kvs != j.end() && kvs->is_array())
      for (const auto& kv : *kvs) r.kvs.push_back({base64_decode(kv.value("key", "")), base64_decode(kv.value("value", ""))});
  } catch (const json::exception& e) {
    throw EtcdError("range at " + endpoint_.to_string() + ": etcd's answer has an unexpected shape: " + e.what());
  }
  return r;
}

bool EtcdClient::watch_prefix(const std::string& prefix, std::int64_t revision, std::chrono::milliseconds wait) {
  const json body{
      {"create_request",
       {{"key", base64_encode(prefix)}, {"range_end", base64_encode(prefix_end(prefix))}, {"start_revision", int_text(revision + 1)}}}};
  bool changed = false;
  std::string failure;  // not thrown from here: this runs inside libcurl, which is C
  // The gateway streams one JSON object per line: first the watch's creation, then its events.
  std::function<bool(std::string&)> on_data = [&](std::string& buffer) {
    for (std::size_t nl; (nl = buffer.find('\n')) != std::string::npos; buffer.erase(0, nl + 1)) {
      const json j = json::parse(buffer.substr(0, nl), nullptr, false);
      const json* result = j.is_object() && j.contains("result") && j["result"].is_object() ? &j["result"] : nullptr;
      if (result && result->contains("events")) changed = true;
      if (j.is_object() && j.contains("error")) failure = j["error"].dump().substr(0, 200);
      if (result && result->value("canceled", false)) failure = "etcd cancelled the watch";
    }
    return changed || !failure.empty();
  };
  post("watch", "/v3/watch", body.dump(), wait, on_data);
  if (!failure.empty()) throw EtcdError("watch at " + endpoint_.to_string() + ": " + failure);
  return changed;
}

}  // namespace vod::cluster
