// SPDX-License-Identifier: LGPL-2.1-or-later
// The member list saved on disk (cluster/member_list_file.hpp): written through a fresh mkstemp file
// renamed into place, so a symlink planted where a predictable temporary name would be is never
// followed; read back only while it is younger than its bound (a day, or VOD_CLUSTER_LIST_MAX_AGE).
#include <gtest/gtest.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "vod/cluster/etcd_url.hpp"
#include "vod/cluster/member_list_file.hpp"

namespace vod::cluster {
namespace {

namespace fs = std::filesystem;

class MemberListFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("vod-member-list-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    setenv("VOD_CLUSTER_CACHE_DIR", dir_.c_str(), 1);
    unsetenv("VOD_CLUSTER_LIST_MAX_AGE");
    etcd_ = parse_etcd_url("etcd://192.0.2.1:2379/list-test");
  }
  void TearDown() override {
    unsetenv("VOD_CLUSTER_CACHE_DIR");
    unsetenv("VOD_CLUSTER_LIST_MAX_AGE");
    fs::remove_all(dir_);
  }
  // Rewrites the saved file's time, as if it had been saved `age` seconds ago.
  void age_by(std::time_t age) {
    const std::string path = member_list_path(etcd_);
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    auto j = nlohmann::json::parse(text.str());
    j["saved"] = static_cast<std::int64_t>(std::time(nullptr) - age);
    std::ofstream(path, std::ios::trunc) << j.dump();
  }
  fs::path dir_;
  EtcdEndpoint etcd_;
  const std::vector<KeyValue> records_{{"/list-test/members/192.0.2.5:7470", "{\"host\":\"192.0.2.5\"}"}};
};

TEST_F(MemberListFile, SavesAtomicallyAndReadsBack) {
  save_member_list(etcd_, records_);
  const auto saved = load_member_list(etcd_);
  ASSERT_TRUE(saved);
  ASSERT_EQ(saved->records.size(), 1u);
  EXPECT_EQ(saved->records[0].key, records_[0].key);
  EXPECT_EQ(saved->records[0].value, records_[0].value);
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) {
    ++files;
    EXPECT_EQ(e.path().string(), member_list_path(etcd_)) << "a temporary file was left behind";
    EXPECT_EQ(e.status().permissions() & (fs::perms::group_write | fs::perms::others_write), fs::perms::none);
  }
  EXPECT_EQ(files, 1);
}

TEST_F(MemberListFile, NeverFollowsASymlinkPlantedAtAPredictableName) {
  // The name an earlier version wrote to before its rename ("<path>.tmp<pid>"), and any other
  // guessable one, may hold a symlink to a file of the user's: it must stay as it is.
  const fs::path victim = dir_ / "victim";
  std::ofstream(victim) << "precious";
  const std::string path = member_list_path(etcd_);
  fs::create_symlink(victim, path + ".tmp" + std::to_string(getpid()));
  save_member_list(etcd_, records_);
  std::ifstream in(victim);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "precious");
  EXPECT_TRUE(load_member_list(etcd_));
}

TEST_F(MemberListFile, IgnoresAListOlderThanItsBound) {
  save_member_list(etcd_, records_);
  age_by(2 * 24 * 3600);
  EXPECT_FALSE(load_member_list(etcd_)) << "a list saved two days ago was trusted";
  EXPECT_TRUE(load_member_list(etcd_, std::chrono::hours(72))) << "within a bound of three days";
  setenv("VOD_CLUSTER_LIST_MAX_AGE", "259200", 1);
  EXPECT_EQ(member_list_max_age(), std::chrono::seconds(259200));
  EXPECT_TRUE(load_member_list(etcd_));
  setenv("VOD_CLUSTER_LIST_MAX_AGE", "soon", 1);
  EXPECT_EQ(member_list_max_age(), kMemberListMaxAge) << "a bad value falls back to the default";
  age_by(-3600);
  EXPECT_FALSE(load_member_list(etcd_)) << "a list saved an hour in the future";
  age_by(600);
  EXPECT_TRUE(load_member_list(etcd_));
}

}  // namespace
}  // namespace vod::cluster
