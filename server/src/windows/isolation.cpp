// SPDX-License-Identifier: LGPL-2.1-or-later
#include "windows/isolation.hpp"

#include <stdexcept>

namespace vod::server::windows {

IsolationRequest parse_isolation(const std::string& text) {
  if (text == "auto") return IsolationRequest::automatic;
  if (text == "windows") return IsolationRequest::windows;
  if (text == "pd") return IsolationRequest::pd;
  if (text == "shared") return IsolationRequest::shared;
  throw std::invalid_argument("--isolation must be auto, windows, pd or shared, not '" + text + "'");
}

IsolationChoice choose_isolation(IsolationRequest request, bool tokens, bool type2_windows, bool iwarp, const std::string& device) {
  if (!tokens) return {Isolation::none, "device " + device + ": no --auth-secret, nothing to isolate"};
  const bool can_bind_first = type2_windows && !iwarp;
  const std::string no_windows =
      iwarp ? " is iWARP (its QPs reach RTS only inside the accept, too late to bind a window first)" : " has no type-2 memory windows";
  switch (request) {
    case IsolationRequest::shared:
      return {Isolation::shared, "device " + device +
                                     ": --isolation shared: the shared regions' rkeys, the weaker mode: a client that learns an "
                                     "rkey can read that region from any connection until the server restarts (docs/security.md)"};
    case IsolationRequest::pd:
      return {Isolation::pd,
              "device " + device + ": a protection domain per connection, with a registration of exactly what it was granted"};
    case IsolationRequest::windows:
      if (!can_bind_first)
        throw std::invalid_argument("--isolation windows: device " + device + no_windows + ": use --isolation pd or auto");
      return {Isolation::windows, "device " + device + ": a memory window per connection, bound to its QP"};
    case IsolationRequest::automatic:
      if (can_bind_first) return {Isolation::windows, "device " + device + ": a memory window per connection, bound to its QP"};
      return {Isolation::pd, "device " + device + no_windows +
                                 ": a protection domain per connection instead, with a registration of exactly "
                                 "what it was granted"};
  }
  return {};
}

}  // namespace vod::server::windows
