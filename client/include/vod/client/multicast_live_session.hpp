// SPDX-License-Identifier: LGPL-2.1-or-later
// A viewer of a live channel over UDP multicast, with no RDMA device: it checks the channel in the
// server's catalog (read by unicast Write-Record), joins the group the server sends the channel's
// records to (vod-server --live-multicast), and hands the stream out in order through a
// MulticastAssembler, holes reported as discontinuities. Datagrams from any address but the
// server's, of another channel, or that fail the decoder's checks are dropped and counted.
//
// A LiveSource, as LiveSession is, so vod-client, rdmasrc and vod-proxy drive either.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vod/client/interrupter.hpp"
#include "vod/client/live_session.hpp"
#include "vod/client/live_source.hpp"
#include "vod/client/multicast_assembler.hpp"
#include "vod/client/session.hpp"
#include "vod/client/uri.hpp"
#include "vod/defaults.hpp"
#include "vod/protocol/catalog_layout.hpp"

namespace vod::client {

inline constexpr std::uint16_t kLiveMulticastPort = defaults::kLiveMulticastPort;

struct MulticastLiveOptions {
  std::string group;                            // GROUP[:PORT] (IPv6: [GROUP]:PORT), the server's --live-multicast
  std::string interface;                        // IPv4: the address of the interface to join on; IPv6: its name; empty: any
  std::size_t ring_bytes = 8u << 20;            // the receive ring: room for reordering and a slow reader
  std::chrono::milliseconds hole_timeout{200};  // how long a record may wait for its missing datagrams
  UdpOptions udp;                               // to read the catalog from the server's Write-Record port
  std::chrono::milliseconds connect_timeout = defaults::kConnectTimeout;
};

struct MulticastReceiveStats {
  std::uint64_t dropped_source = 0, dropped_truncated = 0, dropped_checksum = 0, dropped_garbage = 0;
};

class MulticastLiveSession final : public LiveSource {
 public:
  // uri: rdma://host[:port]/live/NAME (host is the server whose catalog lists NAME and whose
  // address the datagrams must come from). Throws ClientError.
  MulticastLiveSession(Uri uri, MulticastLiveOptions options);
  ~MulticastLiveSession() override;

  // LiveSource. Holes that outlive hole_timeout are skipped and flagged as discontinuities.
  LiveChunk read(std::span<std::uint8_t> out, std::chrono::milliseconds timeout) override;
  void finish() noexcept override { assembler_.finish(); }
  void interrupt() noexcept override { interrupter_.raise(); }
  void clear_interrupt() noexcept override { interrupter_.clear(); }
  std::vector<int> wait_fds() const override { return {fd_, interrupter_.fd()}; }
  const proto::CatalogEntry& channel() const noexcept override { return channel_; }
  std::string summary() const override;

  const AssemblerStats& stats() const noexcept { return assembler_.stats(); }
  const MulticastReceiveStats& receive_stats() const noexcept { return receive_; }
  std::string group() const { return group_text_; }

 private:
  void drain_socket();
  bool from_server(const sockaddr_storage& from) const;

  Uri uri_;
  MulticastLiveOptions options_;
  Interrupter interrupter_;
  proto::CatalogEntry channel_;
  MulticastAssembler assembler_;
  std::vector<sockaddr_storage> server_addresses_;
  std::string group_text_;
  int fd_ = -1;
  std::vector<std::uint8_t> scratch_;
  MulticastReceiveStats receive_;
};

}  // namespace vod::client
