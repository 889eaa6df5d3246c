// SPDX-License-Identifier: LGPL-2.1-or-later
#include "udp/zero_copy_sends.hpp"

#include <linux/errqueue.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <new>

namespace vod::server::udp {

namespace {
constexpr std::size_t kPage = 4096;
std::size_t pages(std::uintptr_t at, std::size_t n) noexcept { return n == 0 ? 0 : (at + n - 1) / kPage - at / kPage + 1; }
}  // namespace

std::size_t ZeroCopySends::segments_that_fit(std::span<const std::uint8_t> bytes, std::size_t payload, std::size_t count) noexcept {
  std::size_t frags = 0;
  const auto base = reinterpret_cast<std::uintptr_t>(bytes.data());
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t from = k * payload;
    if (from >= bytes.size()) return k;
    frags += pages(k * sizeof(Header), sizeof(Header)) + pages(base + from, std::min(payload, bytes.size() - from));
    if (frags > kMaxFrags) return k;
  }
  return count;
}

ZeroCopySends::Header* ZeroCopySends::stage(std::span<const Header> headers, std::size_t bytes, std::shared_ptr<const void> owner) {
  Pinned p;
  p.bytes = bytes;
  const std::size_t size = (headers.size_bytes() + kPage - 1) / kPage * kPage;
  p.headers.reset(static_cast<Header*>(std::aligned_alloc(kPage, size)));
  if (!p.headers) throw std::bad_alloc();
  std::copy(headers.begin(), headers.end(), p.headers.get());
  p.owner = std::move(owner);
  staged_.push_back(std::move(p));
  return staged_.back().headers.get();
}

void ZeroCopySends::sent(std::size_t sent) {
  for (std::size_t i = 0; i < std::min(sent, staged_.size()); ++i) {
    staged_[i].id = next_id_++;
    pending_.push_back(std::move(staged_[i]));
    ++stats_.sends;
    stats_.bytes += staged_[i].bytes;
  }
  staged_.clear();  // not sent: nothing references them
  stats_.pinned_max = std::max(stats_.pinned_max, pending_.size());
}

void ZeroCopySends::complete(std::uint32_t lo, std::uint32_t hi, bool copied) {
  const std::uint32_t span = hi - lo;  // ids wrap at 2^32
  for (Pinned& p : pending_)
    if (!p.done && static_cast<std::uint32_t>(p.id - lo) <= span) {
      p.done = true;
      ++stats_.completed;
      if (copied) ++stats_.copied;
    }
  // Released in order: one notified out of order waits for those before it (bounded by max_).
  while (!pending_.empty() && pending_.front().done) pending_.pop_front();
}

void ZeroCopySends::reap(int fd) {
  if (pending_.empty()) return;
  for (int round = 0; round < 64; ++round) {
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(sock_extended_err) + sizeof(sockaddr_in6))];
    msghdr m{};
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    if (recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) return;  // EAGAIN: nothing more
    for (cmsghdr* cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
      const bool recverr =
          (cm->cmsg_level == SOL_IP && cm->cmsg_type == IP_RECVERR) || (cm->cmsg_level == SOL_IPV6 && cm->cmsg_type == IPV6_RECVERR);
      if (!recverr) continue;
      sock_extended_err e;
      std::memcpy(&e, CMSG_DATA(cm), sizeof e);
      if (e.ee_origin == SO_EE_ORIGIN_ZEROCOPY && e.ee_errno == 0)
        complete(e.ee_info, e.ee_data, (e.ee_code & SO_EE_CODE_ZEROCOPY_COPIED) != 0);
    }
  }
}

void ZeroCopySends::drain(int fd, int ms) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!pending_.empty() && std::chrono::steady_clock::now() < end) {
    pollfd p{fd, 0, 0};  // POLLERR is always reported
    poll(&p, 1, 10);
    reap(fd);
  }
}

}  // namespace vod::server::udp
