// SPDX-License-Identifier: LGPL-2.1-or-later
// A viewer of a live channel: an RC connection whose connect request selects the channel, receives
// posted for the server's notifications with credits granted for them, and RDMA Reads of the
// published bytes from the channel's ring, each batch followed by a read of the live header that
// proves the bytes were not overwritten meanwhile (LiveCursor decides; this class does the I/O).
//
// With notifications off (poll_interval > 0) the viewer grants no credit and follows the header
// alone, reading it every poll_interval.
//
// Work requests on the shared CQ are tagged (Work): read (a data Read, index = its slot), header,
// recv (index = receive slot), send (a credit message, index = send slot).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vod/client/errors.hpp"
#include "vod/client/interrupter.hpp"
#include "vod/client/live_cursor.hpp"
#include "vod/client/live_source.hpp"
#include "vod/client/reconnect.hpp"
#include "vod/client/stats.hpp"
#include "vod/client/uri.hpp"
#include "vod/defaults.hpp"
#include "vod/protocol/catalog_layout.hpp"
#include "vod/protocol/private_data.hpp"
#include "vod/rdma/completion_hub.hpp"
#include "vod/rdma/connection.hpp"

namespace vod::client {

struct LiveOptions {
  std::uint32_t credits = 16;                      // receives posted: notifications the server may send ahead
  std::size_t staging_bytes = 4u << 20;            // bytes read per batch at most
  std::size_t chunk_size = defaults::kChunkBytes;  // bytes per RDMA Read at most (and the device's max message)
  unsigned read_depth = defaults::kReadDepth;      // wanted; the server and devices may allow fewer
  std::chrono::milliseconds poll_interval{0};      // > 0: no notifications; read the header this often
  std::chrono::milliseconds connect_timeout = defaults::kConnectTimeout;
  std::uint8_t ack_timeout = defaults::kAckTimeout;  // as SessionOptions::ack_timeout: a dead server is noticed as soon
  ReconnectPolicy reconnect;                         // after the connection breaks (reconnect.hpp)
  std::shared_ptr<rdma::CompletionHub> hub;          // shared with other connections of this thread; null: own
  // Start at this stream offset, if the ring still holds it (a viewer coming from the DVR window),
  // instead of the newest keyframe.
  std::optional<std::uint64_t> start_offset;
};

struct LiveStats {
  std::uint64_t bytes_delivered = 0;
  std::uint64_t notifications = 0;
  std::uint64_t coalesced = 0;  // notifications that covered several records
  std::uint64_t credit_messages = 0;
  std::uint64_t header_reads = 0;
  std::uint64_t torn_headers = 0;  // a header read caught mid-update and read again
  std::uint64_t reconnects = 0;
  LiveCursorStats cursor;
  LatencyHistogram latency_us;  // server's publish time to delivery (CLOCK_REALTIME on both)

  std::string summary() const;
};

class LiveSession final : public LiveSource {
 public:
  // Connects to uri (a /live/ URI; a fleet URI, rdma+etcd://…/live/NAME: a member that carries the
  // channel, and on a dead, hung or draining member another one, from its newest keyframe, the
  // discontinuity marked). Throws ClientError.
  LiveSession(Uri uri, LiveOptions options = {});
  ~LiveSession() override;

  // LiveSource. read() reconnects underneath (options.reconnect).
  LiveChunk read(std::span<std::uint8_t> out, std::chrono::milliseconds timeout) override;
  void finish() noexcept override {
    if (cursor_) cursor_->finish();
  }
  void interrupt() noexcept override { interrupter_.raise(); }
  void clear_interrupt() noexcept override { interrupter_.clear(); }
  // read() with a zero timeout never blocks (short of a reconnect) and leaves the completion
  // channel armed, so these fds turn readable when there may be more to read.
  std::vector<int> wait_fds() const override;
  const proto::CatalogEntry& channel() const noexcept override { return channel_; }
  std::string summary() const override { return stats_.summary(); }

  const LiveStats& stats() const noexcept { return stats_; }
  std::string server() const;

 private:
  // The kinds of its work requests' ids (one enum for its hub owner).
  enum class Work : std::uint8_t { read = 1, header = 2, recv = 3, send = 4, status = 5 };
  void connect();
  // A fleet URI: the members that list the channel, in placement order (the one lost last goes last),
  // the first that accepts.
  void connect_in_fleet();
  // In a fleet: the server's status words probed every 250 ms, and a dead, hung or draining member
  // left (as a lost connection) for another that carries the channel. live_session_pipeline.cpp.
  void watch_step();
  void post_status_probe();
  void on_status();
  std::uint8_t* status_slot() noexcept;  // where the probe lands: after the receive slots
  void reconnect(const std::string& why);
  void drop_connection() noexcept;
  void on_completion(const ibv_wc& wc, rdma::WorkId id);
  void on_notification(std::size_t slot, std::size_t length);
  void post_recv(std::uint32_t slot);
  void return_credit(bool force);
  void post_batch();
  void post_header_read();
  void check_batch();
  bool wait(std::chrono::steady_clock::time_point deadline);
  void pump();

  Uri uri_;                   // the server: the member connected to, with a fleet URI
  std::optional<Uri> fleet_;  // the fleet URI the session was opened with
  std::string lost_member_;   // the member last lost: tried last by the reconnect
  LiveOptions options_;
  std::shared_ptr<rdma::CompletionHub> hub_;  // before the endpoint: outlives its QP
  Interrupter interrupter_;
  std::vector<std::uint8_t> memory_;  // staging | header slot | receive slots | send slots
  std::unique_ptr<rdma::ClientEndpoint> ep_;
  ibv_mr* mr_ = nullptr;
  std::uint32_t owner_ = 0;
  proto::AcceptData accept_;
  proto::CatalogEntry channel_;
  unsigned depth_ = 1;
  std::size_t max_read_ = 0;

  std::unique_ptr<LiveCursor> cursor_;
  // The batch in flight: data Reads, then the header Read that validates them.
  enum class Batch { idle, reading, ready } batch_ = Batch::idle;
  LiveRange batch_range_;
  unsigned reads_outstanding_ = 0;
  bool header_outstanding_ = false;
  bool header_only_ = false;  // a header Read without data (polling, or a torn header)
  std::size_t delivered_in_batch_ = 0;
  std::chrono::steady_clock::time_point next_poll_;
  std::string failure_;

  std::uint32_t credits_to_return_ = 0;
  std::uint64_t last_seq_ = 0;
  unsigned sends_outstanding_ = 0;
  std::uint32_t next_send_slot_ = 0;
  std::deque<std::pair<std::uint64_t, std::uint64_t>> published_;  // (end offset, publish time us)
  LiveStats stats_;
  struct Watch;  // live_session_pipeline.cpp: the probes and what they saw
  std::unique_ptr<Watch> watch_;
};

}  // namespace vod::client
