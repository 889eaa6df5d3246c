// SPDX-License-Identifier: LGPL-2.1-or-later
// The VoD connection's state machine (ondemand/vod_connection_state.hpp): every state with every event,
// the whole 5 x 6 table.
#include <gtest/gtest.h>

#include <string>

#include "ondemand/vod_connection_state.hpp"

namespace vod::server::ondemand {
namespace {

TEST(VodConnectionState, TheWholeTable) {
  using S = State;
  using E = Event;
  using A = Action;
  constexpr Step keep_binding{S::binding, A::none}, keep_accepting{S::accepting, A::none}, keep_established{S::established, A::none},
      keep_draining{S::draining, A::none}, keep_gone{S::gone, A::none};
  struct Row {
    S state;
    Step on[6];  // bound, bind_failed, accept_failed, established, peer_gone, cut_off
  };
  const Row table[] = {
      {S::binding,
       {{S::accepting, A::send_accept},
        {S::gone, A::reject},
        {S::gone, A::reject},
        keep_binding,
        {S::gone, A::destroy},
        {S::gone, A::reject}}},
      {S::accepting,
       {keep_accepting,
        keep_accepting,
        {S::gone, A::reject},
        {S::established, A::none},
        {S::gone, A::destroy},
        {S::draining, A::disconnect}}},
      {S::established,
       {keep_established, keep_established, keep_established, keep_established, {S::gone, A::destroy}, {S::draining, A::disconnect}}},
      {S::draining, {keep_draining, keep_draining, keep_draining, keep_draining, {S::gone, A::destroy}, keep_draining}},
      {S::gone, {keep_gone, keep_gone, keep_gone, keep_gone, keep_gone, keep_gone}},
  };
  const E events[] = {E::bound, E::bind_failed, E::accept_failed, E::established, E::peer_gone, E::cut_off};
  for (const Row& row : table)
    for (int i = 0; i < 6; ++i) {
      const Step got = next(row.state, events[i]);
      EXPECT_EQ(got, row.on[i]) << to_string(row.state) << " + " << to_string(events[i]) << ": got " << to_string(got.next) << " / "
                                << to_string(got.action) << ", want " << to_string(row.on[i].next) << " / " << to_string(row.on[i].action);
    }
}

TEST(VodConnectionState, EveryPathEndsGoneAndGoneStays) {
  // From each state, the peer going away ends it; nothing leaves gone.
  for (State s : {State::binding, State::accepting, State::established, State::draining})
    EXPECT_EQ(next(s, Event::peer_gone).next, State::gone) << to_string(s);
  for (Event e : {Event::bound, Event::bind_failed, Event::accept_failed, Event::established, Event::peer_gone, Event::cut_off})
    EXPECT_EQ(next(State::gone, e), (Step{State::gone, Action::none})) << to_string(e);
  // A cut-off connection that was never accepted is refused (reject), one that was is disconnected.
  EXPECT_EQ(next(State::binding, Event::cut_off).action, Action::reject);
  EXPECT_EQ(next(State::established, Event::cut_off).action, Action::disconnect);
  EXPECT_EQ(std::string(to_string(Action::send_accept)), "send accept");
}

}  // namespace
}  // namespace vod::server::ondemand
