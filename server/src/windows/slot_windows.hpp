// SPDX-License-Identifier: LGPL-2.1-or-later
// One connection's memory windows over segment cache slots, with tokens (docs/segment-cache.md,
// "With tokens"): the arena is registered for window binding only, so a client reads a slot through
// a type-2 window bound to its own QP over exactly that slot, handed out in the notification that
// answered its request for the segment in it. A token for movie A gets windows over slots holding
// A's segments and nothing else.
//
// Each window is kept until its slot is refilled (SlotWatchers) or, when the connection holds `cap`
// of them, until its lease is over (window_keep): a window a client may still use is never freed
// under it.
//
// With a PD per connection (--isolation pd, for iWARP, whose QPs cannot bind a window before the
// accept) the same set holds registrations instead: each exactly one segment's bytes in its slot, on
// the connection's own PD, usable at once (no bind) and deregistered where a window would be freed.
// Every one of them counts against the server's --isolation-memory (PinnedBudget), as the
// connection's registrations at accept do: past it, the window whose lease is over goes first, and
// then make() throws BudgetExhausted (the segment is answered "busy", the connection stays).
#pragma once

#include <infiniband/verbs.h>

#include <optional>
#include <stdexcept>
#include <unordered_map>

#include "vod/rdma/handles.hpp"
#include "windows/connection_pd.hpp"
#include "windows/rkey_history.hpp"
#include "windows/slot_watchers.hpp"

namespace vod::server::windows {

// A region for a slot would take the server past --isolation-memory.
class BudgetExhausted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SlotWindows final : public SlotWatchers::Holder {
 public:
  enum class Kind { window, region };
  // `budget`: with Kind::region, what every registration counts against (null: not counted).
  SlotWindows(SlotWatchers& watchers, ibv_pd* pd, RkeyHistory& rkeys, std::size_t cap, Clock::duration keep, Kind kind = Kind::window,
              PinnedBudget* budget = nullptr) noexcept
      : watchers_(watchers), pd_(pd), rkeys_(rkeys), cap_(cap), keep_(keep), kind_(kind), budget_(budget) {}
  ~SlotWindows();
  SlotWindows(const SlotWindows&) = delete;
  SlotWindows& operator=(const SlotWindows&) = delete;

  // The rkey of the bound window over `slot`, its lease renewed from `now`; nullopt when there is
  // none (or its bind has not completed).
  std::optional<std::uint32_t> bound(std::uint32_t slot, Clock::time_point now);
  // A new window for `slot`, over `length` bytes at `addr`, to bind (the caller posts the bind and
  // calls bind_done): the window and the rkey to bind it with. A region is registered here and
  // usable at once (mw null). Nullopt when `cap` are held and none of their leases is over:
  // expiry() says when one will be. Throws RdmaError when the device has no window (or region) to
  // give, BudgetExhausted when a region would pass the budget even after the expired ones went.
  struct ToBind {
    ibv_mw* mw;
    std::uint32_t rkey;
  };
  std::optional<ToBind> make(std::uint32_t slot, const void* addr, std::uint64_t length, Clock::time_point now);
  // The bind of `slot`'s window completed: usable (and its lease starts) when `ok`, else freed.
  // False when the window went meanwhile (its slot is being refilled).
  bool bind_done(std::uint32_t slot, bool ok, Clock::time_point now);
  // When the earliest lease ends (for a caller waiting on the cap).
  std::optional<Clock::time_point> expiry() const;
  // Frees every window: their rkeys read nothing from now on.
  void clear() noexcept;
  std::size_t size() const noexcept { return windows_.size(); }

  void slot_refilling(std::uint32_t slot) noexcept override;

 private:
  struct Window {
    rdma::MemoryWindow mw;
    rdma::MemoryRegion mr;       // Kind::region
    PinnedBudget::Lease pinned;  // Kind::region: its bytes of --isolation-memory
    std::uint32_t rkey = 0;
    bool bound = false;
    Clock::time_point keep_until{};
  };
  SlotWatchers& watchers_;
  ibv_pd* pd_;
  RkeyHistory& rkeys_;
  std::size_t cap_;
  Clock::duration keep_;
  Kind kind_;
  PinnedBudget* budget_;
  std::unordered_map<std::uint32_t, Window> windows_;  // by slot
  void drop_expired(Clock::time_point now) noexcept;   // every window whose lease is over
};

}  // namespace vod::server::windows
