// SPDX-License-Identifier: LGPL-2.1-or-later
// The one reconnect schedule of Session and LiveSession (reconnect.hpp), as tables: when each
// attempt starts and when the session gives up, for the defaults and for the edges (0 s: one
// attempt; attempts that take long). These are the instants the two sleeping loops produced before
// they shared it: +100 ms, doubling to 2 s, giving up when an attempt fails and another wait like
// the one before it would end past the limit.
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <string>
#include <vector>

#include "vod/client/reconnect.hpp"
#include "vod/protocol/access_token.hpp"

namespace vod::client {
namespace {

using std::chrono::milliseconds;
using Clock = Backoff::Clock;

struct Row {
  const char* what;
  ReconnectPolicy policy;
  milliseconds attempt_takes;   // each attempt fails this long after it starts
  std::vector<long> starts_ms;  // when each attempt starts, from the loss
};

// Runs the schedule as a session does (wait for next_attempt(), try, fail after attempt_takes)
// and returns the attempts' start times, from the loss, in milliseconds.
std::vector<long> schedule(const Row& row) {
  const Clock::time_point lost{std::chrono::hours(1)};
  Backoff b(row.policy, lost);
  std::vector<long> starts;
  for (int i = 0; i < 1000; ++i) {
    const auto start = b.next_attempt();
    starts.push_back(static_cast<long>(std::chrono::duration_cast<milliseconds>(start - lost).count()));
    if (!b.failed(start + row.attempt_takes)) break;
  }
  return starts;
}

TEST(Backoff, TheScheduleBothSessionsKept) {
  const ReconnectPolicy defaults_30s;
  const std::vector<Row> rows = {
      {"defaults, every attempt fails at once",
       defaults_30s,
       milliseconds(0),
       {100, 300, 700, 1500, 3100, 5100, 7100, 9100, 11100, 13100, 15100, 17100, 19100, 21100, 23100, 25100, 27100, 29100}},
      {"0 s: one attempt", {milliseconds(0), milliseconds(100), milliseconds(2000)}, milliseconds(0), {100}},
      {"1 s", {milliseconds(1000), milliseconds(100), milliseconds(2000)}, milliseconds(0), {100, 300, 700}},
      {"a wait that ends exactly at the limit does not pass it",
       {milliseconds(1100), milliseconds(100), milliseconds(2000)},
       milliseconds(0),
       {100, 300, 700, 1500}},
      {"attempts of 1 s (a connect timing out)",
       {milliseconds(5000), milliseconds(100), milliseconds(2000)},
       milliseconds(1000),
       {100, 1300, 2700, 4500}},
      {"the proxy's 10 s",
       {milliseconds(10000), milliseconds(100), milliseconds(2000)},
       milliseconds(0),
       {100, 300, 700, 1500, 3100, 5100, 7100, 9100}},
      {"a first wait above the cap stays as given, then the cap",
       {milliseconds(10000), milliseconds(3000), milliseconds(2000)},
       milliseconds(0),
       {3000, 5000, 7000, 9000}},
  };
  for (const Row& row : rows) EXPECT_EQ(schedule(row), row.starts_ms) << row.what;
}

TEST(Backoff, CountsTheFailedAttemptsAndTheWait) {
  const Clock::time_point lost{std::chrono::hours(1)};
  Backoff b(ReconnectPolicy{}, lost);
  EXPECT_EQ(b.failed_attempts(), 0u);
  EXPECT_EQ(b.wait(), defaults::kBackoffFirst);
  EXPECT_EQ(b.next_attempt(), lost + defaults::kBackoffFirst);
  ASSERT_TRUE(b.failed(b.next_attempt()));
  EXPECT_EQ(b.failed_attempts(), 1u);
  EXPECT_EQ(b.wait(), 2 * defaults::kBackoffFirst);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(b.failed(b.next_attempt()));
  EXPECT_EQ(b.wait(), defaults::kBackoffMax) << "the wait stops doubling at the cap";
}

TEST(Backoff, RetriesOnlyWhatMayPass) {
  const struct {
    ErrorKind kind;
    bool retry;
  } table[] = {
      {ErrorKind::server_unreachable, true}, {ErrorKind::rejected, true},
      {ErrorKind::unknown_movie, false},     {ErrorKind::no_device, false},
      {ErrorKind::unauthorized, false},      {ErrorKind::protocol_error, false},
      {ErrorKind::connection_lost, false},   {ErrorKind::out_of_range, false},
      {ErrorKind::movie_changed, false},     {ErrorKind::usage, false},
  };
  for (const auto& row : table) EXPECT_EQ(retryable(ClientError(row.kind, "x")), row.retry) << to_string(row.kind);
}

TEST(Backoff, AnExpiredTokenIsRefusedBeforeAnyAttempt) {
  Uri uri = parse_uri("rdma://192.0.2.1/a.ts");
  EXPECT_NO_THROW(refuse_expired_token(uri)) << "no token";
  proto::AccessToken token;
  token.expires = static_cast<std::uint32_t>(std::time(nullptr) + 3600);
  uri.token = proto::encode(token);
  EXPECT_NO_THROW(refuse_expired_token(uri)) << "valid for an hour";
  token.expires = static_cast<std::uint32_t>(std::time(nullptr) - 10);
  uri.token = proto::encode(token);
  try {
    refuse_expired_token(uri);
    FAIL() << "an expired token was let through";
  } catch (const ClientError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unauthorized);
    EXPECT_NE(std::string(e.what()).find("vod-token"), std::string::npos) << e.what();
  }
}

TEST(Backoff, WaitUntilIsNeverEarlyAndStopsWhenInterrupted) {
  Interrupter interrupter;
  const auto start = Clock::now();
  wait_until(start + milliseconds(30), interrupter);
  EXPECT_GE(Clock::now() - start, milliseconds(30));
  wait_until(start, interrupter);  // past: returns at once
  interrupter.raise();
  const auto before = Clock::now();
  EXPECT_THROW(wait_until(before + std::chrono::seconds(10), interrupter), Interrupted);
  EXPECT_LT(Clock::now() - before, std::chrono::seconds(1));
}

// The one loop both sessions reconnect with (reconnect_on_schedule): a table of attempts that fail
// in each way, and what the loop does (attempts made, drops between them, what it throws).
TEST(Backoff, TheReconnectLoopRetriesWhatMayPassAndNamesTheLastFailure) {
  ReconnectPolicy quick;
  quick.first = milliseconds(1);
  quick.max = milliseconds(2);
  quick.give_up_after = milliseconds(40);
  struct Case {
    const char* what;
    std::vector<int> failures;  // per attempt before the last: 0 lost, 1 unreachable, 2 rejected, 3 unknown movie
    int last;                   // -1: succeeds; else fails so for ever
    unsigned attempts;          // 0: more than the failures (the schedule runs out)
    const char* thrown;         // a part of the message thrown, or "" when it succeeds
  };
  const Case cases[] = {
      {"succeeds at once", {}, -1, 1, ""},
      {"lost, unreachable and full, then succeeds", {0, 1, 2}, -1, 4, ""},
      {"an unknown movie is not retried", {1}, 3, 2, "no such movie"},
      {"unreachable for ever: gives up naming the last failure", {}, 1, 0, "could not reconnect within 0 s: nothing listens"},
  };
  const auto fail = [](int how) {
    switch (how) {
      case 0: throw ConnectionLost("the QP went to error");
      case 1: throw ClientError(ErrorKind::server_unreachable, "nothing listens");
      case 2: throw ClientError(ErrorKind::rejected, "server full");
      default: throw ClientError(ErrorKind::unknown_movie, "no such movie");
    }
  };
  for (const Case& c : cases) {
    Interrupter never;
    unsigned attempts = 0, drops = 0;
    std::string thrown;
    try {
      const unsigned failed = reconnect_on_schedule(
          quick, never, "192.0.2.1:7470", "the server disconnected",
          [&] {
            const unsigned i = attempts++;
            if (i < c.failures.size()) fail(c.failures[i]);
            if (c.last >= 0) fail(c.last);
          },
          [&] { ++drops; });
      EXPECT_EQ(failed + 1, attempts) << c.what;
    } catch (const ClientError& e) {
      thrown = e.what();
    }
    if (c.attempts) EXPECT_EQ(attempts, c.attempts) << c.what;
    else EXPECT_GT(attempts, c.failures.size() + 2) << c.what;
    EXPECT_EQ(drops, attempts - (thrown.empty() ? 1 : 0) - (thrown.find("no such movie") != std::string::npos ? 1 : 0)) << c.what;
    if (*c.thrown) EXPECT_NE(thrown.find(c.thrown), std::string::npos) << c.what << ": " << thrown;
    else EXPECT_EQ(thrown, "") << c.what;
  }
}

TEST(Backoff, AnOpenTriesAtOnceAndReportsTheLastFailureWhenTheScheduleIsSpent) {
  // vod-proxy's opener: the first attempt at once (not `first` after), and with 0 s of retrying
  // exactly one attempt, whose failure is returned rather than thrown.
  ReconnectPolicy once;
  once.first = std::chrono::seconds(10);  // would be waited for before a reconnect's first attempt
  once.give_up_after = milliseconds(0);
  Interrupter never;
  unsigned attempts = 0, drops = 0;
  const auto started = std::chrono::steady_clock::now();
  const RetryResult r = retry_on_schedule(
      once, true, never,
      [&] {
        ++attempts;
        throw ClientError(ErrorKind::server_unreachable, "nothing listens");
      },
      [&] { ++drops; });
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));  // no 10 s wait: generous, half of it
  EXPECT_FALSE(r.succeeded);
  EXPECT_EQ(attempts, 1u);
  EXPECT_EQ(drops, 1u);
  EXPECT_EQ(r.failed_attempts, 1u);
  EXPECT_EQ(r.last_failure, "nothing listens");
  // A raised interrupter stops it before the first attempt.
  Interrupter stop;
  stop.raise();
  EXPECT_THROW(retry_on_schedule(
                   once, true, stop, [&] { ++attempts; }, [] {}),
               Interrupted);
  EXPECT_EQ(attempts, 1u);
  // Succeeds on the second attempt of a short schedule.
  ReconnectPolicy quick;
  quick.first = milliseconds(1);
  quick.max = milliseconds(2);
  quick.give_up_after = milliseconds(200);
  attempts = 0;
  const RetryResult ok = retry_on_schedule(
      quick, true, never,
      [&] {
        if (attempts++ == 0) throw ConnectionLost("the QP went to error");
      },
      [] {});
  EXPECT_TRUE(ok.succeeded);
  EXPECT_EQ(ok.failed_attempts, 1u);
  EXPECT_EQ(ok.last_failure, "the QP went to error");
}

}  // namespace
}  // namespace vod::client
