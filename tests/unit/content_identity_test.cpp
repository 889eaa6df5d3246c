// SPDX-License-Identifier: LGPL-2.1-or-later
// The content identity a server publishes per catalog entry (issue 43): its digest, and how the
// state directory keeps it per file version.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cache/content_digest.hpp"
#include "cache/index_store.hpp"
#include "pinned_load.hpp"

namespace vod::server::cache {
namespace {

TEST(ContentDigest, IsSha256OverTheDomainTheSizeAndTheBytes) {
  // python3: hashlib.sha256(b'rvod-content-v1\0' + struct.pack('>Q', 3) + b'abc').hexdigest()[:32]
  const std::uint8_t abc[] = {'a', 'b', 'c'};
  EXPECT_EQ(content_id(abc).hex(), "sha256:015136f06f36aed2e246ba8b1a43924b");
  EXPECT_EQ(content_id({}).hex(), "sha256:35bbdf6dff78a51f849e999a1380c42f");
  // Fed in pieces, the same; one byte differs, or one more: another identity.
  ContentDigest d(3);
  d.update({abc, 1});
  d.update({abc + 1, 2});
  EXPECT_TRUE(d.finish().same(content_id(abc)));
  const std::uint8_t abd[] = {'a', 'b', 'd'}, abcd[] = {'a', 'b', 'c', 'd'};
  EXPECT_FALSE(content_id(abd).same(content_id(abc)));
  EXPECT_FALSE(content_id(abcd).same(content_id(abc)));
  ContentDigest short_one(4);
  short_one.update(abc);
  EXPECT_THROW(short_one.finish(), std::logic_error) << "a digest of fewer bytes than the size names nobody's bytes";
}

TEST(ContentDigest, LargeInputsInSteps) {
  std::vector<std::uint8_t> big((40u << 20) + 5, 0x5a);
  int steps = 0;
  const auto id = content_id(big, [&] { ++steps; });
  EXPECT_EQ(steps, 3);
  ContentDigest d(big.size());
  d.update(big);
  EXPECT_TRUE(d.finish().same(id));
}

TEST(IndexStore, KeepsADigestPerFileVersion) {
  const std::string dir = std::filesystem::temp_directory_path() / ("vod-digests-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  {
    IndexStore store(dir);
    const std::uint8_t abc[] = {'a', 'b', 'c'};
    const FileIdentity v1{"/media/a.ts", 3, 1000, 7}, v2{"/media/a.ts", 3, 2000, 7};
    EXPECT_FALSE(store.load_digest(v1).known());
    store.save_digest(v1, content_id(abc));
    EXPECT_TRUE(store.load_digest(v1).same(content_id(abc)));
    EXPECT_FALSE(store.load_digest(v2).known()) << "another mtime: another version, not its digest";
    store.save_digest(v2, content_id(abc));
    EXPECT_FALSE(store.load_digest(v1).known()) << "the older version's digest goes";
    // A damaged file reads as unknown, never as a digest.
    for (const auto& f : std::filesystem::directory_iterator(dir + "/digests")) std::ofstream(f.path(), std::ios::trunc) << "junk";
    EXPECT_FALSE(store.load_digest(v2).known());
  }
  std::filesystem::remove_all(dir);
}

// A pinned movie is hashed while it loads, by a thread behind the reads: the identity of exactly
// the bytes read, for an empty file, a one-byte one and one of several read steps and an odd size;
// a file shorter than listed is refused (and the hasher stopped).
TEST(PinnedLoad, HashesExactlyTheBytesItLoads) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("vod-pinned-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::vector<std::uint8_t> big((37u << 20) + 4099);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i * 2654435761u >> 13);
  const std::vector<std::uint8_t> empty, one{0x42};
  for (const std::vector<std::uint8_t>* bytes : {&empty, &one, static_cast<const std::vector<std::uint8_t>*>(&big)}) {
    const auto path = dir / std::to_string(bytes->size());
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes->data()), static_cast<std::streamsize>(bytes->size()));
    proto::ContentId id;
    const HostBuffer loaded = load_pinned(path, bytes->size(), id);
    EXPECT_TRUE(id.same(content_id(*bytes))) << bytes->size() << " bytes";
    EXPECT_TRUE(std::equal(bytes->begin(), bytes->end(), loaded.bytes().begin()));
  }
  proto::ContentId id;
  EXPECT_THROW(load_pinned(dir / std::to_string(big.size()), big.size() + 1, id), std::runtime_error);
  EXPECT_FALSE(id.known());
  std::filesystem::remove_all(dir);
}
}  // namespace
}  // namespace vod::server::cache
