// SPDX-License-Identifier: LGPL-2.1-or-later
// The Write-Record sender's pieces without a socket: the turn decider's table, train building, the
// client table's states (idle, ready, asleep) and bounds, and the --udp-test-drop hook.
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <chrono>
#include <cstring>
#include <numeric>
#include <vector>

#include "udp/client_table.hpp"
#include "udp/send_turn.hpp"
#include "udp/test_drop.hpp"
#include "udp/trains.hpp"

namespace vod::server::udp {
namespace {

using namespace std::chrono_literals;

TEST(SendTurn, TheFrontAddressIsDecidedByItsJobsBucketsAndTurn) {
  struct Case {
    const char* what;
    TurnView v;
    TurnStep want;
    double budget;
  };
  const double w = 1500;  // one datagram on the wire
  const Case cases[] = {
      {"no jobs: idle, whatever the buckets", {0, true, w, 1e6, 1e6, 1e6, 1e6}, TurnStep::go_idle, 0},
      {"nothing sendable (pacing, a segment being read)", {3, false, w, 0, 1e6, 1e6, 1e6}, TurnStep::sleep, 0},
      {"its address bucket holds it", {3, true, w, 1e6, w - 1, 1e6, 1e6}, TurnStep::sleep, 0},
      {"its own pacing before its turn's end", {3, true, w, 1e6, w - 1, 0, 0}, TurnStep::sleep, 0},
      {"its turn is spent", {3, true, w, 1e6, 1e6, w - 1, 1e6}, TurnStep::end_turn, 0},
      {"its turn before the server's rate", {3, true, w, 1e6, 1e6, w - 1, 0}, TurnStep::end_turn, 0},
      {"the server's rate holds everyone", {3, true, w, 1e6, 1e6, 1e6, w - 1}, TurnStep::wait_for_server, 0},
      {"send: the session's bucket is the least", {3, true, w, 4000, 9000, 130000, 1e6}, TurnStep::send, 4000},
      {"send: the turn is the least", {3, true, w, 1e6, 9000, 3000, 1e6}, TurnStep::send, 3000},
      {"send: the server is the least", {1, true, w, 1e6, 9000, 130000, 2000}, TurnStep::send, 2000},
      {"send: exactly one datagram everywhere", {1, true, w, w, w, w, w}, TurnStep::send, w},
  };
  for (const Case& c : cases) {
    const TurnDecision d = decide_turn(c.v);
    EXPECT_EQ(to_string(d.step), std::string(to_string(c.want))) << c.what;
    EXPECT_EQ(d.budget, c.budget) << c.what;
  }
}

TEST(Trains, DatagramsCarryTheRecordInOrderAndTheLastIsFlagged) {
  std::vector<std::uint8_t> record(10000);
  std::iota(record.begin(), record.end(), 0);
  Endpoint to;
  to.len = sizeof(sockaddr_in);
  Train t;
  // From offset 6000: 1400, 1400, 1200 (the end of the record).
  const TrainRecord r{7, 3, 42, record.size(), 123456, 6000, 1400};
  const std::uint64_t end = build_train(t, to, r, std::span(record).subspan(6000), 3);
  EXPECT_EQ(end, 10000u);
  ASSERT_EQ(t.segments, 3u);
  EXPECT_EQ(t.bytes, 4000 + 3 * sizeof(proto::WireWriteRecordDataHeader));
  const std::size_t lengths[] = {1400, 1400, 1200};
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(t.iov[2 * k].iov_len, sizeof(proto::WireWriteRecordDataHeader));
    EXPECT_EQ(t.iov[2 * k + 1].iov_len, lengths[k]);
    const proto::WireWriteRecordDataHeader& h = t.headers[k];
    EXPECT_EQ(h.session_id.get(), 7u);
    EXPECT_EQ(h.record_seq.get(), 42u);
    EXPECT_EQ(h.record_offset.get(), 6000 + 1400 * k);
    EXPECT_EQ(h.buffer_offset.get(), 123456u);
    EXPECT_EQ((h.flags.get() & proto::kRecordLastDatagram) != 0, k == 2);
    EXPECT_EQ(static_cast<const std::uint8_t*>(t.iov[2 * k + 1].iov_base), record.data() + 6000 + 1400 * k);
  }
  // A train that stops short of the record's end has no last datagram.
  build_train(t, to, {7, 3, 42, record.size(), 0, 0, 1400}, record, 2);
  EXPECT_EQ(t.segments, 2u);
  EXPECT_EQ(t.headers[1].flags.get() & proto::kRecordLastDatagram, 0);
}

AddressKey key_of(std::uint32_t v4) {
  sockaddr_storage a{};
  auto& in = reinterpret_cast<sockaddr_in&>(a);
  in.sin_family = AF_INET;
  in.sin_addr.s_addr = htonl(v4);
  return address_key(a);
}

Job job_until(Clock::time_point deadline) {
  Job j;
  j.deadline = deadline;
  j.data.payload = 1400;
  return j;
}

TEST(ClientTable, AnAddressIsIdleReadyOrAsleepAndIdleOnesAreForgotten) {
  UdpStats stats;
  ClientTable table({2, 2, 3, 100, 1000ms, 8e6, 1400}, 130000, stats);
  const auto t0 = Clock::now();
  Client* a = table.client_for(key_of(0x0a000001), t0);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->where, Client::Where::idle);
  Session* s = table.session_for(*a, 1, 5000, 1, t0);
  ASSERT_TRUE(s);
  table.add_job(*a, *s, job_until(t0 + 10s));
  EXPECT_EQ(a->where, Client::Where::ready);
  ASSERT_FALSE(table.ring_empty());
  EXPECT_EQ(&table.front(), a);
  table.front_sleeps(t0 + 5ms);
  EXPECT_EQ(a->where, Client::Where::asleep);
  EXPECT_TRUE(table.ring_empty());
  EXPECT_EQ(table.next_wake(), t0 + 5ms);
  table.wake_sleepers(t0 + 4ms);
  EXPECT_EQ(a->where, Client::Where::asleep);
  table.wake_sleepers(t0 + 5ms);
  EXPECT_EQ(a->where, Client::Where::ready);
  // Its job sent: idle, and forgotten once idle_client has passed (not before).
  table.finish_front_job(*a, *s);
  table.front_goes_idle(t0 + 6ms);
  EXPECT_EQ(a->where, Client::Where::idle);
  EXPECT_EQ(table.jobs(), 0u);
  table.sweep_idle(t0 + 900ms);
  EXPECT_EQ(table.clients(), 1u);
  EXPECT_EQ(table.next_forget(), t0 + 1006ms);
  table.sweep_idle(t0 + 1006ms);
  EXPECT_EQ(table.clients(), 0u);
  EXPECT_EQ(table.sessions(), 0u);
  EXPECT_EQ(stats.clients_forgotten, 1u);
}

TEST(ClientTable, TablesAreBoundedAndASeekOrADeadlineDropsJobs) {
  UdpStats stats;
  ClientTable table({2, 2, 3, 100, 1000ms, 8e6, 1400}, 130000, stats);
  const auto t0 = Clock::now();
  Client* a = table.client_for(key_of(0x0a000001), t0);
  Client* b = table.client_for(key_of(0x0a000002), t0);
  Session* sa = table.session_for(*a, 1, 5000, 1, t0);
  Session* sb = table.session_for(*b, 1, 5000, 1, t0);
  table.add_job(*a, *sa, job_until(t0 + 10s));
  table.add_job(*b, *sb, job_until(t0 + 10s));
  // Two addresses with jobs fill a table of two; a third is refused.
  EXPECT_EQ(table.client_for(key_of(0x0a000003), t0), nullptr);
  // Sessions: two per address; a third only in place of one with nothing queued.
  ASSERT_TRUE(table.session_for(*a, 2, 5001, 1, t0));
  EXPECT_EQ(table.session_for(*a, 3, 5002, 1, t0 + 1ms), a->sessions.data() + 1);  // session 2 had nothing: forgotten
  Session* s3 = &a->sessions[1];
  table.add_job(*a, *s3, job_until(t0 + 10s));
  EXPECT_EQ(table.session_for(*a, 4, 5003, 1, t0), nullptr);
  // Jobs: three per address.
  table.add_job(*a, *a->sessions.data(), job_until(t0 + 1s));
  EXPECT_FALSE(table.room_for_job(*a));
  EXPECT_TRUE(table.room_for_job(*b));
  // A seek (a newer epoch) drops the session's jobs not started.
  Session& first = a->sessions[0];
  first.jobs[0].sent = 1400;  // half sent: stays
  table.supersede(*a, first, 2, t0);
  EXPECT_EQ(first.jobs.size(), 1u);
  EXPECT_EQ(first.epoch, 2u);
  EXPECT_EQ(stats.superseded, 1u);
  EXPECT_EQ(a->jobs, 2u);
  // A deadline passed: the job goes.
  table.add_job(*a, first, job_until(t0 + 1s));
  table.expire_jobs(*a, t0 + 2s);
  EXPECT_EQ(first.jobs.size(), 1u);
  EXPECT_EQ(stats.expired, 1u);
  EXPECT_EQ(a->earliest_deadline, t0 + 10s);
  EXPECT_EQ(table.jobs(), 3u);
}

TEST(TestDrop, ParsesAndDropsExactlyWhatItSaysAndNeverARepair) {
  EXPECT_THROW(parse_test_drop("last"), std::invalid_argument);
  EXPECT_THROW(parse_test_drop("every:2"), std::invalid_argument);
  EXPECT_THROW(parse_test_drop("last:0"), std::invalid_argument);
  const TestDrop d = parse_test_drop("last:3,datagram:5");
  EXPECT_EQ(d.last_of_record, 3u);
  EXPECT_EQ(d.datagram, 5u);
  EXPECT_FALSE(TestDropper(TestDrop{}).active());
  TestDropper last(parse_test_drop("last:3"));
  std::vector<bool> lost;
  for (std::uint64_t seq = 0; seq < 6; ++seq) {
    const auto m = last.admit(1, seq);
    lost.push_back(last.drops(m, false));
    lost.push_back(last.drops(m, true));
  }
  // Records 2 and 5 lose their last datagram, nothing else.
  EXPECT_EQ(lost, (std::vector<bool>{false, false, false, false, false, true, false, false, false, false, false, true}));
  const auto repair = last.admit(1, 2);
  EXPECT_TRUE(repair.repair);
  EXPECT_FALSE(last.drops(repair, true));
  EXPECT_EQ(last.dropped(), 2u);
}

}  // namespace
}  // namespace vod::server::udp
