// SPDX-License-Identifier: LGPL-2.1-or-later
// MSG_ZEROCOPY for the Write-Record sender (vod-server --udp-zero-copy, off by default): the kernel
// sends a train's payload straight from the movie's memory instead of copying it into socket
// buffers, and tells on the socket's error queue when it no longer needs the memory.
//
// Every pinned byte lives until that notification: the train's datagram headers are copied into a
// block of their own here (the sender's scratch headers are reused at the next batch), and the
// payload's owner (the loaded movie, or its generation's bytes) is held. Only memory that is never
// reused in place is sent this way: a loaded movie's bytes. The segment cache's slots are refilled
// and the live ring is overwritten, so their sends are copied as before. At most `max_in_flight`
// sends are pinned at once; beyond that a send is copied. Loopback and veth copy anyway (the
// notification says so): the gain shows only on a real NIC, and is unmeasured here.
//
// Ids: the kernel numbers each successful MSG_ZEROCOPY send of the socket from 0 (a sendmmsg counts
// each message it sent), and notifies ranges [lo, hi] of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <memory>
#include <span>
#include <vector>

#include "vod/protocol/write_record.hpp"

namespace vod::server::udp {

struct ZeroCopyStats {
  std::uint64_t sends = 0;      // sent with MSG_ZEROCOPY
  std::uint64_t bytes = 0;      // ... their bytes, headers included
  std::uint64_t completed = 0;  // ... whose notification came
  std::uint64_t copied = 0;     // ... of which the kernel copied after all (loopback, veth, some NICs)
  std::size_t pinned_max = 0;   // sends pinned at once, at most
};

class ZeroCopySends {
 public:
  using Header = proto::WireWriteRecordDataHeader;
  explicit ZeroCopySends(std::size_t max_in_flight) : max_(max_in_flight) {}

  // Whether one more send may be pinned now.
  bool room() const noexcept { return pending_.size() + staged_.size() < max_; }
  // How many of a train's first `count` datagrams (payloads of `payload` bytes at most, cut from
  // `bytes`) one zero-copy send can carry: the kernel puts every iovec's pages in the skb's
  // fragments, of which it has 17 (MAX_SKB_FRAGS; 16 kept here), else the send fails with EMSGSIZE.
  // Counts the staged header block's pages too (it is page-aligned). 0: not even one datagram.
  static std::size_t segments_that_fit(std::span<const std::uint8_t> bytes, std::size_t payload, std::size_t count) noexcept;
  static constexpr std::size_t kMaxFrags = 16;
  // Stages a send: its headers are copied into a block that lives until the send completes, and
  // `owner` is held as long. Returns where the send's header iovecs must point.
  Header* stage(std::span<const Header> headers, std::size_t bytes, std::shared_ptr<const void> owner);
  // After the sendmmsg of the staged sends: the first `sent` left (each took the next id); the rest
  // did not, and are released now.
  void sent(std::size_t sent);
  // Reads the error queue of `fd` (non-blocking): each notified send releases its memory.
  void reap(int fd);
  // Waits up to `ms` for what is pinned to complete (the socket is about to close).
  void drain(int fd, int ms);

  std::size_t pinned() const noexcept { return pending_.size(); }
  const ZeroCopyStats& stats() const noexcept { return stats_; }

 private:
  struct Pinned {
    std::uint32_t id = 0;
    bool done = false;
    std::size_t bytes = 0;
    struct Free {
      void operator()(Header* p) const noexcept { std::free(p); }
    };
    std::unique_ptr<Header[], Free> headers;  // page-aligned (segments_that_fit counts on it)
    std::shared_ptr<const void> owner;
  };
  void complete(std::uint32_t lo, std::uint32_t hi, bool copied);

  std::size_t max_;
  std::vector<Pinned> staged_;
  std::deque<Pinned> pending_;  // in id order
  std::uint32_t next_id_ = 0;
  ZeroCopyStats stats_;
};

}  // namespace vod::server::udp
