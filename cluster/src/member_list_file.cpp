// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/cluster/member_list_file.hpp"

#include <openssl/evp.h>

#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "vod/log.hpp"

namespace vod::cluster {

namespace {

std::string cache_dir() {
  if (const char* d = std::getenv("VOD_CLUSTER_CACHE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return std::string(d) + "/rdma-vod";
  if (const char* d = std::getenv("HOME"); d && *d) return std::string(d) + "/.cache/rdma-vod";
  return {};
}

std::string short_digest(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 8; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

}  // namespace

std::string member_list_path(const EtcdEndpoint& etcd) {
  const std::string dir = cache_dir();
  return dir.empty() ? std::string() : dir + "/members-" + short_digest(etcd.to_string()) + ".json";
}

void save_member_list(const EtcdEndpoint& etcd, const std::vector<KeyValue>& records) {
  const std::string path = member_list_path(etcd);
  if (path.empty()) return;
  nlohmann::json j{
      {"etcd", etcd.to_string()}, {"saved", static_cast<std::int64_t>(std::time(nullptr))}, {"records", nlohmann::json::array()}};
  for (const auto& kv : records) j["records"].push_back({{"key", kv.key}, {"value", kv.value}});
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  // A new file of a name nobody can guess or plant beforehand (mkstemp: O_CREAT|O_EXCL, mode 0600,
  // in the same directory, so the rename is atomic); a symlink left at a predictable name is never
  // followed.
  std::string tmp = path + ".XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0) {
    log::warn("cluster", "cannot save the member list next to " + path + ": mkstemp: " + std::strerror(errno) +
                             " (a client started while etcd is down will not find the fleet)");
    return;
  }
  const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + '\n';
  bool written = true;
  for (std::size_t at = 0; at < text.size() && written;) {
    const ssize_t n = write(fd, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    written = n > 0;
    if (written) at += static_cast<std::size_t>(n);
  }
  const int saved_errno = errno;
  if (close(fd) != 0) written = false;
  if (!written) {
    log::warn("cluster", "cannot save the member list to " + tmp + ": " + std::strerror(saved_errno) +
                             " (a client started while etcd is down will not find the fleet)");
    unlink(tmp.c_str());
    return;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    log::warn("cluster", "cannot save the member list as " + path + ": rename: " + std::strerror(errno));
    unlink(tmp.c_str());
  }
}

std::chrono::seconds member_list_max_age() {
  const char* text = std::getenv("VOD_CLUSTER_LIST_MAX_AGE");
  if (!text || !*text) return kMemberListMaxAge;
  char* end = nullptr;
  errno = 0;
  const long long s = std::strtoll(text, &end, 10);
  if (errno || *end || s <= 0) {
    log::warn("cluster", std::string("VOD_CLUSTER_LIST_MAX_AGE='") + text + "' is not a number of seconds above 0: using " +
                             std::to_string(kMemberListMaxAge.count()));
    return kMemberListMaxAge;
  }
  return std::chrono::seconds(s);
}

std::optional<SavedMembers> load_member_list(const EtcdEndpoint& etcd, std::chrono::seconds max_age) {
  const std::string path = member_list_path(etcd);
  if (path.empty()) return std::nullopt;
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  const auto j = nlohmann::json::parse(text.str(), nullptr, false);
  SavedMembers s;
  try {
    if (!j.is_object() || j.value("etcd", "") != etcd.to_string()) throw std::invalid_argument("not a member list of " + etcd.to_string());
    s.saved = j.at("saved").get<std::time_t>();
    for (const auto& r : j.at("records")) s.records.push_back({r.at("key").get<std::string>(), r.at("value").get<std::string>()});
  } catch (const std::exception& e) {
    log::warn("cluster", "ignoring the saved member list " + path + ": " + e.what());
    return std::nullopt;
  }
  // A list from long ago names members that may have been replaced by anything since: not trusted.
  // One saved in the future (a clock set back, a planted file) counts as old as well.
  const auto age = std::time(nullptr) - s.saved;
  if (age < -60 || age > max_age.count()) {
    log::warn("cluster", "ignoring the saved member list " + path + ": saved " +
                             (age < 0 ? std::to_string(-age) + " s in the future" : std::to_string(age / 60) + " min ago") +
                             ", older than " + std::to_string(max_age.count()) + " s (VOD_CLUSTER_LIST_MAX_AGE)");
    return std::nullopt;
  }
  return s;
}

}  // namespace vod::cluster
