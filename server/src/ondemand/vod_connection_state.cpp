// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ondemand/vod_connection_state.hpp"

namespace vod::server::ondemand {

Step next(State state, Event event) noexcept {
  switch (state) {
    case State::binding:
      switch (event) {
        case Event::bound: return {State::accepting, Action::send_accept};
        case Event::bind_failed:
        case Event::accept_failed:
        case Event::cut_off: return {State::gone, Action::reject};
        case Event::peer_gone: return {State::gone, Action::destroy};
        case Event::established: break;
      }
      break;
    case State::accepting:
      switch (event) {
        case Event::established: return {State::established, Action::none};
        case Event::accept_failed: return {State::gone, Action::reject};
        case Event::cut_off: return {State::draining, Action::disconnect};
        case Event::peer_gone: return {State::gone, Action::destroy};
        case Event::bound:
        case Event::bind_failed: break;
      }
      break;
    case State::established:
      switch (event) {
        case Event::cut_off: return {State::draining, Action::disconnect};
        case Event::peer_gone: return {State::gone, Action::destroy};
        case Event::bound:
        case Event::bind_failed:
        case Event::accept_failed:
        case Event::established: break;
      }
      break;
    case State::draining:
      if (event == Event::peer_gone) return {State::gone, Action::destroy};
      break;
    case State::gone: break;
  }
  return {state, Action::none};
}

const char* to_string(State s) noexcept {
  switch (s) {
    case State::binding: return "binding";
    case State::accepting: return "accepting";
    case State::established: return "established";
    case State::draining: return "draining";
    case State::gone: return "gone";
  }
  return "?";
}

const char* to_string(Event e) noexcept {
  switch (e) {
    case Event::bound: return "bound";
    case Event::bind_failed: return "bind failed";
    case Event::accept_failed: return "accept failed";
    case Event::established: return "established";
    case Event::peer_gone: return "peer gone";
    case Event::cut_off: return "cut off";
  }
  return "?";
}

const char* to_string(Action a) noexcept {
  switch (a) {
    case Action::none: return "none";
    case Action::send_accept: return "send accept";
    case Action::reject: return "reject";
    case Action::disconnect: return "disconnect";
    case Action::destroy: return "destroy";
  }
  return "?";
}

}  // namespace vod::server::ondemand
