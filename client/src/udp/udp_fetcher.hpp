// SPDX-License-Identifier: LGPL-2.1-or-later
// Blocks by UDP Write-Record: each fetch is a request for a chunk of a region, answered as one
// record placed into the ring by a WriteRecordReceiver (the ring is the advertised buffer). Holes
// are repaired by asking again for exactly the missing ranges (a NACK is a request for less), with
// backoff; a record still incomplete after its retries fails the fetch (the session reconnects).
// A seek forgets in-flight fetches at once: the next request carries a newer epoch, which makes the
// server drop what the older one still had queued, and the receiver drops its datagrams.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "vod/client/fetcher.hpp"
#include "vod/client/session.hpp"
#include "vod/client/write_record_receiver.hpp"
#include "vod/unique_fd.hpp"

namespace vod::client {

class UdpFetcher final : public Fetcher {
 public:
  // Resolves host:port, opens a connected UDP socket and takes a cookie (hello, with retries).
  // Throws ClientError(server_unreachable) when nobody answers.
  UdpFetcher(const std::string& host, std::uint16_t port, std::uint8_t* ring, std::size_t ring_size, const UdpOptions& options);
  ~UdpFetcher() override;

  void on_done(Done done) override { done_ = std::move(done); }
  void fetch(std::uint32_t slot, Region region, const proto::RegionDescriptor& where, std::uint64_t offset, std::uint32_t length,
             std::uint8_t* dest) override;
  bool can_recall() const noexcept override { return true; }
  const char* fetch_name() const noexcept override { return "Write-Record range over UDP"; }
  std::string summary() const override;  // "UDP: N datagrams, ... payload P bytes"
  void select_movie(std::uint64_t name_hash, std::uint32_t generation) noexcept override {
    selector_ = name_hash;
    generation_ = generation;
  }
  void forget(std::uint32_t slot) noexcept override;
  bool outside_window() const noexcept override { return outside_; }
  void poll() override;
  std::vector<int> wait_fds() const override { return {fd_.get()}; }
  int control_fd() const noexcept override { return -1; }
  void check_events() override {}
  void arm() override {}
  bool armed() const noexcept override { return true; }  // a socket needs no arming
  void consume() noexcept override {}
  int next_timeout_ms() const noexcept override;
  unsigned depth() const noexcept override { return options_.depth; }
  std::size_t max_fetch() const noexcept override { return 16u << 20; }
  bool waits_on_server() const noexcept override { return !pending_.empty(); }  // every range is the server's work
  std::optional<std::chrono::steady_clock::time_point> last_heard() const noexcept override { return last_heard_; }

  const ReceiverStats& receiver_stats() const noexcept { return receiver_->stats(); }
  std::uint64_t repair_requests() const noexcept { return repairs_; }
  std::uint64_t repair_bytes() const noexcept { return repair_bytes_; }
  std::uint32_t max_payload() const noexcept { return max_payload_; }

 private:
  struct Pending {
    std::uint32_t slot;
    Region region;
    std::uint64_t offset;  // in the region
    std::uint64_t buffer_offset;
    std::uint32_t epoch;
    unsigned retries = 0;
  };
  void hello();
  void request(const Pending& p, std::uint64_t seq, std::uint64_t region_offset, std::uint64_t length, std::uint64_t buffer_offset);
  // How long `bytes` more may take to arrive: a round trip's allowance plus twice their time on the
  // wire behind everything still missing, at the rate datagrams have been arriving (the server may
  // send slower than asked: its own limits).
  std::chrono::milliseconds allowance(std::uint64_t bytes) const;
  std::uint64_t missing_bytes() const;
  void measure_rate();

  std::string server_;
  UdpOptions options_;
  UniqueFd fd_;  // declared before receiver_, which reads it: closed after the receiver is gone
  sockaddr_storage peer_{};
  std::uint8_t* ring_;
  std::size_t ring_size_;
  std::uint32_t session_;
  std::uint32_t epoch_ = 1;
  bool epoch_used_ = false;  // a fetch carries the current epoch: a forget moves to the next
  bool outside_ = false;     // a DVR window's range was refused as no longer (or not yet) in the window
  std::uint64_t next_seq_ = 1;
  std::uint64_t selector_ = 0;
  std::uint32_t generation_ = 0;
  std::uint32_t max_payload_ = 0;
  std::optional<std::chrono::steady_clock::time_point> last_heard_;  // a datagram or an error of this session
  std::uint64_t heard_ = 0;                                          // what the receiver counted then
  proto::Cookie cookie_{};
  std::chrono::steady_clock::time_point cookie_time_;
  std::unique_ptr<WriteRecordReceiver> receiver_;
  std::map<std::uint64_t, Pending> pending_;      // by record seq
  std::map<std::uint32_t, std::uint64_t> slots_;  // slot -> record seq
  std::uint64_t repairs_ = 0;
  std::uint64_t repair_bytes_ = 0;
  double rate_bps_;  // measured arrival rate (starts at the rate asked for)
  std::uint64_t rate_bytes_ = 0;
  std::chrono::steady_clock::time_point rate_since_;
  Done done_;
};

}  // namespace vod::client
