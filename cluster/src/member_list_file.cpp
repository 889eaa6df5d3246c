// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/cluster/member_list_file.hpp"

#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

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
  nlohmann::json j{{"etcd", etcd.to_string()}, {"saved", static_cast<std::int64_t>(std::time(nullptr))}, {"records", nlohmann::json::array()}};
  for (const auto& kv : records) j["records"].push_back({{"key", kv.key}, {"value", kv.value}});
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const std::string tmp = path + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    if (!out) {
      log::warn("cluster", "cannot save the member list to " + tmp + " (a client started while etcd is down will not find the fleet)");
      std::remove(tmp.c_str());
      return;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    log::warn("cluster", "cannot save the member list as " + path);
    std::remove(tmp.c_str());
  }
}

std::optional<SavedMembers> load_member_list(const EtcdEndpoint& etcd) {
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
  return s;
}

}  // namespace vod::cluster
