// SPDX-License-Identifier: LGPL-2.1-or-later
// The fair-share sender's one decision, pure (no clock, no socket), with a table test: what the
// address whose turn it is in the ring does next. Addresses take turns by deficit round robin
// (fair_queue.hpp); each send is one train of one record, while every bucket allows it (the
// session's, the address's, the server's) and the address's turn lasts.
#pragma once

#include <cstddef>

namespace vod::server::udp {

enum class TurnStep {
  go_idle,          // no jobs left: out of the ring, forgotten after idle_client
  sleep,            // its pacing (or a segment being read in) holds it: out of the ring until then
  end_turn,         // its allowance for this turn is spent: to the back of the ring
  wait_for_server,  // the server's rate holds everyone: the pump stops until it allows
  send,             // one train, of at most `budget` bytes
};

struct TurnView {
  std::size_t jobs = 0;   // the address's jobs (after those past their deadline went)
  bool sendable = false;  // a session whose pacing allows its front job's next datagram, its bytes ready
  double wire = 0;        // that datagram's bytes on the wire, header included
  double session = 0;     // what the session's bucket allows now
  double address = 0;     // the address's bucket
  double allowance = 0;   // its turn's deficit
  double server = 0;      // the server's bucket
};

struct TurnDecision {
  TurnStep step = TurnStep::go_idle;
  double budget = 0;  // send: the bytes every bucket and the turn allow
};

TurnDecision decide_turn(const TurnView& v) noexcept;

const char* to_string(TurnStep s) noexcept;

}  // namespace vod::server::udp
