// SPDX-License-Identifier: LGPL-2.1-or-later
#include "cache/index_store.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "vod/log.hpp"
#include "vod/protocol/name_hash.hpp"

namespace vod::server::cache {

namespace fs = std::filesystem;

IndexStore::IndexStore(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  fs::create_directories(fs::path(dir) / "indexes", ec);
  if (ec) {
    log::warn("cache", "state directory " + dir + ": " + ec.message() + "; keyframe indexes are not kept across restarts (--state-dir)");
    return;
  }
  dir_ = (fs::path(dir) / "indexes").string();
}

std::string IndexStore::prefix_for(const std::string& path) const {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx-", static_cast<unsigned long long>(proto::name_hash(path)));
  return buf;
}

std::string IndexStore::file_for(const FileIdentity& f) const {
  return dir_ + "/" + prefix_for(f.path) + std::to_string(f.size) + "-" + std::to_string(f.mtime_ns) + "-" +
         std::to_string(static_cast<unsigned long long>(f.inode)) + ".rvki";
}

std::optional<proto::KeyframeIndex> IndexStore::load(const FileIdentity& f) const {
  if (dir_.empty()) return std::nullopt;
  std::ifstream in(file_for(f), std::ios::binary);
  if (!in) return std::nullopt;
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto index = proto::decode_index(bytes);
  if (!index || index->movie_size != f.size || (index->flags & proto::kIndexPending)) {
    log::warn("cache", "ignoring the kept index of " + f.path + ": " + (index ? "it is not this file's" : index.error().message));
    return std::nullopt;
  }
  return *index;
}

void IndexStore::save(const FileIdentity& f, const proto::KeyframeIndex& index) const {
  if (dir_.empty()) return;
  const std::string target = file_for(f), temp = target + ".tmp";
  const auto bytes = proto::encode_index(index, proto::kSegmentsVersion);  // with its CRC
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      log::warn("cache", "cannot keep the index of " + f.path + " in " + temp);
      return;
    }
  }
  std::error_code ec;
  fs::rename(temp, target, ec);
  if (ec) {
    log::warn("cache", "cannot keep the index of " + f.path + ": " + ec.message());
    return;
  }
  // Older indexes of this path (the file changed since) go.
  const std::string prefix = prefix_for(f.path), name = fs::path(target).filename().string();
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    const std::string other = entry.path().filename().string();
    if (other != name && other.rfind(prefix, 0) == 0) fs::remove(entry.path(), ec);
  }
}

}  // namespace vod::server::cache
