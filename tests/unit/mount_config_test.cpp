// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-mount's command line: the same settings as --name value or -o name=value (as /etc/fstab
// passes them through mount.fuse3), libfuse's own -o options passed on, and never a writable mount.
#include <gtest/gtest.h>

#include "mount_config.hpp"

using vod::mount::fuse_arguments;
using vod::mount::parse_mount_config;

namespace {

std::string fuse_o(const vod::mount::MountConfig& c) {
  const auto args = fuse_arguments(c);
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "-o") return args[i + 1];
  return "";
}

}  // namespace

TEST(MountConfig, ServerMountPointAndDefaults) {
  const auto c = parse_mount_config({"rdma://10.0.0.1", "/mnt/vod"});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->server, "rdma://10.0.0.1");
  EXPECT_EQ(c->mountpoint, "/mnt/vod");
  EXPECT_FALSE(c->foreground);
  EXPECT_TRUE(c->page_cache);
  EXPECT_EQ(c->sessions, 4u);
  EXPECT_EQ(fuse_o(*c), "ro,default_permissions,fsname=rdma://10.0.0.1,subtype=vod");
}

TEST(MountConfig, OwnOptionsAsDashOSplitFromLibfuseOnes) {
  const auto c =
      parse_mount_config({"rdma://h:7470", "/m", "-o", "allow_other,refresh=1.5,page_cache=off", "-o", "max_read=131072,sessions=2"});
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->refresh, 1.5);
  EXPECT_FALSE(c->page_cache);
  EXPECT_EQ(c->sessions, 2u);
  EXPECT_EQ(c->fuse_options, (std::vector<std::string>{"allow_other", "max_read=131072"}));
  EXPECT_EQ(fuse_o(*c), "ro,default_permissions,fsname=rdma://h:7470,subtype=vod,allow_other,max_read=131072");
}

TEST(MountConfig, TheCommandLineWinsOverDashO) {
  const auto c = parse_mount_config({"rdma://h", "/m", "--sessions", "8", "-o", "sessions=2,depth=4"});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->sessions, 8u);
  EXPECT_EQ(c->depth, 4u);
}

TEST(MountConfig, NeverWritableWhateverFstabSays) {
  const auto c = parse_mount_config({"rdma://h", "/m", "-o", "rw,nosuid"});
  ASSERT_TRUE(c);
  EXPECT_EQ(fuse_o(*c), "ro,default_permissions,fsname=rdma://h,subtype=vod,nosuid");
}

TEST(MountConfig, DebugImpliesForeground) {
  const auto c = parse_mount_config({"-d", "rdma://h", "/m"});
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->foreground);
  EXPECT_EQ(fuse_arguments(*c).back(), "-d");
}

TEST(MountConfig, BadInputSaysWhatIsWrong) {
  const auto message = [](std::vector<std::string> args) {
    try {
      parse_mount_config(args);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_NE(message({"rdma://h"}).find("expected the server and the mount point"), std::string::npos);
  EXPECT_NE(message({"rdma://h", "/m", "/extra"}).find("expected the server and the mount point"), std::string::npos);
  EXPECT_NE(message({"rdma://h", "/m", "-o", "page-cache=maybe"}).find("--page-cache must be on or off"), std::string::npos);
  EXPECT_NE(message({"rdma://h", "/m", "-o", "refresh"}).find("needs a value"), std::string::npos);
  EXPECT_NE(message({"rdma://h", "/m", "--sessions", "0"}).find("--sessions must be 1..64"), std::string::npos);
  EXPECT_NE(message({"rdma://h", "/m", "--transport", "tcp"}).find("--transport must be rdma or udp"), std::string::npos);
  EXPECT_NE(message({"rdma://h", "/m", "--refresh", "x"}).find("refresh"), std::string::npos);
  EXPECT_NE(message({"rdma://h", "/m", "--no-such-option"}).find("no-such-option"), std::string::npos);
}
