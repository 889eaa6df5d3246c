// SPDX-License-Identifier: LGPL-2.1-or-later
// A test hook (--udp-test-drop): datagrams the sender "loses" on purpose, so tests can create exact
// holes: the last datagram of every Nth record, every datagram of every Nth record, every Nth
// datagram. Repairs (a record asked for again) are never dropped, so every hole can be filled.
// A "lost" train is paced like a sent one and never handed to the socket.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>

namespace vod::server::udp {

struct TestDrop {  // 0: none
  unsigned last_of_record = 0, whole_record = 0, datagram = 0;
  bool any() const noexcept { return last_of_record || whole_record || datagram; }
};

// Parses --udp-test-drop: "last:N,record:N,datagram:N" (any of them); throws std::invalid_argument.
TestDrop parse_test_drop(const std::string& text);

class TestDropper {
 public:
  explicit TestDropper(const TestDrop& drop) : drop_(drop) {}
  bool active() const noexcept { return drop_.any(); }

  // A request for the session's record: its ordinal among records first asked for, or a repair.
  struct Mark {
    std::uint64_t ordinal = 0;
    bool repair = false;
  };
  Mark admit(std::uint32_t session_id, std::uint64_t record_seq);
  // Whether the train just built of the record `m` (`last`: it ends the record) is lost.
  bool drops(const Mark& m, bool last) noexcept;
  std::uint64_t dropped() const noexcept { return dropped_; }

 private:
  TestDrop drop_;
  std::set<std::pair<std::uint32_t, std::uint64_t>> seen_;  // records asked for (session, seq)
  std::uint64_t admitted_ = 0, built_ = 0, dropped_ = 0;
};

}  // namespace vod::server::udp
