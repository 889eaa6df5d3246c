// SPDX-License-Identifier: LGPL-2.1-or-later
// The Write-Record receiver on real UDP sockets (loopback): completion records and the validity
// map report exactly the holes a sender left by dropping chosen datagrams; hostile datagrams of
// every kind are dropped and counted, and nothing is written outside the record they claim (guard
// bytes around the buffer stay untouched; the sanitizer build runs this too).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <numeric>
#include <thread>

#include "vod/client/write_record_receiver.hpp"

namespace vod::client {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kPayload = 1000;
constexpr std::uint32_t kSession = 0xabcd;

struct Socket {
  int fd = -1;
  sockaddr_storage addr{};
  Socket() {
    fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    socklen_t len = sizeof addr;
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  }
  ~Socket() { close(fd); }
  void send_to(const Socket& to, const std::vector<std::uint8_t>& bytes) const {
    ASSERT_EQ(sendto(fd, bytes.data(), bytes.size(), 0, reinterpret_cast<const sockaddr*>(&to.addr), sizeof(sockaddr_in)),
              static_cast<ssize_t>(bytes.size()));
  }
};

// A buffer with guard bytes on both sides that no datagram may touch.
struct Guarded {
  static constexpr std::size_t kGuard = 4096;
  std::vector<std::uint8_t> memory;
  explicit Guarded(std::size_t n) : memory(n + 2 * kGuard, 0xee) { std::fill(memory.begin() + kGuard, memory.end() - kGuard, 0); }
  std::span<std::uint8_t> buffer() { return std::span<std::uint8_t>(memory).subspan(kGuard, memory.size() - 2 * kGuard); }
  bool guards_intact() const {
    return std::all_of(memory.begin(), memory.begin() + kGuard, [](std::uint8_t b) { return b == 0xee; }) &&
           std::all_of(memory.end() - kGuard, memory.end(), [](std::uint8_t b) { return b == 0xee; });
  }
};

std::vector<std::uint8_t> source_bytes(std::size_t n) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>((i * 131) >> 3);
  return v;
}

// Datagram `k` of a record of `bytes` at buffer offset `at`.
std::vector<std::uint8_t> datagram(const std::vector<std::uint8_t>& bytes, std::size_t k, std::uint64_t seq, std::uint32_t epoch,
                                   std::uint64_t at, std::uint32_t session = kSession) {
  proto::WriteRecordData d;
  d.session_id = session;
  d.epoch = epoch;
  d.record_seq = seq;
  d.record_length = bytes.size();
  d.record_offset = k * kPayload;
  d.buffer_offset = at;
  const std::size_t n = std::min(kPayload, bytes.size() - k * kPayload);
  d.flags = k * kPayload + n == bytes.size() ? proto::kRecordLastDatagram : 0;
  d.payload = proto::Bytes(bytes).subspan(k * kPayload, n);
  return proto::encode(d);
}

void drain(WriteRecordReceiver& r, std::vector<CompletionRecord>& done, std::vector<proto::WriteRecordError>& errors, int fd) {
  for (int i = 0; i < 50; ++i) {  // until the socket has been quiet for 20 ms
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 20) <= 0) return;
    r.receive(done, errors);
  }
}

TEST(WriteRecordReceiver, CompletionRecordsAndTheValidityMapReportExactlyTheHoles) {
  Socket server, client;
  Guarded g(64 * 1024);
  WriteRecordReceiver r(client.fd, g.buffer(), kSession, server.addr, kPayload + 56, std::chrono::milliseconds(30));
  const auto bytes = source_bytes(10'500);  // 11 datagrams, the last of 500 bytes
  r.expect(7, 1, 4096, bytes.size(), Clock::now() + std::chrono::milliseconds(50));
  for (std::size_t k = 0; k < 11; ++k)
    if (k != 3 && k != 4 && k != 10) server.send_to(client, datagram(bytes, k, 7, 1, 4096));  // drop 3, 4 and the last
  std::vector<CompletionRecord> done;
  std::vector<proto::WriteRecordError> errors;
  drain(r, done, errors, client.fd);
  EXPECT_TRUE(done.empty()) << "an incomplete record is not reported before its timeout";
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  r.expire(Clock::now(), done);
  ASSERT_EQ(done.size(), 1u);
  const CompletionRecord& c = done[0];
  EXPECT_FALSE(c.complete);
  EXPECT_EQ(c.record_seq, 7u);
  EXPECT_EQ(c.buffer_offset, 4096u);
  EXPECT_EQ(c.length, 10'500u);
  const std::vector<ByteRange> want{{4096, 4096 + 3000}, {4096 + 5000, 4096 + 10'000}};
  EXPECT_EQ(c.received, want);
  EXPECT_EQ(r.missing(7), (std::vector<ByteRange>{{4096 + 3000, 4096 + 5000}, {4096 + 10'000, 4096 + 10'500}}));
  EXPECT_EQ(r.validity().ranges(), want) << "the memory view says the same as the message view";
  // The holes come: the record completes, the map covers it, and the bytes are the sender's.
  r.rearm(7, Clock::now() + std::chrono::milliseconds(200));
  for (std::size_t k : {3u, 4u, 10u}) server.send_to(client, datagram(bytes, k, 7, 1, 4096));
  done.clear();
  drain(r, done, errors, client.fd);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].complete);
  EXPECT_EQ(r.validity().ranges(), (std::vector<ByteRange>{{4096, 4096 + 10'500}}));
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), g.buffer().begin() + 4096));
  EXPECT_EQ(r.stats().placed_bytes, 10'500u);
  EXPECT_TRUE(g.guards_intact());
}

TEST(WriteRecordReceiver, DuplicatesReorderingAndLateDatagramsChangeNothing) {
  Socket server, client;
  Guarded g(32 * 1024);
  WriteRecordReceiver r(client.fd, g.buffer(), kSession, server.addr, kPayload + 56, std::chrono::milliseconds(30));
  const auto bytes = source_bytes(5000);
  r.expect(1, 1, 0, bytes.size(), Clock::now() + std::chrono::seconds(1));
  for (std::size_t k : {4u, 2u, 2u, 0u, 1u, 1u, 3u}) server.send_to(client, datagram(bytes, k, 1, 1, 0));
  std::vector<CompletionRecord> done;
  std::vector<proto::WriteRecordError> errors;
  drain(r, done, errors, client.fd);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].complete);
  EXPECT_EQ(r.stats().duplicate_bytes, 2000u);
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), g.buffer().begin()));
  // After completion (or after forget: a seek), datagrams of the record are late: dropped.
  server.send_to(client, datagram(source_bytes(5000), 0, 1, 1, 0));
  r.expect(2, 1, 10'000, bytes.size(), Clock::now() + std::chrono::seconds(1));
  r.forget(2);
  server.send_to(client, datagram(bytes, 0, 2, 1, 10'000));
  drain(r, done, errors, client.fd);
  EXPECT_EQ(r.stats().dropped_late, 2u);
  EXPECT_TRUE(std::all_of(g.buffer().begin() + 10'000, g.buffer().begin() + 15'000, [](std::uint8_t b) { return b == 0; }));
  EXPECT_TRUE(g.guards_intact());
}

TEST(WriteRecordReceiver, HostileDatagramsAreDroppedCountedAndNeverWritten) {
  Socket server, client, stranger;
  Guarded g(16 * 1024);
  WriteRecordReceiver r(client.fd, g.buffer(), kSession, server.addr, kPayload + 56, std::chrono::milliseconds(30));
  const auto bytes = source_bytes(2000);
  r.expect(5, 3, 8192, bytes.size(), Clock::now() + std::chrono::seconds(1));
  const std::uint64_t buffer_length = g.buffer().size();

  stranger.send_to(client, datagram(bytes, 0, 5, 3, 8192));                // a foreign source
  server.send_to(client, datagram(bytes, 0, 5, 3, 8192, kSession + 1));    // a wrong session
  server.send_to(client, datagram(bytes, 0, 5, 2, 8192));                  // a stale epoch
  server.send_to(client, datagram(bytes, 0, 6, 3, 8192));                  // a record never asked for
  server.send_to(client, datagram(bytes, 0, 5, 3, 0));                     // in the buffer, outside the record
  server.send_to(client, datagram(bytes, 0, 5, 3, buffer_length - 1000));  // crosses the buffer's end
  server.send_to(client, datagram(bytes, 0, 5, 3, ~0ull - 500));           // wraps past 2^64
  auto bad_crc = datagram(bytes, 1, 5, 3, 8192);
  bad_crc[200] ^= 0x40;
  server.send_to(client, bad_crc);  // a bad checksum
  auto too_long = datagram(source_bytes(4000), 0, 5, 3, 8192);
  too_long.resize(kPayload + 56 + 500, 0);
  server.send_to(client, too_long);  // longer than any expected: MSG_TRUNC
  auto cut = datagram(bytes, 1, 5, 3, 8192);
  cut.resize(cut.size() - 7);
  server.send_to(client, cut);                                   // shorter than it says
  server.send_to(client, std::vector<std::uint8_t>(300, 0x47));  // garbage
  server.send_to(client, std::vector<std::uint8_t>(3, 1));       // too short for any header

  std::vector<CompletionRecord> done;
  std::vector<proto::WriteRecordError> errors;
  drain(r, done, errors, client.fd);
  const auto& s = r.stats();
  EXPECT_EQ(s.dropped_source, 1u);
  EXPECT_EQ(s.dropped_session, 1u);
  EXPECT_EQ(s.dropped_epoch, 1u);
  EXPECT_EQ(s.dropped_late, 1u);
  EXPECT_EQ(s.dropped_bounds, 3u);
  EXPECT_EQ(s.dropped_checksum, 1u);
  EXPECT_EQ(s.dropped_truncated, 2u);
  EXPECT_EQ(s.dropped_garbage, 2u);
  EXPECT_EQ(s.placed_bytes, 0u);
  EXPECT_TRUE(std::all_of(g.buffer().begin(), g.buffer().end(), [](std::uint8_t b) { return b == 0; })) << "a dropped datagram wrote";
  EXPECT_TRUE(g.guards_intact());
  EXPECT_TRUE(r.validity().ranges().empty());
  // The honest datagrams still complete the record, byte-exact.
  for (std::size_t k = 0; k < 2; ++k) server.send_to(client, datagram(bytes, k, 5, 3, 8192));
  drain(r, done, errors, client.fd);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), g.buffer().begin() + 8192));
}

TEST(WriteRecordReceiver, ErrorDatagramsOfTheSessionAreHandedUp) {
  Socket server, client;
  Guarded g(4096);
  WriteRecordReceiver r(client.fd, g.buffer(), kSession, server.addr, kPayload + 56, std::chrono::milliseconds(30));
  server.send_to(client, proto::encode(proto::WriteRecordError{kSession, 1, 9, proto::RejectCode::unknown_movie, "no such movie"}));
  server.send_to(client, proto::encode(proto::WriteRecordError{kSession + 1, 1, 9, proto::RejectCode::unknown_movie, "not ours"}));
  std::vector<CompletionRecord> done;
  std::vector<proto::WriteRecordError> errors;
  drain(r, done, errors, client.fd);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].record_seq, 9u);
  EXPECT_EQ(errors[0].code, proto::RejectCode::unknown_movie);
  EXPECT_EQ(r.stats().dropped_session, 1u);
}

TEST(RangeSet, MergesSplitsAndFindsHoles) {
  RangeSet s;
  EXPECT_EQ(s.add(10, 20), 10u);
  EXPECT_EQ(s.add(30, 40), 10u);
  EXPECT_EQ(s.add(15, 35), 10u);  // only 20..30 is new
  EXPECT_EQ(s.ranges(), (std::vector<ByteRange>{{10, 40}}));
  s.remove(18, 22);
  EXPECT_EQ(s.ranges(), (std::vector<ByteRange>{{10, 18}, {22, 40}}));
  EXPECT_EQ(s.missing(0, 50), (std::vector<ByteRange>{{0, 10}, {18, 22}, {40, 50}}));
  EXPECT_TRUE(s.contains(23, 40));
  EXPECT_FALSE(s.contains(17, 19));
  EXPECT_EQ(s.bytes(), 26u);
  EXPECT_EQ(s.add(40, 40), 0u);
  EXPECT_EQ(s.add(40, 41), 1u);  // touching ranges merge
  EXPECT_EQ(s.ranges().back(), (ByteRange{22, 41}));
}

}  // namespace
}  // namespace vod::client
