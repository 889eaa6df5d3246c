// SPDX-License-Identifier: LGPL-2.1-or-later
// Every option struct starts from vod/defaults.hpp (issue 30: the port, the chunk, the depth, the
// reconnect time and the UDP payload were repeated across modules, and the UDP payload already
// disagreed: 1416 in the admission's limits, 8192 in the server's options).
#include <gtest/gtest.h>

#include "mount_config.hpp"
#include "udp/udp_admission.hpp"
#include "udp/udp_service.hpp"
#include "vod/client/live_session.hpp"
#include "vod/client/multicast_live_session.hpp"
#include "vod/client/read_engine.hpp"
#include "vod/client/session.hpp"
#include "vod/client/uri.hpp"
#include "vod/defaults.hpp"

namespace vod {
namespace {

TEST(Defaults, EveryOptionStructStartsFromTheSharedOnes) {
  const client::EngineOptions engine;
  EXPECT_EQ(engine.chunk_size, defaults::kChunkBytes);
  EXPECT_EQ(engine.read_depth, defaults::kReadDepth);
  EXPECT_EQ(engine.readahead_bytes, defaults::kReadaheadBytes);
  EXPECT_EQ(engine.readahead_depth, defaults::kReadaheadDepth);
  EXPECT_EQ(engine.first_read_bytes, defaults::kFirstReadBytes);
  const client::SessionOptions session;
  EXPECT_EQ(session.reconnect.give_up_after, defaults::kReconnectFor);
  EXPECT_EQ(session.reconnect.first, defaults::kBackoffFirst);
  EXPECT_EQ(session.reconnect.max, defaults::kBackoffMax);
  EXPECT_EQ(session.udp.port, defaults::kUdpPort);
  EXPECT_EQ(session.connect_timeout, defaults::kConnectTimeout);
  EXPECT_EQ(session.ack_timeout, defaults::kAckTimeout);
  const client::LiveOptions live;
  EXPECT_EQ(live.chunk_size, defaults::kChunkBytes);
  EXPECT_EQ(live.read_depth, defaults::kReadDepth);
  EXPECT_EQ(live.reconnect.give_up_after, defaults::kReconnectFor);
  EXPECT_EQ(live.reconnect.first, defaults::kBackoffFirst);
  EXPECT_EQ(live.connect_timeout, defaults::kConnectTimeout);
  EXPECT_EQ(live.ack_timeout, defaults::kAckTimeout);
  EXPECT_EQ(client::parse_uri("rdma://192.0.2.1/a").port, defaults::kRdmaPort);
  EXPECT_EQ(client::kLiveMulticastPort, defaults::kLiveMulticastPort);
  const server::udp::UdpOptions udp;
  const server::udp::UdpLimits limits;
  EXPECT_EQ(udp.port, defaults::kUdpPort);
  EXPECT_EQ(udp.max_payload, defaults::kUdpMaxPayload);
  EXPECT_EQ(udp.client_rate_bps, defaults::kUdpClientRateBps);
  EXPECT_EQ(limits.max_payload, udp.max_payload) << "the admission's cap and the server's are one";
  EXPECT_EQ(limits.max_record, defaults::kUdpMaxRecord);
  const auto mount = mount::parse_mount_config({"rdma://192.0.2.1", "/mnt/vod"});
  ASSERT_TRUE(mount);
  EXPECT_EQ(mount->chunk_kib * 1024u, defaults::kChunkBytes);
  EXPECT_EQ(mount->depth, defaults::kReadDepth);
  EXPECT_EQ(mount->udp_port, defaults::kUdpPort);
  EXPECT_EQ(std::chrono::duration<double>(defaults::kConnectTimeout).count(), mount->connect_timeout);
}

TEST(Defaults, OnePayloadRangeForTheOptionAndTheService) {
  EXPECT_FALSE(server::udp::max_payload_problem(defaults::kUdpPayloadMin));
  EXPECT_FALSE(server::udp::max_payload_problem(defaults::kUdpPayloadMax));
  EXPECT_FALSE(server::udp::max_payload_problem(defaults::kUdpMaxPayload));
  const auto low = server::udp::max_payload_problem(defaults::kUdpPayloadMin - 1);
  ASSERT_TRUE(low);
  EXPECT_NE(low->find("must be 512..65451"), std::string::npos) << *low;
  EXPECT_TRUE(server::udp::max_payload_problem(defaults::kUdpPayloadMax + 1));
  server::udp::UdpOptions o;
  o.bind = "127.0.0.1";
  o.port = 0;
  o.max_payload = 511;
  EXPECT_THROW(server::udp::UdpService{o}, std::invalid_argument);
}

}  // namespace
}  // namespace vod
