// SPDX-License-Identifier: LGPL-2.1-or-later
// walk_library: which files of a media tree are movies and what they are called.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "library_walk.hpp"
#include "open_resolved.hpp"
#include "vod/unique_fd.hpp"

namespace vod::server {
namespace {

namespace fs = std::filesystem;

class LibraryWalk : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() / ("library-walk-" + std::to_string(::getpid()));
    fs::remove_all(base_);
    root_ = base_ / "media";
    fs::create_directories(root_);
    fs::create_directories(base_ / "elsewhere");
    file(base_ / "elsewhere" / "secret.mp4");
  }
  void TearDown() override { fs::remove_all(base_); }

  static void file(const fs::path& p) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << p.filename().string();
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& f : walk_library(root_.string(), {"cam"})) out.push_back(f.name);
    return out;
  }

  fs::path base_, root_;
};

TEST_F(LibraryWalk, ATreeIsNamedByPathsSortedAsBytes) {
  const std::string deep = "Series/" + std::string(200, 's') + "/" + std::string(200, 't') + "/" + std::string(180, 'u') + ".mkv";
  ASSERT_GE(deep.size(), 580u);
  for (const std::string name : {"top.ts", "Films/Läder (2024)/Läder (2024) - 720p.mp4", "Films/#1 50% ?.mp4",
                                 "Series/Show/Season 01/Show S01E01.mkv", "a-b.mp4", "a/b.mp4"})
    file(root_ / name);
  file(root_ / deep);
  file(root_ / ".hidden" / "x.mp4");                                          // a hidden folder
  file(root_ / "Films" / ".swap.mp4");                                        // a hidden file
  file(root_ / "live" / "x.mp4");                                             // reserved at the top
  file(root_ / "hls");                                                        // reserved at the top
  file(root_ / "cam");                                                        // a live channel's name
  file(root_ / "Films" / "live" / "ok.mp4");                                  // reserved only at the top
  fs::create_symlink("../top.ts", root_ / "Films" / "link to top.ts");        // inside: followed
  fs::create_symlink(root_ / "Series" / "Show", root_ / "Shows");             // a folder inside: followed
  fs::create_symlink(base_ / "elsewhere" / "secret.mp4", root_ / "out.mp4");  // outside: skipped
  fs::create_symlink(base_ / "elsewhere", root_ / "outdir");                  // outside: skipped
  fs::create_symlink("..", root_ / "Series" / "loop");                        // a loop: skipped
  fs::create_symlink("missing.mp4", root_ / "dangling.mp4");                  // skipped
  fs::create_symlink(".hidden/x.mp4", root_ / "into hidden.mp4");             // into a hidden folder: skipped
  fs::create_symlink("../live/x.mp4", root_ / "Films" / "into live.mp4");     // into a reserved name: skipped
  ASSERT_EQ(::mkfifo((root_ / "pipe.ts").c_str(), 0600), 0);                  // not a regular file
  file(root_ / "bad \xe9t\xe9.mp4");                                          // Latin-1: not UTF-8

  const std::vector<std::string> expected = {"Films/#1 50% ?.mp4",
                                             "Films/Läder (2024)/Läder (2024) - 720p.mp4",
                                             "Films/link to top.ts",
                                             "Films/live/ok.mp4",
                                             "Series/Show/Season 01/Show S01E01.mkv",
                                             deep,
                                             "Shows/Season 01/Show S01E01.mkv",
                                             "a-b.mp4",
                                             "a/b.mp4",
                                             "top.ts"};
  EXPECT_EQ(names(), expected);
  const auto files = walk_library(root_.string(), {});
  const auto link = std::find_if(files.begin(), files.end(), [](const LibraryFile& f) { return f.name == "Films/link to top.ts"; });
  ASSERT_NE(link, files.end());
  EXPECT_EQ(link->path, fs::canonical(root_ / "top.ts").string());  // opened where it stays inside
  EXPECT_EQ(std::count_if(files.begin(), files.end(), [](const LibraryFile& f) { return f.name == "cam"; }), 1);  // not a channel here
}

TEST_F(LibraryWalk, APathPassesThroughAtMostEightSymlinksToFolders) {
  // c0/n -> c1, c1/n -> c2, ..., c9/n -> c10, which holds f.bin: reached through k links as
  // c(10-k)/n/.../n/f.bin, for k up to 8 only.
  file(root_ / "c10" / "f.bin");
  for (int i = 0; i < 10; ++i) {
    fs::create_directories(root_ / ("c" + std::to_string(i)));
    fs::create_symlink("../c" + std::to_string(i + 1), root_ / ("c" + std::to_string(i)) / "n");
  }
  const auto listed = names();
  EXPECT_EQ(listed.size(), 9u);
  EXPECT_NE(std::find(listed.begin(), listed.end(), "c2/n/n/n/n/n/n/n/n/f.bin"), listed.end());
  EXPECT_EQ(std::find(listed.begin(), listed.end(), "c1/n/n/n/n/n/n/n/n/n/f.bin"), listed.end());
}

// A folder swapped for a link after the walk: the path the walk stored no longer opens, though
// open(2) would follow the link out of the media directory.
TEST_F(LibraryWalk, AFolderSwappedForALinkAfterTheWalkDoesNotOpen) {
  file(root_ / "Films" / "secret.mp4");
  const auto files = walk_library(root_.string(), {});
  ASSERT_EQ(files.size(), 1u);
  EXPECT_GE(UniqueFd(open_resolved(files[0].path, O_RDONLY | O_CLOEXEC)).get(), 0);
  fs::remove_all(root_ / "Films");
  fs::create_directories(base_ / "elsewhere" / "Films");
  file(base_ / "elsewhere" / "Films" / "secret.mp4");
  fs::create_symlink(base_ / "elsewhere" / "Films", root_ / "Films");
  EXPECT_GE(UniqueFd(::open(files[0].path.c_str(), O_RDONLY | O_CLOEXEC)).get(), 0);  // what a plain open would do
  errno = 0;
  EXPECT_LT(UniqueFd(open_resolved(files[0].path, O_RDONLY | O_CLOEXEC)).get(), 0);
  EXPECT_EQ(errno, ELOOP);
}

TEST_F(LibraryWalk, AMissingDirectoryThrowsAndAnUnreadableFolderIsSkipped) {
  EXPECT_THROW(walk_library((base_ / "nope").string(), {}), std::runtime_error);
  file(root_ / "ok.mp4");
  file(root_ / "locked" / "x.mp4");
  fs::permissions(root_ / "locked", fs::perms::none);
  const bool root_reads_anyway = ::access((root_ / "locked").c_str(), R_OK) == 0;  // running as root
  const auto n = names();
  fs::permissions(root_ / "locked", fs::perms::owner_all);
  const std::vector<std::string> readable = {"locked/x.mp4", "ok.mp4"}, skipped = {"ok.mp4"};
  EXPECT_EQ(n, root_reads_anyway ? readable : skipped);
}

}  // namespace
}  // namespace vod::server
