// SPDX-License-Identifier: LGPL-2.1-or-later
// A VoD or catalog connection's life, as a pure function from (state, event) to (state, action),
// so every transition is table-tested without a NIC (tests/unit/vod_connection_state_test.cpp) and
// ondemand::VodConnection only carries the actions out.
//
//   binding --bound / send_accept--> accepting --established--> established
//      |                                 |                           |
//      |                                 `-------- cut_off / disconnect --> draining
//      |
//      `--bind_failed | accept_failed | cut_off / reject--> gone   (its QP drained before it is destroyed)
//
//   accepting | established | draining --peer_gone / destroy--> gone
//   binding --peer_gone / destroy--> gone
//   accepting --accept_failed / reject--> gone
//
//   binding      with memory windows: its own QP in RTS, the binds posted; the accept waits for them
//   accepting    the accept is sent (a connection without windows starts here); the client's
//                ESTABLISHED has not arrived yet
//   established  the client reads; the server does nothing per Read
//   draining     cut off (revocation, its token's expiry, the drain's end): windows invalidated, QP
//                in the error state, the disconnect sent; waiting for the CM's last event
//   gone         its owner destroys it (acknowledging the event first)
//
// peer_gone is any of DISCONNECTED, CONNECT_ERROR, UNREACHABLE, REJECTED, TIMEWAIT_EXIT. Anything
// not listed changes nothing (action none).
#pragma once

namespace vod::server::ondemand {

enum class State { binding, accepting, established, draining, gone };
enum class Event { bound, bind_failed, accept_failed, established, peer_gone, cut_off };
enum class Action { none, send_accept, reject, disconnect, destroy };

struct Step {
  State next;
  Action action;
  bool operator==(const Step&) const = default;
};

Step next(State state, Event event) noexcept;

const char* to_string(State s) noexcept;
const char* to_string(Event e) noexcept;
const char* to_string(Action a) noexcept;

}  // namespace vod::server::ondemand
