// SPDX-License-Identifier: LGPL-2.1-or-later
#include "udp/udp_fetcher.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "vod/client/errors.hpp"
#include "vod/cluster/etcd_url.hpp"
#include "vod/log.hpp"
#include "vod/protocol/live_window.hpp"

namespace vod::client {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kCookieRefresh = std::chrono::seconds(50);  // cookies are good for 60 to 120 s

std::uint64_t random64() {
  std::uint64_t v = 0;
  while (getrandom(&v, sizeof v, 0) != static_cast<ssize_t>(sizeof v)) {}
  return v;
}

proto::WriteRecordRegion wire_region(Region r) {
  switch (r) {
    case Region::catalog: return proto::WriteRecordRegion::catalog;
    case Region::movie: return proto::WriteRecordRegion::movie;
    case Region::index: return proto::WriteRecordRegion::index;
  }
  return proto::WriteRecordRegion::catalog;
}

}  // namespace

UdpFetcher::UdpFetcher(const std::string& host, std::uint16_t port, std::uint8_t* ring, std::size_t ring_size, const UdpOptions& options)
    : options_(options),
      ring_(ring),
      ring_size_(ring_size),
      session_(static_cast<std::uint32_t>(random64())),
      rate_bps_(std::max(1e6, options.rate_bps)),
      rate_since_(Clock::now()) {
  server_ = cluster::format_host_port(host, port) + " (UDP)";
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  if (int err = getaddrinfo(host.c_str(), service.c_str(), &hints, &res))
    throw ClientError(ErrorKind::server_unreachable, "cannot resolve " + host + ": " + gai_strerror(err));
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> info(res, freeaddrinfo);
  fd_.reset(socket(info->ai_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd_) throw ClientError(ErrorKind::server_unreachable, std::string("socket: ") + std::strerror(errno));
  // A receive buffer that holds several records: datagrams that find it full are lost and have to
  // be asked for again. SO_RCVBUFFORCE passes net.core.rmem_max where the process may (CAP_NET_ADMIN).
  const int buf = 16 << 20;
  if (setsockopt(fd_.get(), SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf) != 0)
    setsockopt(fd_.get(), SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
  // Connected: the kernel reports an unreachable port, and the path MTU can be asked for.
  if (::connect(fd_.get(), info->ai_addr, info->ai_addrlen) != 0)
    throw ClientError(ErrorKind::server_unreachable, "cannot reach " + server_ + ": " + std::strerror(errno));
  std::memcpy(&peer_, info->ai_addr, info->ai_addrlen);
  int mtu = 0;
  socklen_t mtu_len = sizeof mtu;
  const bool ipv6 = info->ai_family == AF_INET6;
  if (getsockopt(fd_.get(), ipv6 ? IPPROTO_IPV6 : IPPROTO_IP, ipv6 ? IPV6_MTU : IP_MTU, &mtu, &mtu_len) != 0 || mtu <= 0) mtu = 1500;
  // What fits the path without fragmentation: MTU less the IP and UDP headers and ours.
  const int room = mtu - (ipv6 ? 40 : 20) - 8 - static_cast<int>(sizeof(proto::WireWriteRecordDataHeader));
  max_payload_ = static_cast<std::uint32_t>(std::clamp(room, 64, static_cast<int>(proto::kWriteRecordMaxPayload)));
  if (options_.max_payload) max_payload_ = std::min(max_payload_, options_.max_payload);
  hello();  // a throw closes the socket (fd_)
  receiver_ = std::make_unique<WriteRecordReceiver>(fd_.get(), std::span<std::uint8_t>(ring_, ring_size_), session_, peer_,
                                                    max_payload_ + sizeof(proto::WireWriteRecordDataHeader), options_.gap_timeout);
}

UdpFetcher::~UdpFetcher() = default;  // the receiver goes first, then the socket (reverse order of members)

void UdpFetcher::hello() {
  // Hello until a cookie comes back: 5 tries, 250 ms doubling.
  const std::uint64_t nonce = random64();
  const auto bytes = proto::encode(proto::WriteRecordHello{nonce});
  auto wait = std::chrono::milliseconds(250);
  std::string why = "no answer";
  for (int attempt = 0; attempt < 5; ++attempt, wait *= 2) {
    if (::send(fd_.get(), bytes.data(), bytes.size(), 0) < 0) {
      why = std::strerror(errno);
      if (errno == ECONNREFUSED) continue;  // an ICMP port unreachable from an earlier try
    }
    const auto deadline = Clock::now() + wait;
    for (auto now = Clock::now(); now < deadline; now = Clock::now()) {
      pollfd p{fd_.get(), POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count()) + 1) <= 0) break;
      std::uint8_t in[512];
      const ssize_t n = ::recv(fd_.get(), in, sizeof in, MSG_DONTWAIT);
      if (n < 0) {
        if (errno == ECONNREFUSED) why = "nothing listens on that UDP port (is vod-server running with --udp-port?)";
        if (errno != EAGAIN) break;
        continue;
      }
      auto cookie = proto::decode_write_record_cookie(proto::Bytes(in, static_cast<std::size_t>(n)));
      if (!cookie || cookie->nonce != nonce) continue;  // stray datagrams of an earlier session
      cookie_ = cookie->cookie;
      cookie_time_ = Clock::now();
      max_payload_ = std::min(max_payload_, cookie->max_payload);
      return;
    }
  }
  throw ClientError(ErrorKind::server_unreachable, "no Write-Record answer from " + server_ + ": " + why);
}

std::uint64_t UdpFetcher::missing_bytes() const {
  std::uint64_t n = 0;
  for (const auto& [seq, p] : pending_)
    for (const ByteRange& r : receiver_->missing(seq)) n += r.size();
  return n;
}

std::chrono::milliseconds UdpFetcher::allowance(std::uint64_t bytes) const {
  const double wire_s = static_cast<double>(missing_bytes() + bytes) * 8 / rate_bps_;
  return options_.first_timeout + std::chrono::milliseconds(static_cast<long>(wire_s * 2000));
}

void UdpFetcher::measure_rate() {
  // Bytes placed per second over windows of at least 100 ms while records are outstanding.
  const auto now = Clock::now();
  const double secs = std::chrono::duration<double>(now - rate_since_).count();
  if (secs < 0.1) return;
  const std::uint64_t placed = receiver_->stats().placed_bytes;
  if (!pending_.empty() && placed > rate_bytes_) {
    const double measured = static_cast<double>(placed - rate_bytes_) * 8 / secs;
    rate_bps_ = std::clamp(0.5 * rate_bps_ + 0.5 * measured, 1e5, std::max(1e6, options_.rate_bps));
  }
  rate_bytes_ = placed;
  rate_since_ = now;
}

void UdpFetcher::request(const Pending& p, std::uint64_t seq, std::uint64_t region_offset, std::uint64_t length,
                         std::uint64_t buffer_offset) {
  if (Clock::now() - cookie_time_ > kCookieRefresh) hello();
  proto::WriteRecordRequest r;
  r.session_id = session_;
  r.epoch = p.epoch;
  r.record_seq = seq;
  r.cookie = cookie_;
  r.region = wire_region(p.region);
  if (p.region != Region::catalog) {
    r.selector = selector_;
    r.catalog_generation = generation_;
  }
  r.offset = region_offset;
  r.length = length;
  r.buffer_offset = buffer_offset;
  r.buffer_length = ring_size_;
  r.max_payload = max_payload_;
  r.rate_bps = static_cast<std::uint64_t>(options_.rate_bps);
  const auto bytes = proto::encode(r);
  // A request lost to a full socket buffer is a lost datagram like any other: the timeout repairs it.
  (void)::send(fd_.get(), bytes.data(), bytes.size(), MSG_DONTWAIT);
}

void UdpFetcher::fetch(std::uint32_t slot, Region region, const proto::RegionDescriptor&, std::uint64_t offset, std::uint32_t length,
                       std::uint8_t* dest) {
  epoch_used_ = true;
  const std::uint64_t seq = next_seq_++;
  Pending p{slot, region, offset, static_cast<std::uint64_t>(dest - ring_), epoch_};
  receiver_->expect(seq, epoch_, p.buffer_offset, length, Clock::now() + allowance(length));
  slots_[slot] = seq;
  pending_[seq] = p;
  request(p, seq, offset, length, p.buffer_offset);
}

void UdpFetcher::forget(std::uint32_t slot) noexcept {
  auto it = slots_.find(slot);
  if (it == slots_.end()) return;
  receiver_->forget(it->second);
  pending_.erase(it->second);
  slots_.erase(it);
  // The next request moves to a new epoch: the server drops what this one still had queued.
  if (epoch_used_) {
    ++epoch_;
    epoch_used_ = false;
  }
}

void UdpFetcher::poll() {
  std::vector<CompletionRecord> done;
  std::vector<proto::WriteRecordError> errors;
  receiver_->receive(done, errors);
  const ReceiverStats& r = receiver_->stats();
  if (const std::uint64_t heard = r.placed_bytes + r.duplicate_bytes + r.errors; heard != heard_) {
    heard_ = heard;
    last_heard_ = Clock::now();
  }
  measure_rate();
  receiver_->expire(Clock::now(), done);
  std::string failure;
  for (const auto& e : errors) {
    auto it = pending_.find(e.record_seq);
    switch (e.code) {
      case proto::RejectCode::bad_cookie:
        hello();  // then the timeouts ask again for whatever did not come
        break;
      case proto::RejectCode::rate_limited: break;  // the record times out and is asked for again, with backoff
      case proto::RejectCode::internal_error:
        if (e.reason == proto::kOutsideWindowReason && it != pending_.end()) {  // a DVR window's bytes it no longer holds
          outside_ = true;
          failure = failure.empty() ? e.reason : failure;
          break;
        }
        [[fallthrough]];
      default:
        if (it != pending_.end() && failure.empty())
          failure = server_ + " refused record " + std::to_string(e.record_seq) + ": " + proto::to_string(e.code) + ": " + e.reason;
    }
  }
  for (const CompletionRecord& c : done) {
    auto it = pending_.find(c.record_seq);
    if (it == pending_.end()) continue;
    Pending& p = it->second;
    if (c.complete) {
      const std::uint32_t slot = p.slot;
      slots_.erase(slot);
      pending_.erase(it);
      done_(slot, true, {});
      continue;
    }
    if (p.retries >= options_.retries) {
      const std::uint32_t slot = p.slot;
      const std::string why = "record " + std::to_string(c.record_seq) + " from " + server_ + " still misses " +
                              std::to_string(receiver_->missing(c.record_seq).size()) + " range(s) after " + std::to_string(p.retries) +
                              " repairs";
      receiver_->forget(c.record_seq);
      slots_.erase(slot);
      pending_.erase(it);
      done_(slot, false, why);
      continue;
    }
    // Ask again for exactly the holes, then wait longer (backoff).
    ++p.retries;
    for (const ByteRange& hole : receiver_->missing(c.record_seq)) {
      request(p, c.record_seq, p.offset + (hole.begin - p.buffer_offset), hole.size(), hole.begin);
      ++repairs_;
      repair_bytes_ += hole.size();
    }
    const auto backoff =
        std::min(allowance(0) + options_.first_timeout * ((1u << std::min(p.retries, 4u)) - 1), std::chrono::milliseconds(5000));
    receiver_->rearm(c.record_seq, Clock::now() + backoff);
  }
  if (outside_) {  // the caller hears it as ClientError(out_of_range); the connection is not lost
    for (auto& [seq, p] : pending_) {
      receiver_->forget(seq);
      done_(p.slot, false, failure);
    }
    pending_.clear();
    slots_.clear();
    outside_ = false;
    throw ClientError(ErrorKind::out_of_range, "a range of the window: " + failure);
  }
  if (!failure.empty()) {
    // The server knows no such movie or generation any more: the session reconnects and finds out.
    for (auto& [seq, p] : pending_) {
      receiver_->forget(seq);
      done_(p.slot, false, failure);
    }
    pending_.clear();
    slots_.clear();
  }
}

int UdpFetcher::next_timeout_ms() const noexcept {
  auto next = receiver_->next_deadline();
  if (!next) return -1;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*next - Clock::now()).count();
  return static_cast<int>(std::clamp<long>(ms + 1, 0, 60'000));
}

std::string UdpFetcher::summary() const {
  const ReceiverStats& r = receiver_stats();
  return "UDP: " + std::to_string(r.datagrams) + " datagrams, " + std::to_string(r.placed_bytes) + " bytes placed, " +
         std::to_string(r.duplicate_bytes) + " duplicate, " + std::to_string(repair_requests()) + " repair requests (" +
         std::to_string(repair_bytes()) + " bytes); dropped " + std::to_string(r.dropped()) + " (checksum " +
         std::to_string(r.dropped_checksum) + ", late " + std::to_string(r.dropped_late) + ", epoch " + std::to_string(r.dropped_epoch) +
         ", session " + std::to_string(r.dropped_session) + ", source " + std::to_string(r.dropped_source) + ", bounds " +
         std::to_string(r.dropped_bounds) + ", truncated " + std::to_string(r.dropped_truncated) + ", garbage " +
         std::to_string(r.dropped_garbage) + "); payload " + std::to_string(max_payload()) + " bytes";
}

}  // namespace vod::client
