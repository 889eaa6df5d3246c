// SPDX-License-Identifier: LGPL-2.1-or-later
// The life of one of vod-proxy's movie sessions (RdmaPool::Movie), as a pure function with a table
// test (tests/unit/proxy_http_test.cpp): its reads wait while it opens or reopens on a worker, go
// to its session while it is open, and fail with the reason when an open gives up, finds another
// version of the movie, or its session fails for a reason a reconnect would not change.
//
//   opening --opened--> open --lost--> reopening --opened--> open
//   opening | open | reopening --failed--> failed (its reads fail; it leaves the pool)
#pragma once

namespace vod::proxy {

enum class MovieSessionState { opening, open, reopening, failed };
enum class MovieSessionEvent { opened, failed, lost };

// The state after `e`; a state that cannot take `e` keeps its own (a late answer of a worker for a
// session that failed meanwhile, say).
constexpr MovieSessionState next(MovieSessionState s, MovieSessionEvent e) noexcept {
  using S = MovieSessionState;
  using E = MovieSessionEvent;
  switch (s) {
    case S::opening:
    case S::reopening: return e == E::opened ? S::open : e == E::failed ? S::failed : s;
    case S::open: return e == E::lost ? S::reopening : e == E::failed ? S::failed : s;
    case S::failed: return s;
  }
  return s;
}

// Whether its reads may go to a session now (open), or wait for one.
constexpr bool has_session(MovieSessionState s) noexcept { return s == MovieSessionState::open; }
// Whether an answer must be the version it had before (a reopen: unknown is never the same).
constexpr bool must_match(MovieSessionState s) noexcept { return s == MovieSessionState::reopening; }

constexpr const char* to_string(MovieSessionState s) noexcept {
  switch (s) {
    case MovieSessionState::opening: return "opening";
    case MovieSessionState::open: return "open";
    case MovieSessionState::reopening: return "reopening";
    case MovieSessionState::failed: return "failed";
  }
  return "?";
}

}  // namespace vod::proxy
