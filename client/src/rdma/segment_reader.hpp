// SPDX-License-Identifier: LGPL-2.1-or-later
// One-sided reads of a movie the server serves from its segment cache (protocol version 2,
// vod/protocol/segment_table.hpp), for the RdmaFetcher.
//
// A fetch of the movie is split at segment boundaries into parts. A part whose segment the reader
// believes resident (its last word of the segment's entry) goes out as two Reads in one batch: the
// bytes from the slot, then the entry again, fenced where the device allows it (IBV_SEND_FENCE: it
// samples the entry only after the data Read has completed; siw refuses a fenced Read, so not on
// iWARP). The part is delivered only when the re-read word equals the word it was posted with and
// the check completed within the server's Read deadline. The deadline alone is enough: Reads on a
// QP complete in order, so the data Read sampled the slot before the check completed, that is
// within the deadline of posting; the entry was still valid when the check sampled it, after the
// posting; and the server refills a slot only once its entry has been invalid for longer than the
// deadline. So the segment sat in that slot for the whole data Read. Otherwise its bytes are
// dropped and the part goes again (with the new word, or after asking for the segment).
//
// With memory windows (a server with tokens: the accept gives the arena no rkey) a slot is read only
// through the window rkey of the answer to a request for its segment, and only within the lease
// that answer gives (proto::window_use_ms from when the request was sent): a resident entry in the
// table, or an answer whose lease is over, makes the reader ask again, and it asks again at half
// the lease while it still reads the segment.
//
// A part whose segment is absent waits for it: a SegmentRequest Send (at most `credits` unanswered:
// the request channel, segment_requests.hpp) makes the server fault it in and answer with its word. Entering a segment sends one request for it
// with read-ahead, so that the server keeps the viewer's current and next segments resident (least
// recently requested slots go first) and a paced viewer finds the next one there. The table itself
// is Read once per movie, before its first part goes out.
//
// Each part is in one named state (PartState: starved, waiting_table, parked, throttled, reading,
// data_landed), changed in one place (move_part); where a dispatched part goes is a pure decision
// (route_part). Both have a table test (tests/unit/read_planner_test.cpp).
//
// Work requests are tagged with the fetcher's owner id and FetchWork kinds data, check, table, recv
// and send; the index is the part, the table read, or the message buffer.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rdma/segment_requests.hpp"
#include "vod/protocol/region_descriptor.hpp"
#include "vod/protocol/segment_table.hpp"
#include "vod/rdma/completion_hub.hpp"
#include "vod/rdma/connection.hpp"
#include "vod/rdma/post.hpp"

namespace vod::client {

// The kinds of the RdmaFetcher's work request ids (rdma::WorkId::kind), one enum for that hub
// owner: its whole-block Reads, and its SegmentReader's data Reads, checks, table Reads, receives
// and sends.
enum class FetchWork : std::uint8_t { read = 1, data = 2, check = 3, table = 4, recv = 5, send = 6 };

// A part's state: where it waits, or what of it is in flight. The container that holds a waiting
// part's number (the movie's waiting_table or parked, the reader's throttled_ or starved_) follows
// from it; SegmentReader::move_part is the one place that changes it.
enum class PartState {
  free,           // its number is free
  starved,        // waiting for a part number (in starved_, no number yet)
  waiting_table,  // posted before its movie's segment table landed: still a movie offset
  parked,         // its segment is not resident: waiting for the answer to a request
  throttled,      // resident, waiting for room in the window or the send queue
  reading,        // its data Read and its check are posted
  data_landed,    // its data Read completed; its check has not
};
const char* to_string(PartState s) noexcept;

// Where a part whose segment is known goes when it is dispatched: a pure decision (table test).
enum class PartRoute { park, throttle, post };
constexpr PartRoute route_part(bool resident, bool room) noexcept {
  return !resident ? PartRoute::park : !room ? PartRoute::throttle : PartRoute::post;
}
// The completion kinds a part in `s` may take: its data Read's in reading, its check's in
// data_landed (Reads on a QP complete in order, and the check is posted after the data).
constexpr bool takes_data(PartState s) noexcept { return s == PartState::reading; }
constexpr bool takes_check(PartState s) noexcept { return s == PartState::data_landed; }

struct SegmentStats {
  std::uint64_t parts = 0, requests = 0, rereads = 0, late = 0;
};

class SegmentReader {
 public:
  static constexpr std::uint16_t kMaxCredits = SegmentMessages::kMaxCredits;  // requests unanswered at most
  static constexpr std::uint16_t kAhead = 2;                                  // segments of read-ahead asked for on entering one
  static constexpr std::uint32_t kMaxParts = 256;

  using Done = std::function<void(std::uint32_t slot, bool ok, const std::string& why)>;

  // The send queue holds `read_room` Reads beside kMaxCredits requests; `other_reads` says how many
  // of them the fetcher's own (catalog, index, whole movies) take now. A part (two Reads) goes out
  // only when it fits: a client's CQ share stays what a read depth needs, whatever it reads.
  SegmentReader(rdma::ClientEndpoint& ep, std::uint32_t owner, rdma::ReadBatch& batch, unsigned read_room,
                std::function<unsigned()> other_reads, Done done);
  ~SegmentReader();

  // The movie the movie region is now: `table` describes its segment table and `arena` the slots
  // (an empty table: the movie is served whole, and this reader is idle). A live channel's DVR
  // window (`window`, vod/protocol/live_window.hpp) is read by stream offsets: segment g is entry
  // g mod N, and only while that entry's generation is g / N, the lap the chunk holds.
  void use(const proto::RegionDescriptor& arena, const proto::RegionDescriptor& table, std::uint32_t movie_index, std::uint64_t size,
           bool window = false);
  bool active() const noexcept { return current_ != nullptr; }
  // A fetch of [offset, offset + length) of the movie into `dest` (registered with `lkey`).
  void fetch(std::uint32_t slot, std::uint64_t offset, std::uint32_t length, std::uint8_t* dest, std::uint32_t lkey);
  // A completion of one of its kinds. Returns a failure that loses the connection, or "".
  std::string on_completion(const ibv_wc& wc, rdma::WorkId id);
  const SegmentStats& stats() const noexcept { return stats_; }
  std::string summary() const;
  std::string state() const;  // what is pending, for diagnostics
  // A failure found outside a completion (a request that could not be posted), once.
  std::string take_failure() { return std::exchange(failure_, {}); }
  // An answer that reconnecting would not change (busy, refused, not a cached movie, no such
  // segment), once: the read ends with it as its reason instead of a reconnect.
  std::string take_refusal() { return std::exchange(refusal_, {}); }
  // A window's read of bytes no longer in it (their chunk holds a later lap), or not yet in it, once.
  std::string take_outside() { return std::exchange(outside_, {}); }
  bool outside_pending() const noexcept { return !outside_.empty(); }
  // Its Reads posted and not completed (two per part, one per table).
  unsigned reads_in_flight() const noexcept { return 2 * in_flight_ + table_reads_in_flight_; }
  // A part waits for the answer to a segment request: something only the server's process does.
  bool waiting_on_server() const noexcept {
    return std::any_of(parts_.begin(), parts_.end(), [](const Part& p) { return p.state == PartState::parked; });
  }

 private:
  struct Movie;
  struct Fetch {
    std::uint32_t slot;
    std::uint32_t parts_left;
  };
  struct Part {
    std::shared_ptr<Movie> movie;
    std::uint32_t fetch = 0;
    std::uint32_t segment = 0;  // the table's entry (a window's: the chunk)
    std::uint32_t lap = 0;      // a window's: the lap the entry must hold
    std::uint64_t offset = 0;   // within the segment
    std::uint32_t length = 0;
    std::uint8_t* dest = nullptr;
    std::uint32_t lkey = 0;
    std::uint64_t word = 0;  // the entry's word it was posted with
    std::chrono::steady_clock::time_point posted{};
    PartState state = PartState::free;
    bool split = false;  // segment and offset set; before, `offset` is the movie's
  };

  // Gives `p` a part number (or queues it for one), splitting it at segment boundaries once the
  // table has landed, and dispatches it.
  void place(Part p);
  void dispatch(std::uint32_t part);
  // The one place a numbered part's state changes (a part without a number is starved).
  void move_part(std::uint32_t part, PartState to) noexcept { parts_[part].state = to; }
  bool room_for_part() const;  // the window and the send queue take one more part
 public:
  // Posts throttled parts that fit now (after any Read completed).
  void release_throttled();

 private:
  void ask(const std::shared_ptr<Movie>& m, std::uint32_t segment, std::uint16_t ahead);
  std::string on_table(std::uint32_t index, bool ok);
  std::string on_notify(std::uint32_t index);
  void finish(std::uint32_t part, bool ok, const std::string& why);
  void fail_waiting(Movie& m, std::uint32_t segment, const std::string& why);

  rdma::ClientEndpoint& ep_;
  std::uint32_t owner_;
  rdma::ReadBatch& batch_;
  Done done_;
  // Registered once: check words, then message buffers (receives, then sends). Owned by the
  // endpoint (ClientEndpoint::pinned), which frees it only after its QP and MRs: a Read or receive
  // posted by this reader may land after the reader is gone.
  std::uint8_t* memory_ = nullptr;
  ibv_mr* mr_ = nullptr;  // owned by ep_.memory

  std::shared_ptr<Movie> current_;
  std::vector<Part> parts_;  // declared before window_, which starts at its size
  std::vector<std::uint32_t> free_parts_;
  std::deque<Part> starved_;             // parts waiting for a part number
  std::deque<std::uint32_t> throttled_;  // resident parts waiting for room in the window
  unsigned read_room_;
  std::function<unsigned()> other_reads_;
  unsigned window_;         // parts in flight allowed now (halved by a late check)
  unsigned in_flight_ = 0;  // parts posted and not yet checked (two Reads each)
  unsigned table_reads_in_flight_ = 0;
  std::unordered_map<std::uint32_t, Fetch> fetches_;
  std::uint32_t next_fetch_ = 1;
  std::unordered_map<std::uint32_t, std::shared_ptr<Movie>> table_reads_;
  std::uint32_t next_table_ = 0;

  std::string failure_;
  std::string refusal_;
  std::string outside_;
  SegmentStats stats_;
  SegmentRequests<Movie> requests_;  // after stats_ and failure_, which it counts into
};

}  // namespace vod::client
