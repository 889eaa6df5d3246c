// SPDX-License-Identifier: LGPL-2.1-or-later
#include "udp/send_turn.hpp"

#include <algorithm>

namespace vod::server::udp {

TurnDecision decide_turn(const TurnView& v) noexcept {
  if (v.jobs == 0) return {TurnStep::go_idle, 0};
  // The address's own pacing is its own: it sleeps and the others go on. The server's rate is
  // everyone's: the pump waits for it with the address still at the front.
  if (!v.sendable || v.address < v.wire) return {TurnStep::sleep, 0};
  if (v.allowance < v.wire) return {TurnStep::end_turn, 0};
  if (v.server < v.wire) return {TurnStep::wait_for_server, 0};
  return {TurnStep::send, std::min({v.allowance, v.server, v.address, v.session})};
}

const char* to_string(TurnStep s) noexcept {
  switch (s) {
    case TurnStep::go_idle: return "go_idle";
    case TurnStep::sleep: return "sleep";
    case TurnStep::end_turn: return "end_turn";
    case TurnStep::wait_for_server: return "wait_for_server";
    case TurnStep::send: return "send";
  }
  return "?";
}

}  // namespace vod::server::udp
