// SPDX-License-Identifier: LGPL-2.1-or-later
// Every default that more than one program or module shares, defined once: the options of
// vod-server, vod-client, vod-proxy, vod-mount and rdmasrc, libvodclient's option structs and the
// docs all take them from here, so `--help`, the code and the pages never disagree.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "vod/protocol/write_record.hpp"

namespace vod::defaults {

// Ports (docs/protocol.md): rdma_cm, Write-Record over UDP, live multicast.
inline constexpr std::uint16_t kRdmaPort = 7470;
inline constexpr std::uint16_t kUdpPort = proto::kWriteRecordPort;  // 7471, a protocol fact
inline constexpr std::uint16_t kLiveMulticastPort = 7472;

// The client's read pipeline (libvodclient EngineOptions; rdmasrc, vod-proxy and vod-mount options).
inline constexpr std::size_t kChunkBytes = 256 * 1024;     // bytes per RDMA Read
inline constexpr unsigned kReadDepth = 16;                 // Reads in flight wanted
inline constexpr std::size_t kReadaheadBytes = 4u << 20;   // the most read-ahead (sizes the ring)
inline constexpr unsigned kReadaheadDepth = 2;             // read-ahead Reads in flight at most
inline constexpr std::size_t kFirstReadBytes = 16 * 1024;  // the head Read after a start or a seek
// The QP's local ACK timeout exponent (rdma::ConnectOptions::ack_timeout) of every client
// connection, VoD and live: 17 is 537 ms a try (7 retries), so a server that died or vanished is
// noticed sooner than with rdma_cm's RoCE default (about 2 s a try). 0: rdma_cm's.
inline constexpr std::uint8_t kAckTimeout = 17;
// How long one connection attempt (address, route, connect) may take: every client's.
inline constexpr std::chrono::milliseconds kConnectTimeout{5000};

// Reconnecting after a connection breaks.
inline constexpr std::chrono::milliseconds kReconnectFor{30000};       // libvodclient, vod-client, rdmasrc, vod-mount
inline constexpr std::chrono::milliseconds kProxyReconnectFor{10000};  // vod-proxy: its HTTP clients wait on it
inline constexpr std::chrono::milliseconds kBackoffFirst{100};
inline constexpr std::chrono::milliseconds kBackoffMax{2000};

// Write-Record over UDP.
inline constexpr std::uint32_t kUdpMaxPayload = 8192;  // the server's cap on payload per datagram
inline constexpr std::uint32_t kUdpPayloadMin = 512;   // the least --udp-max-payload (and UdpOptions) accept
inline constexpr std::uint32_t kUdpPayloadMax = static_cast<std::uint32_t>(proto::kWriteRecordMaxPayload);
inline constexpr std::uint64_t kUdpMaxRecord = 16u << 20;  // the largest range one request may ask for
inline constexpr unsigned kLiveMulticastPayload = 1316;    // 7 TS packets: fits a 1500-byte MTU
// The rate one client address gets at most (vod-server --udp-client-rate), and so the rate a
// client asks for by default: all it may have.
inline constexpr double kUdpClientRateBps = 400e6;

}  // namespace vod::defaults
