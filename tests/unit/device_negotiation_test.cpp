#include <gtest/gtest.h>

#include "vod/rdma/device.hpp"

namespace vod::rdma {
namespace {

DeviceLimits limits(std::uint32_t rd_atom, std::uint32_t init_rd_atom, bool iwarp = false) {
  DeviceLimits l;
  l.name = "test";
  l.max_qp_rd_atom = rd_atom;
  l.max_qp_init_rd_atom = init_rd_atom;
  l.iwarp = iwarp;
  return l;
}

TEST(ReadDepth, ClientAsksForWhatItWantsWithinItsDevice) {
  EXPECT_EQ(client_initiator_depth(limits(128, 128), 16), 16);       // rxe
  EXPECT_EQ(client_initiator_depth(limits(16, 16), 64), 16);         // mlx5 caps it
  EXPECT_EQ(client_initiator_depth(limits(1024, 1024), 1000), 255);  // the CM field is 8 bits
  EXPECT_EQ(client_initiator_depth(limits(16, 16), 0), 1);
}

TEST(ReadDepth, ServerGrantsThePeersDepthWithinItsDevice) {
  EXPECT_EQ(server_responder_resources(limits(128, 128), 64), 64);
  EXPECT_EQ(server_responder_resources(limits(16, 16), 64), 16);
  EXPECT_EQ(server_responder_resources(limits(16, 16), 0), 1);
}

TEST(ReadSink, NeedsRemoteWriteOnlyOnIwarp) {
  EXPECT_EQ(read_sink_access(limits(16, 16)), IBV_ACCESS_LOCAL_WRITE);
  EXPECT_EQ(read_sink_access(limits(16, 16, true)), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
}

}  // namespace
}  // namespace vod::rdma
