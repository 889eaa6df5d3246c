// SPDX-License-Identifier: LGPL-2.1-or-later
// How a server with tokens keeps each connection to what its token granted, per device (docs/security.md,
// "Isolation"): a pure decider, table-tested (tests/unit/isolation_test.cpp).
//
//   windows  a type-2 memory window per region the connection was granted, bound to its QP before the
//            accept (devices whose QPs reach RTS before the accept: RoCE, InfiniBand; not iWARP)
//   pd       a protection domain per connection, holding its QP and a registration of exactly what it
//            was granted: an rkey from another PD fails on every device (siw and rxe alike). It pins
//            the granted memory again for every connection (bounded: --isolation-memory)
//   shared   the shared regions' rkeys, as without tokens: tokens decide who connects, not what an
//            rkey reads. Only when asked for by name (--isolation shared, or --no-memory-windows)
//   none     no tokens: nothing to isolate
#pragma once

#include <string>

namespace vod::server::windows {

enum class Isolation { none, shared, windows, pd };

// --isolation: auto (the strongest the device can do), or one mode by name.
enum class IsolationRequest { automatic, windows, pd, shared };
// Parses auto|windows|pd|shared; throws std::invalid_argument naming the choices.
IsolationRequest parse_isolation(const std::string& text);

struct IsolationChoice {
  Isolation mode = Isolation::none;
  std::string why;  // one line for the log
};
// What a device gets. Throws std::invalid_argument when the request cannot be met on it (windows on
// a device without type-2 windows, or on iWARP, whose QPs reach RTS only inside the accept).
IsolationChoice choose_isolation(IsolationRequest request, bool tokens, bool type2_windows, bool iwarp, const std::string& device);

}  // namespace vod::server::windows
