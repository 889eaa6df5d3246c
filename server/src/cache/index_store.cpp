// SPDX-License-Identifier: LGPL-2.1-or-later
#include "cache/index_store.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "vod/log.hpp"
#include "vod/protocol/name_hash.hpp"

namespace vod::server::cache {

namespace fs = std::filesystem;

namespace {

std::string prefix_for(const std::string& path) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx-", static_cast<unsigned long long>(proto::name_hash(path)));
  return buf;
}

std::string file_for(const std::string& dir, const FileIdentity& f, const char* suffix) {
  return dir + "/" + prefix_for(f.path) + std::to_string(f.size) + "-" + std::to_string(f.mtime_ns) + "-" +
         std::to_string(static_cast<unsigned long long>(f.inode)) + suffix;
}

constexpr char kIndexSuffix[] = ".rvki", kDigestSuffix[] = ".rvcd";
constexpr char kDigestMagic[] = "rvod-content-v1";  // the file: this with its NUL, the kind, the 16 digest bytes

std::string made_dir(const std::string& dir, const char* sub, const char* what) {
  std::error_code ec;
  fs::create_directories(fs::path(dir) / sub, ec);
  if (ec) {
    log::warn("cache", "state directory " + dir + ": " + ec.message() + "; " + what + " are not kept across restarts (--state-dir)");
    return {};
  }
  return (fs::path(dir) / sub).string();
}

}  // namespace

FileIdentity FileIdentity::of(std::string path, const struct stat& st) {
  return {std::move(path), static_cast<std::uint64_t>(st.st_size), std::int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec,
          st.st_ino};
}

bool FileIdentity::same_version(const struct stat& st) const noexcept {
  const FileIdentity now = of({}, st);
  return now.size == size && now.mtime_ns == mtime_ns && now.inode == inode;
}

IndexStore::IndexStore(const std::string& dir) {
  if (dir.empty()) return;
  dir_ = made_dir(dir, "indexes", "keyframe indexes");
  digests_ = made_dir(dir, "digests", "content identities");
}

proto::ContentId IndexStore::load_digest(const FileIdentity& f) const {
  if (digests_.empty()) return {};
  std::ifstream in(file_for(digests_, f, kDigestSuffix), std::ios::binary);
  if (!in) return {};
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  proto::ContentId id;
  if (bytes.size() != sizeof kDigestMagic + 17 || !std::equal(kDigestMagic, kDigestMagic + sizeof kDigestMagic, bytes.begin()) ||
      bytes[sizeof kDigestMagic] != proto::kContentSha256) {
    log::warn("cache", "ignoring the kept content identity of " + f.path + ": not a digest file");
    return {};
  }
  id.kind = proto::kContentSha256;
  std::copy(bytes.end() - 16, bytes.end(), id.digest.begin());
  return id;
}

void IndexStore::save_digest(const FileIdentity& f, const proto::ContentId& id) const {
  if (digests_.empty() || !id.known()) return;
  std::vector<std::uint8_t> bytes(kDigestMagic, kDigestMagic + sizeof kDigestMagic);
  bytes.push_back(id.kind);
  bytes.insert(bytes.end(), id.digest.begin(), id.digest.end());
  keep(digests_, f, kDigestSuffix, bytes, "content identity");
}

std::optional<proto::KeyframeIndex> IndexStore::load(const FileIdentity& f) const {
  if (dir_.empty()) return std::nullopt;
  std::ifstream in(file_for(dir_, f, kIndexSuffix), std::ios::binary);
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
  keep(dir_, f, kIndexSuffix, proto::encode_index(index, proto::kSegmentsVersion), "index");  // with its CRC
}

void IndexStore::keep(const std::string& dir, const FileIdentity& f, const char* suffix, const std::vector<std::uint8_t>& bytes,
                      const char* what) const {
  const std::string target = file_for(dir, f, suffix), temp = target + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      log::warn("cache", std::string("cannot keep the ") + what + " of " + f.path + " in " + temp);
      return;
    }
  }
  std::error_code ec;
  fs::rename(temp, target, ec);
  if (ec) {
    log::warn("cache", std::string("cannot keep the ") + what + " of " + f.path + ": " + ec.message());
    return;
  }
  // Older ones of this path (the file changed since) go.
  const std::string prefix = prefix_for(f.path), name = fs::path(target).filename().string();
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string other = entry.path().filename().string();
    if (other != name && other.rfind(prefix, 0) == 0) fs::remove(entry.path(), ec);
  }
}

}  // namespace vod::server::cache
