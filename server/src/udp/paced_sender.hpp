// SPDX-License-Identifier: LGPL-2.1-or-later
// The Write-Record service's sender: it drives the ring of the client table (client_table.hpp) with
// the turn decider (send_turn.hpp), builds trains (trains.hpp) from the jobs' bytes (a cached
// movie's segments faulted in from the segment cache as the job goes) and sends them a batch per
// sendmmsg (udp_socket.hpp). Paced addresses sleep, and one timer wakes the sender for the first
// of: the server's bucket, the first sleeper, the first idle address to forget.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "cache/segment_cache.hpp"
#include "udp/client_table.hpp"
#include "udp/test_drop.hpp"
#include "udp/token_bucket.hpp"
#include "udp/udp_options.hpp"
#include "udp/udp_socket.hpp"
#include "udp/zero_copy_sends.hpp"
#include "vod/unique_fd.hpp"

namespace vod::server::udp {

class PacedSender {
 public:
  // Tells a client why its job went (the disk failed it): the service's error path, with its budgets.
  using Refuse = std::function<void(const Endpoint& to, const AddressKey& key, std::size_t request_size, proto::WriteRecordError e)>;

  // Throws std::runtime_error when the timer cannot be had.
  PacedSender(const UdpOptions& options, UdpSocket& socket, ClientTable& table, cache::SegmentCache* cache, TestDropper& drops,
              UdpStats& stats, Refuse refuse);
  ~PacedSender();
  PacedSender(const PacedSender&) = delete;
  PacedSender& operator=(const PacedSender&) = delete;

  int timer_fd() const noexcept { return timer_.get(); }
  void on_timer();
  // Sends what the buckets allow now, then sets the timer.
  void pump(Clock::time_point now);
  void reap_zero_copy();  // MSG_ZEROCOPY notifications on the socket's error queue
  const ZeroCopyStats* zero_copy_stats() const noexcept { return zero_copy_ ? &zero_copy_->stats() : nullptr; }

 private:
  // The first of the address's sessions (round robin) whose pacing allows its front job's next
  // datagram now and whose bytes are ready; null if none. Jobs the disk failed go, with an error.
  Session* sendable(Client& c, Clock::time_point now);
  // What of the job's range can be sent now: the rest of it, or for a cached movie the rest of the
  // segment at `sent` when that is resident (else empty: it is faulted in, and the address woken
  // when it is). `failed` when the disk could not give it.
  struct Ready {
    std::span<const std::uint8_t> bytes;
    bool failed = false;
    proto::SegmentStatus why = proto::SegmentStatus::ok;  // when failed
  };
  Ready ready_bytes(const Client& c, Job& j, Clock::time_point now);
  Clock::time_point wake_time(Client& c, Clock::time_point now);
  // Builds the front address's next train into trains_[slot]; false when the test hook lost it.
  bool build(Client& c, Session& s, double budget, std::size_t slot, Clock::time_point now);
  // Sends trains_[0, n): the zero-copy ones first. Returns whether the socket took them all.
  bool send_batch(std::size_t n);
  void arm_timer(Clock::time_point now);
  bool gso() const noexcept { return socket_.gso() && !drops_.active(); }

  UdpOptions options_;
  UdpSocket& socket_;
  ClientTable& table_;
  cache::SegmentCache* cache_;
  TestDropper& drops_;
  UdpStats& stats_;
  Refuse refuse_;
  std::shared_ptr<PacedSender*> self_;  // the cache's answers hold it weakly: null once this is gone
  UniqueFd timer_;
  Clock::time_point armed_ = Clock::time_point::max();  // what timer_ is set to (max: disarmed)
  TokenBucket total_;                                   // --udp-max-rate
  bool socket_full_ = false;                            // the last pump stopped at a full socket
  double server_wait_ = 0;                              // the last pump stopped for total_: bytes the next send needs
  std::unique_ptr<Train[]> trains_;                     // a batch, allocated once
  // The owners of jobs that finished in the batch being built: their bytes stay alive until the
  // sendmmsg that sends them has returned.
  std::vector<std::shared_ptr<const void>> keep_;
  std::unique_ptr<ZeroCopySends> zero_copy_;  // --udp-zero-copy, when the kernel took SO_ZEROCOPY
  bool zero_copy_told_ = false;               // logged that the kernel copies on this path
};

}  // namespace vod::server::udp
