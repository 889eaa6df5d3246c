// SPDX-License-Identifier: LGPL-2.1-or-later
// Which client address sends next: deficit round robin (Shreedhar and Varghese, "Efficient fair
// queueing using deficit round robin", 1995) over the addresses that have a datagram they may send
// now. Each turn adds a quantum of bytes to the address's deficit; the address sends while its
// deficit covers its next send, then goes to the back of the ring. So over any stretch of time
// every backlogged address gets the same share of what the server sends (within a quantum), however
// many ports, sessions and ranges it uses and whatever rate it asked for; an address that wants
// less than its share gets all it wants. The cost is O(1) per send.
//
// Pure (no clock, no socket): the server's pump drives it, and tests drive it with a simulated link.
#pragma once

#include <cstddef>
#include <deque>

namespace vod::server::udp {

template <class Id>
class FairQueue {
 public:
  // `quantum`: bytes added per turn; at least the largest single send, so every turn sends.
  explicit FairQueue(double quantum) : quantum_(quantum) {}

  // `id` has something to send: it joins the back of the ring. The caller keeps each id in the ring
  // at most once (UdpService marks its clients `queued`).
  void push(const Id& id) { ring_.push_back({id, 0, false}); }
  bool empty() const noexcept { return ring_.empty(); }
  std::size_t size() const noexcept { return ring_.size(); }

  // Whose turn it is (the ring must not be empty).
  const Id& front() const noexcept { return ring_.front().id; }
  // Bytes the front may still send in this turn (the turn's quantum is added when it is first asked).
  double allowance() noexcept {
    Entry& e = ring_.front();
    if (!e.started) {
      e.deficit += quantum_;
      e.started = true;
    }
    return e.deficit;
  }
  // The front sent `bytes` (at most allowance()).
  void spend(double bytes) noexcept { ring_.front().deficit -= bytes; }
  // The front's turn is over (its allowance does not cover its next send) and it still has data:
  // to the back, keeping what is left of its deficit for its next turn.
  void rotate() {
    ring_.front().started = false;
    if (ring_.size() == 1) return;  // alone: its next turn starts at once
    ring_.push_back(ring_.front());
    ring_.pop_front();
  }
  // The front has nothing it may send now (its queue is empty, or its own pacing holds it): it
  // leaves the ring and its deficit is forgotten, as DRR does for a queue that empties.
  void pop() { ring_.pop_front(); }

 private:
  struct Entry {
    Id id;
    double deficit;
    bool started;  // this turn's quantum was added
  };
  double quantum_;
  std::deque<Entry> ring_;
};

}  // namespace vod::server::udp
