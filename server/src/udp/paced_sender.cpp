// SPDX-License-Identifier: LGPL-2.1-or-later
#include "udp/paced_sender.hpp"

#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "udp/send_turn.hpp"
#include "udp/trains.hpp"
#include "vod/log.hpp"
#include "vod/protocol/live_window.hpp"

namespace vod::server::udp {

namespace {

constexpr std::size_t kHeader = sizeof(proto::WireWriteRecordDataHeader);
constexpr auto kMinTimer = std::chrono::microseconds(50);    // the soonest the timer is set for
constexpr auto kSweepGrid = std::chrono::milliseconds(250);  // idle addresses are swept on this grid

double wire_bytes(std::uint32_t payload) noexcept { return static_cast<double>(payload + kHeader); }

}  // namespace

PacedSender::PacedSender(const UdpOptions& o, UdpSocket& socket, ClientTable& table, cache::SegmentCache* cache, TestDropper& drops,
                         UdpStats& stats, Refuse refuse)
    : options_(o),
      socket_(socket),
      table_(table),
      cache_(cache),
      drops_(drops),
      stats_(stats),
      refuse_(std::move(refuse)),
      self_(std::make_shared<PacedSender*>(this)),
      total_(o.max_rate_bps / 8, std::max(256e3, burst_for(o.max_rate_bps / 8, o.max_payload)), Clock::now()),
      trains_(std::make_unique<Train[]>(UdpSocket::kBatch)) {
  keep_.reserve(UdpSocket::kBatch);
  if (socket.zero_copy()) zero_copy_ = std::make_unique<ZeroCopySends>(std::max<std::size_t>(o.zero_copy_max_pinned, 1));
  timer_.reset(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
  if (!timer_) throw std::runtime_error(std::string("timerfd_create: ") + std::strerror(errno));
}

PacedSender::~PacedSender() {
  if (!zero_copy_) return;
  // The kernel may still read pinned headers: wait a little for their notifications first.
  zero_copy_->drain(socket_.fd(), 200);
  const ZeroCopyStats& z = zero_copy_->stats();
  log::info("udp", "MSG_ZEROCOPY: " + std::to_string(z.sends) + " sends of " + std::to_string(z.bytes) + " bytes, " +
                       std::to_string(z.completed) + " completed (" + std::to_string(z.copied) + " copied by the kernel), at most " +
                       std::to_string(z.pinned_max) + " pinned at once");
}

void PacedSender::reap_zero_copy() {
  if (!zero_copy_) return;
  zero_copy_->reap(socket_.fd());
  if (!zero_copy_told_ && zero_copy_->stats().copied > 0) {
    zero_copy_told_ = true;
    log::info("udp",
              "--udp-zero-copy: the kernel copied a zero-copy send (loopback and veth always do, as does a NIC without "
              "scatter-gather): no gain on this path");
  }
}

void PacedSender::on_timer() {
  std::uint64_t expirations = 0;
  (void)!::read(timer_.get(), &expirations, sizeof expirations);
  armed_ = Clock::time_point::max();  // a one-shot timer that fired is disarmed
  pump(Clock::now());
}

Session* PacedSender::sendable(Client& c, Clock::time_point now) {
  const std::size_t n = c.sessions.size();
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = (c.next_session + k) % n;
    Session& s = c.sessions[i];
    if (s.jobs.empty() || s.pace.available(now) < wire_bytes(s.jobs.front().data.payload)) continue;
    Job& j = s.jobs.front();
    if (j.data.cached) {
      const Ready r = ready_bytes(c, j, now);
      if (r.failed) {  // the disk or the origin failed it: the client hears why, and the job goes
        // At most kWriteRecordReasonMax (48) bytes: an error is never larger than the request.
        const std::string why = r.why == proto::SegmentStatus::origin_error ? "the server's origin failed to deliver it"
                                : r.why == proto::SegmentStatus::changed    ? "the movie changed at the server's origin"
                                : r.why == proto::SegmentStatus::out_of_range
                                    ? "not in the live window now"  // a DVR window's chunk being written
                                    : "the server could not read it from its disk";
        refuse_(j.to, c.key, j.request_size, {s.id, j.epoch, j.record_seq, proto::RejectCode::internal_error, why});
        table_.finish_front_job(c, s);
        continue;
      }
      if (r.bytes.empty()) continue;  // its segment is being read in
    }
    c.next_session = i;
    return &s;
  }
  return nullptr;
}

PacedSender::Ready PacedSender::ready_bytes(const Client& c, Job& j, Clock::time_point now) {
  if (!j.data.cached) return {j.data.bytes.subspan(static_cast<std::size_t>(j.sent)), false};
  if (j.fault && !j.fault->done) return {};
  if (j.fault && j.fault->status != proto::SegmentStatus::ok) return {{}, true, j.fault->status};
  const std::uint64_t at = j.data.offset + j.sent, segment_size = cache_->options().segment_size;
  const cache::CachedFile& file = *j.data.cached;
  const std::uint64_t g = at / segment_size;  // a DVR window's: a stream's segment, in chunk g mod N of lap g / N
  const auto segment = static_cast<std::uint32_t>(file.window() ? g % file.segments() : g);
  if (file.window() && file.window()->complete_lap(segment) != static_cast<std::uint32_t>(g / file.segments()))
    return {{}, true, proto::SegmentStatus::out_of_range};  // overwritten, or not whole yet: never another lap's bytes
  // Checked at every train, and sent in the same turn of the loop: a slot holding the segment now
  // is not refilled before the datagrams have left (sendmsg copies them).
  // The client's address asks (a UDP client's grace protects its fair share of the slots, as a
  // connection's does): the high bit keeps it apart from connections' ids.
  const cache::Requester who = (1ull << 63) | ((c.key.prefix ^ (std::uint64_t{c.key.family} << 56)) & ~(1ull << 63));
  const auto whole = cache_->resident_bytes(*j.data.cached, segment, now, who);
  if (!whole.empty()) {
    j.fault.reset();
    const std::uint64_t in = at - g * segment_size;
    return {whole.subspan(static_cast<std::size_t>(in),
                          static_cast<std::size_t>(std::min<std::uint64_t>(whole.size() - in, j.data.length - j.sent))),
            false};
  }
  j.fault = std::make_shared<Job::Fault>();
  std::weak_ptr<Job::Fault> fault = j.fault;
  std::weak_ptr<PacedSender*> self = self_;
  const AddressKey key = c.key;
  // The next segments too, as a viewer's read-ahead: a paced range finds them in.
  cache_->request(
      j.data.cached, segment, 2,
      [fault, self, key](proto::SegmentStatus status, const proto::SegmentEntry&) {
        if (auto f = fault.lock()) {
          f->done = true;
          f->status = status;
        }
        auto s = self.lock();
        if (!s || !*s) return;
        PacedSender& sender = **s;
        Client* client = sender.table_.find(key);
        if (!client || client->jobs == 0) return;
        sender.table_.wake(*client);
        sender.arm_timer(Clock::now());  // the pump runs from the loop, not from inside the cache
      },
      who);
  return {};
}

Clock::time_point PacedSender::wake_time(Client& c, Clock::time_point now) {
  // When its first session may send its next datagram, and its address bucket too; or the first
  // deadline, so that expired jobs leave even while it waits.
  // A whole GSO train's worth (or the rest of the record), not one datagram: waking per datagram
  // while a bucket paces an address cost five system calls per datagram (20 paced viewers from one
  // address: 5x the server CPU of the same viewers from 20 addresses).
  // The address bucket waits for the largest of its sessions' trains: whichever session's turn it
  // is then, its whole train fits (waiting for the smallest, a record's last datagram, woke it
  // every 160 us to send one or two datagrams of another session's record).
  Clock::time_point at = Clock::time_point::max();
  double largest = 0;
  for (Session& s : c.sessions) {
    if (s.jobs.empty()) continue;
    const Job& j = s.jobs.front();
    if (j.fault && !j.fault->done) continue;  // woken when its segment is in
    const double train =
        wire_bytes(j.data.payload) *
        static_cast<double>(datagrams_per_send(j.data.payload, std::numeric_limits<double>::max(), j.data.size() - j.sent, gso()));
    at = std::min(at, s.pace.when(train, now));
    largest = std::max(largest, train);
  }
  // And an address its own bucket holds back wakes when half that bucket (5 ms at its rate) is
  // there, so that one wake-up sends several sessions' trains: pacing in 5 ms steps instead of one
  // train (about 1 ms) at a time costs a quarter of the wake-ups.
  if (at != Clock::time_point::max()) at = std::max(at, c.bucket.when(std::max(largest, c.bucket.burst() / 2), now));
  return std::min(at, c.earliest_deadline);
}

bool PacedSender::build(Client& c, Session& s, double budget, std::size_t slot, Clock::time_point now) {
  Job& j = s.jobs.front();
  // What can go now: the rest of the range, or of the cached segment it is in (sendable() found it
  // resident): a train never crosses a segment's end, where a datagram may be short.
  const std::span<const std::uint8_t> ready = ready_bytes(c, j, now).bytes;
  std::size_t count = datagrams_per_send(j.data.payload, budget, ready.size(), gso());
  // Zero copy only from a loaded movie's bytes, never reused in place (zero_copy_sends.hpp), and
  // no more datagrams in one send than the kernel's fragments can point at.
  bool zero_copy = zero_copy_ && !j.data.cached && zero_copy_->room() && !drops_.active();
  if (zero_copy) {
    const std::size_t fit = ZeroCopySends::segments_that_fit(ready, j.data.payload, count);
    if (fit > 0) count = fit;
    else zero_copy = false;
  }
  Train& t = trains_[slot];
  const std::uint64_t size = j.data.size();
  const std::uint64_t at = build_train(t, j.to, {s.id, j.epoch, j.record_seq, size, j.buffer_offset, j.sent, j.data.payload}, ready, count);
  if (zero_copy) {
    const ZeroCopySends::Header* pinned = zero_copy_->stage({t.headers, count}, t.bytes, j.data.owner);
    for (std::size_t k = 0; k < count; ++k) t.iov[2 * k].iov_base = const_cast<ZeroCopySends::Header*>(&pinned[k]);
    t.zero_copy = true;
  }
  const double bytes = static_cast<double>(t.bytes);
  c.bucket.take(bytes);
  s.pace.take(bytes);
  total_.take(bytes);
  table_.turns().spend(bytes);
  j.sent = at;
  c.next_session = (static_cast<std::size_t>(&s - c.sessions.data()) + 1) % c.sessions.size();
  const bool finished = at == size;
  const bool lost = drops_.drops(j.mark, finished);  // "lost": paced, never sent
  stats_.test_dropped += lost;
  if (finished) {
    if (!lost) keep_.push_back(std::move(j.data.owner));  // its bytes are in this batch
    table_.finish_front_job(c, s);
  }
  return !lost;
}

bool PacedSender::send_batch(std::size_t n) {
  // The zero-copy trains first (one sendmmsg with MSG_ZEROCOPY, in the order they were staged),
  // then the others.
  Train* order[UdpSocket::kBatch];
  std::size_t zero_copied = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (trains_[i].zero_copy) order[zero_copied++] = &trains_[i];
  for (std::size_t i = 0, k = zero_copied; i < n; ++i)
    if (!trains_[i].zero_copy) order[k++] = &trains_[i];
  for (std::size_t i = 0; i < n; ++i) stats_.datagrams += trains_[i].segments;
  const std::span<Train* const> all(order, n);
  const std::size_t zero_sent = zero_copied ? socket_.send(all.first(zero_copied), MSG_ZEROCOPY) : 0;
  if (zero_copy_) zero_copy_->sent(zero_sent);
  const std::size_t plain_sent = zero_sent == zero_copied && n > zero_copied ? socket_.send(all.subspan(zero_copied), 0) : 0;
  const std::size_t sent = zero_sent + plain_sent;
  stats_.sends += sent;
  for (std::size_t o = 0; o < zero_sent; ++o) stats_.bytes += order[o]->bytes;
  for (std::size_t o = zero_copied; o < zero_copied + plain_sent; ++o) stats_.bytes += order[o]->bytes;
  // What the socket did not take is lost as if the network dropped it: the client asks again.
  keep_.clear();
  return sent == n;
}

void PacedSender::pump(Clock::time_point now) {
  // Within an address its sessions take turns (sendable); an address whose buckets stop it sleeps
  // until they allow, and one with nothing left goes idle (decide_turn).
  table_.wake_sleepers(now);
  table_.sweep_idle(now);
  reap_zero_copy();
  socket_full_ = false;
  server_wait_ = 0;
  for (;;) {
    std::size_t batch = 0;
    while (batch < UdpSocket::kBatch && !table_.ring_empty()) {
      Client& c = table_.front();
      if (now >= c.earliest_deadline) table_.expire_jobs(c, now);
      Session* s = c.jobs ? sendable(c, now) : nullptr;
      TurnView v;
      v.jobs = c.jobs;
      v.sendable = s != nullptr;
      if (s) {
        v.wire = wire_bytes(s->jobs.front().data.payload);
        v.session = s->pace.available(now);
        v.address = c.bucket.available(now);
        v.allowance = table_.turns().allowance();
        v.server = total_.available(now);
      }
      const TurnDecision d = decide_turn(v);
      switch (d.step) {
        case TurnStep::go_idle: table_.front_goes_idle(now); continue;
        case TurnStep::sleep: table_.front_sleeps(wake_time(c, now)); continue;
        case TurnStep::end_turn: table_.turns().rotate(); continue;
        case TurnStep::wait_for_server: server_wait_ = v.wire; break;
        case TurnStep::send: batch += build(c, *s, d.budget, batch, now); continue;
      }
      break;  // wait_for_server: the turn goes on when total_ allows
    }
    if (batch == 0) break;
    if (!send_batch(batch)) {
      socket_full_ = true;
      break;
    }
    if (server_wait_ > 0) break;
  }
  arm_timer(now);
}

void PacedSender::arm_timer(Clock::time_point now) {
  // Wake for the first of: the server's bucket, when an address's turn waits for it (or soon, when
  // the socket was full); the first sleeping address; the first idle address to forget (on a coarse
  // grid, so that most pumps leave the timer as it is).
  Clock::time_point next = Clock::time_point::max();
  if (!table_.ring_empty()) next = socket_full_ || server_wait_ <= 0 ? now : total_.when(server_wait_, now);
  next = std::min(next, table_.next_wake());
  if (const auto forget_at = table_.next_forget(); forget_at != Clock::time_point::max()) {
    const auto grid = std::chrono::duration_cast<Clock::duration>(kSweepGrid);
    next = std::min(next, Clock::time_point((forget_at.time_since_epoch() / grid + 1) * grid));
  }
  if (next != Clock::time_point::max()) next = std::max(next, now + std::chrono::duration_cast<Clock::duration>(kMinTimer));
  if (next == armed_) return;  // one system call fewer per request, most of the time
  armed_ = next;
  itimerspec spec{};
  if (next != Clock::time_point::max()) {
    // Absolute, on CLOCK_MONOTONIC: the clock steady_clock reads on Linux.
    const auto at = std::chrono::duration_cast<std::chrono::nanoseconds>(next.time_since_epoch()).count();
    spec.it_value.tv_sec = static_cast<time_t>(at / 1'000'000'000);
    spec.it_value.tv_nsec = static_cast<long>(at % 1'000'000'000);
  }
  timerfd_settime(timer_.get(), TFD_TIMER_ABSTIME, &spec, nullptr);
}

}  // namespace vod::server::udp
