// SPDX-License-Identifier: LGPL-2.1-or-later
#include "rdma/segment_reader.hpp"

#include <endian.h>

#include <algorithm>
#include <cstring>
#include <unordered_set>
#include <utility>

#include "vod/log.hpp"
#include "vod/rdma/device.hpp"
#include "vod/rdma/error.hpp"

namespace vod::client {

namespace {
constexpr std::size_t kChecks = SegmentReader::kMaxParts * 8;
constexpr std::size_t kMemory = kChecks + SegmentMessages::kMemory;  // check words, then the request channel's messages

std::uint32_t generation_of(std::uint64_t word) { return static_cast<std::uint32_t>(word >> 32); }
bool resident(std::uint64_t word) { return ((word >> 24) & 0xff) == static_cast<std::uint8_t>(proto::SegmentState::resident); }
}  // namespace

const char* to_string(PartState s) noexcept {
  switch (s) {
    case PartState::free: return "free";
    case PartState::starved: return "starved";
    case PartState::waiting_table: return "waiting_table";
    case PartState::parked: return "parked";
    case PartState::throttled: return "throttled";
    case PartState::reading: return "reading";
    case PartState::data_landed: return "data_landed";
  }
  return "?";
}

struct SegmentReader::Movie {
  proto::RegionDescriptor arena, table;
  std::uint32_t index = 0;
  std::uint64_t size = 0;
  enum class State { reading, ready } state = State::reading;
  std::vector<std::uint8_t> table_bytes;
  rdma::MemoryRegion table_mr;  // declared after the bytes: deregistered before they are freed
  proto::SegmentTableHeader header;
  std::chrono::milliseconds deadline{0};
  std::vector<std::uint64_t> words;  // each segment's entry as last seen (0: absent or unknown)
  std::vector<std::uint32_t> rkeys;  // a slot's rkey from a notification; 0: the arena's
  // When the request a notification answered was sent (with windows: its rkey is used for Reads
  // posted within `lease` of it, proto::window_use_ms).
  std::vector<std::chrono::steady_clock::time_point> answered;
  bool windowed = false;                     // the arena has no rkey: each slot is read through the window its answer names
  std::chrono::milliseconds lease{0};        // windowed: as above; otherwise the grace time
  std::vector<std::uint32_t> waiting_table;  // parts posted before the table landed
  std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> parked;  // absent segment -> its parts
  std::unordered_set<std::uint32_t> asked;                               // segments with a request unsent or unanswered
  std::int64_t entered = -1;                                             // the segment the last part went to
  bool window = false;                                                   // a DVR window: parts carry laps
};

SegmentReader::SegmentReader(rdma::ClientEndpoint& ep, std::uint32_t owner, rdma::ReadBatch& batch, unsigned read_room,
                             std::function<unsigned()> other_reads, Done done)
    : ep_(ep),
      owner_(owner),
      batch_(batch),
      done_(std::move(done)),
      parts_(std::clamp<unsigned>(read_room, 2, kMaxParts)),
      read_room_(std::max(read_room, 3u)),
      other_reads_(std::move(other_reads)),
      window_(std::max(1u, read_room_ / 2)),
      requests_(ep, owner, rdma::work_kind(FetchWork::recv), rdma::work_kind(FetchWork::send), stats_.requests, failure_) {
  auto memory = std::make_shared<std::vector<std::uint8_t>>(kMemory);
  memory_ = memory->data();
  ep_.pinned.push_back(std::move(memory));
  for (std::uint32_t i = 0; i < parts_.size(); ++i) free_parts_.push_back(static_cast<std::uint32_t>(parts_.size()) - 1 - i);
}

SegmentReader::~SegmentReader() {
  if (!fetches_.empty()) log::debug("client", "segment reader closed with work left: " + state());
  // Receives, check Reads and table Reads may still be posted: the QP stops here. What they land
  // in outlives this reader: the check words and messages are the endpoint's (pinned) until its QP
  // and MRs are gone, and a table's MR is deregistered before its bytes are freed (Movie).
  if (requests_.started() || !table_reads_.empty() || in_flight_) rdma::move_to_error(ep_.qp.get());
}

std::string SegmentReader::state() const {
  std::size_t parked = 0, waiting = 0;
  if (current_) {
    for (const auto& [seg, parts] : current_->parked) parked += parts.size();
    waiting = current_->waiting_table.size();
  }
  return std::to_string(fetches_.size()) + " fetches, " + std::to_string(in_flight_) + " parts in flight (window " +
         std::to_string(window_) + "), " + std::to_string(parked) + " waiting for a segment, " + std::to_string(waiting) +
         " for the table, " + std::to_string(throttled_.size()) + " throttled, " + std::to_string(starved_.size()) +
         " without a part number; " + requests_.state();
}

void SegmentReader::use(const proto::RegionDescriptor& arena, const proto::RegionDescriptor& table, std::uint32_t movie_index,
                        std::uint64_t size, bool window) {
  if (table.empty()) {
    current_.reset();
    return;
  }
  if (!mr_) {
    ep_.memory.push_back(
        rdma::register_memory(ep_.pd.get(), memory_, kMemory, rdma::read_sink_access(ep_.limits), "segment check words and messages"));
    mr_ = ep_.memory.back().get();
  }
  requests_.start(memory_ + kChecks, mr_);
  auto m = std::make_shared<Movie>();
  m->arena = arena;
  m->table = table;
  m->index = movie_index;
  m->size = size;
  m->window = window;
  m->windowed = arena.rkey == 0;
  m->table_bytes.resize(table.length);
  m->table_mr = rdma::register_memory(ep_.pd.get(), m->table_bytes.data(), m->table_bytes.size(), rdma::read_sink_access(ep_.limits),
                                      "a segment table");
  const std::uint32_t id = next_table_++ & rdma::WorkId::kMaxIndex;
  batch_.add(rdma::WorkId{owner_, rdma::work_kind(FetchWork::table), id}.pack(), m->table_bytes.data(),
             static_cast<std::uint32_t>(m->table_bytes.size()), m->table_mr->lkey, table.addr, table.rkey);
  table_reads_[id] = m;
  ++table_reads_in_flight_;
  current_ = std::move(m);
}

void SegmentReader::fetch(std::uint32_t slot, std::uint64_t offset, std::uint32_t length, std::uint8_t* dest, std::uint32_t lkey) {
  if (length == 0) return done_(slot, true, {});
  const std::uint32_t fid = next_fetch_++;
  fetches_[fid] = Fetch{slot, 1};
  Part whole;
  whole.movie = current_;
  whole.fetch = fid;
  whole.offset = offset;  // a movie offset until split at segment boundaries
  whole.length = length;
  whole.dest = dest;
  whole.lkey = lkey;
  place(std::move(whole));
}

void SegmentReader::place(Part p) {
  if (!fetches_.count(p.fetch)) return;  // its fetch failed: nothing of it is delivered
  Movie& m = *p.movie;
  if (!p.split && m.state == Movie::State::ready) {
    // Split at segment boundaries: each piece is a part of the same fetch.
    const std::uint64_t seg_size = m.header.segment_size;
    if (p.offset + p.length > m.size) {  // the engine reads within the movie's size: never
      const std::uint32_t slot = fetches_.at(p.fetch).slot;
      fetches_.erase(p.fetch);
      return done_(slot, false, "a Read past the end of the movie (" + std::to_string(m.size) + " bytes)");
    }
    std::vector<Part> pieces;
    for (std::uint64_t at = p.offset, end = p.offset + p.length; at < end;) {
      Part piece = p;
      piece.split = true;
      const std::uint64_t g = at / seg_size;
      piece.segment = static_cast<std::uint32_t>(m.window ? g % m.header.segment_count : g);
      piece.lap = m.window ? static_cast<std::uint32_t>(g / m.header.segment_count) : 0;
      piece.offset = at % seg_size;
      piece.length = static_cast<std::uint32_t>(std::min<std::uint64_t>(end - at, seg_size - piece.offset));
      piece.dest = p.dest + (at - p.offset);
      at += piece.length;
      pieces.push_back(std::move(piece));
    }
    fetches_.at(p.fetch).parts_left += static_cast<std::uint32_t>(pieces.size()) - 1;
    for (Part& piece : pieces) place(std::move(piece));
    return;
  }
  if (free_parts_.empty()) {
    p.state = PartState::starved;
    starved_.push_back(std::move(p));
    return;
  }
  const std::uint32_t i = free_parts_.back();
  free_parts_.pop_back();
  parts_[i] = std::move(p);
  if (parts_[i].split) return dispatch(i);
  move_part(i, PartState::waiting_table);
  m.waiting_table.push_back(i);
}

void SegmentReader::dispatch(std::uint32_t i) {
  Part& p = parts_[i];
  Movie& m = *p.movie;
  if (m.entered != p.segment) {  // a new segment: keep it and the next ones resident
    m.entered = p.segment;
    ask(p.movie, p.segment, kAhead);
  } else if (m.lease.count() && std::chrono::steady_clock::now() - m.answered[p.segment] > m.lease / 2) {
    // Still on it after half the grace time (a slow reader of a long segment): asked again, so
    // that it stays among the most recently requested and is not evicted under the reader (and,
    // with windows, so that a fresh lease on its window arrives before this one ends).
    ask(p.movie, p.segment, kAhead);
  }
  if (m.windowed && std::chrono::steady_clock::now() - m.answered[p.segment] > m.lease) m.words[p.segment] = 0;  // its lease is over
  const std::uint64_t word = m.words.at(p.segment);
  if (m.window && word && generation_of(word) > p.lap) {  // the chunk moved on to a later lap: these bytes are gone
    if (outside_.empty()) outside_ = "chunk " + std::to_string(p.segment) + "'s lap " + std::to_string(p.lap) + " left the window";
    return finish(i, false, outside_);
  }
  const bool here = resident(word) && (!m.window || generation_of(word) == p.lap);
  switch (route_part(here, room_for_part())) {
    case PartRoute::park:
      move_part(i, PartState::parked);
      m.parked[p.segment].push_back(i);
      ask(p.movie, p.segment, kAhead);
      return;
    case PartRoute::throttle:  // later, when a Read in flight has completed
      move_part(i, PartState::throttled);
      throttled_.push_back(i);
      return;
    case PartRoute::post: break;
  }
  ++in_flight_;
  const std::uint64_t slot = word & proto::kMaxSlot;
  const std::uint32_t rkey = m.rkeys[p.segment] ? m.rkeys[p.segment] : m.arena.rkey;
  p.word = word;
  p.posted = std::chrono::steady_clock::now();
  move_part(i, PartState::reading);
  ++stats_.parts;
  batch_.add(rdma::WorkId{owner_, rdma::work_kind(FetchWork::data), i}.pack(), p.dest, p.length, p.lkey,
             m.arena.addr + slot * m.header.segment_size + p.offset, rkey);
  batch_.add(rdma::WorkId{owner_, rdma::work_kind(FetchWork::check), i}.pack(), memory_ + std::size_t{i} * 8, 8, mr_->lkey,
             m.table.addr + proto::segment_entry_offset(p.segment), m.table.rkey, rdma::fences_reads(ep_.limits));
}

void SegmentReader::ask(const std::shared_ptr<Movie>& m, std::uint32_t segment, std::uint16_t ahead) {
  if (!m->asked.insert(segment).second) return;
  requests_.enqueue({m, segment, ahead, {}});
}

std::string SegmentReader::on_completion(const ibv_wc& wc, rdma::WorkId id) {
  const bool ok = wc.status == IBV_WC_SUCCESS;
  if (!ok && wc.status != IBV_WC_WR_FLUSH_ERR)
    return std::string("a segment cache work request failed: ") + ibv_wc_status_str(wc.status) + " (vendor error " +
           std::to_string(wc.vendor_err) + ")";
  if (!ok) return "the connection was flushed";
  switch (static_cast<FetchWork>(id.kind)) {
    case FetchWork::table: return on_table(id.index, ok);
    case FetchWork::recv: return on_notify(id.index);
    case FetchWork::send: requests_.on_sent(id.index); return {};
    case FetchWork::data:
      if (!takes_data(parts_.at(id.index).state)) return "a segment data Read completed for a part that has none in flight";
      move_part(id.index, PartState::data_landed);
      return {};
    case FetchWork::check: {
      Part& p = parts_.at(id.index);
      if (!p.movie || !takes_check(p.state)) return "a segment check completed before its data Read";
      std::uint64_t be;
      std::memcpy(&be, memory_ + std::size_t{id.index} * 8, 8);
      const std::uint64_t now_word = be64toh(be);
      const bool late = std::chrono::steady_clock::now() - p.posted > p.movie->deadline;
      const bool gone = now_word != p.word;
      --in_flight_;
      // Fewer parts at once after a late one or one whose segment went (each check is fenced behind
      // every Read before it, so it samples the entry only once all of them have landed), one more
      // after each in time: a slow path, or slots evicted as fast as they are filled, still
      // completes parts instead of retrying for ever.
      window_ = late || gone ? std::max(1u, window_ / 2) : std::min(window_ + 1, std::max(1u, read_room_ / 2));
      release_throttled();
      if (!gone && !late) {
        finish(id.index, true, {});
        return {};
      }
      // Evicted meanwhile (or too slow to trust): the bytes are dropped and the part goes again.
      ++(late ? stats_.late : stats_.rereads);
      auto entry = proto::unpack_segment_entry(now_word);
      if (!entry) return "segment table entry does not decode: " + entry.error().message;
      Movie& m = *p.movie;
      // With windows only an answer names a slot with its rkey: the segment is asked for again.
      if (m.windowed) m.words[p.segment] = 0;
      else if (generation_of(now_word) >= generation_of(m.words[p.segment])) m.words[p.segment] = entry->resident() ? now_word : 0;
      dispatch(id.index);
      return {};
    }
    default: return {};
  }
}

bool SegmentReader::room_for_part() const {
  return in_flight_ < window_ && 2 * (in_flight_ + 1) + table_reads_in_flight_ + other_reads_() <= read_room_;
}

void SegmentReader::release_throttled() {
  // Each dispatch either posts the part (taking room), parks it (its segment went), or, with no
  // room, would throttle it again: so only while there is room.
  while (!throttled_.empty() && room_for_part()) {
    const std::uint32_t i = throttled_.front();
    throttled_.pop_front();
    dispatch(i);
  }
}

std::string SegmentReader::on_table(std::uint32_t index, bool) {
  auto node = table_reads_.extract(index);
  if (node.empty()) return {};
  --table_reads_in_flight_;
  release_throttled();  // its room in the send queue is free again
  Movie& m = *node.mapped();
  auto header = proto::decode_segment_table_header(m.table_bytes, m.table.length);
  if (!header) return "the segment table does not decode: " + header.error().message;
  const std::uint64_t listed = m.window ? std::uint64_t{header->segment_count} * header->segment_size : m.size;
  if (header->movie_size != listed || header->arena_length != m.arena.length)
    return "the segment table describes a movie of " + std::to_string(header->movie_size) + " bytes in an arena of " +
           std::to_string(header->arena_length) + ", not the " + std::to_string(m.size) + " and " + std::to_string(m.arena.length) +
           " accepted";
  const auto max_slot = static_cast<std::uint32_t>(header->arena_length / header->segment_size - 1);
  auto entries =
      proto::decode_segment_entries(std::span(m.table_bytes).subspan(proto::kSegmentTableHeaderSize), header->segment_count, max_slot);
  if (!entries) return "the segment table does not decode: " + entries.error().message;
  m.header = *header;
  m.deadline = std::chrono::milliseconds(header->read_deadline_ms);
  m.words.resize(entries->size());
  m.rkeys.assign(entries->size(), 0);
  m.answered.assign(entries->size(), {});
  m.lease = std::chrono::milliseconds(m.windowed ? proto::window_use_ms(header->grace_ms, header->read_deadline_ms) : header->grace_ms);
  // With windows a resident entry says nothing this connection can read: its answers will.
  for (std::size_t s = 0; s < entries->size(); ++s) m.words[s] = (*entries)[s].resident() && !m.windowed ? proto::pack((*entries)[s]) : 0;
  requests_.set_credits(header->request_credits);
  m.state = Movie::State::ready;
  // Parts posted before the table landed hold movie offsets: split and placed now.
  std::vector<std::uint32_t> waiting = std::move(m.waiting_table);
  for (std::uint32_t i : waiting) {
    Part whole = std::move(parts_[i]);
    parts_[i] = Part{};
    free_parts_.push_back(i);
    place(std::move(whole));
  }
  return {};
}

std::string SegmentReader::on_notify(std::uint32_t index) {
  auto received = requests_.on_received(index);
  if (auto* why = std::get_if<std::string>(&received)) return *why;
  auto& [answer, r] = std::get<SegmentRequests<Movie>::Answer>(received);
  const proto::SegmentNotify* n = &answer;
  Movie& m = *r.movie;
  m.asked.erase(r.segment);
  if (n->segment != r.segment || n->movie_index != m.index) return "the server's answer names another segment than was asked for";
  if (n->status != proto::SegmentStatus::ok) {
    const std::string why = "segment " + std::to_string(r.segment) + " of the movie: " + proto::to_string(n->status);
    // A disk or an origin may recover; the other answers would not. A window's chunk being written is outside it.
    const bool passing = n->status == proto::SegmentStatus::disk_error || n->status == proto::SegmentStatus::origin_error;
    const bool outside = m.window && n->status == proto::SegmentStatus::out_of_range;
    if (outside && outside_.empty()) outside_ = "chunk " + std::to_string(r.segment) + " of the window holds no whole segment now";
    if (!outside && !passing && refusal_.empty()) refusal_ = why;
    fail_waiting(m, r.segment, why);
  } else if (m.state == Movie::State::ready) {
    if ((n->entry & proto::kMaxSlot) >= m.header.arena_length / m.header.segment_size)
      return "the server named a slot past its arena for segment " + std::to_string(r.segment);
    if (generation_of(n->entry) >= generation_of(m.words[r.segment])) {
      m.words[r.segment] = n->entry;
      m.rkeys[r.segment] = n->rkey;
      m.answered[r.segment] = r.sent;
    }
    auto parked = m.parked.extract(r.segment);
    if (!parked.empty())
      for (std::uint32_t i : parked.mapped()) dispatch(i);
  }
  requests_.send();
  return {};
}

void SegmentReader::fail_waiting(Movie& m, std::uint32_t segment, const std::string& why) {
  auto parked = m.parked.extract(segment);
  if (parked.empty()) return;
  for (std::uint32_t i : parked.mapped()) finish(i, false, why);
}

void SegmentReader::finish(std::uint32_t i, bool ok, const std::string& why) {
  const std::uint32_t fid = parts_[i].fetch;
  parts_[i] = Part{};
  free_parts_.push_back(i);
  if (!starved_.empty()) {  // the part number goes to a part that waited for one
    Part next = std::move(starved_.front());
    starved_.pop_front();
    place(std::move(next));
  }
  auto it = fetches_.find(fid);
  if (it == fetches_.end()) return;  // failed already
  if (!ok) {
    const std::uint32_t slot = it->second.slot;
    fetches_.erase(it);
    done_(slot, false, why);
    return;
  }
  if (--it->second.parts_left == 0) {
    const std::uint32_t slot = it->second.slot;
    fetches_.erase(it);
    done_(slot, true, {});
  }
}

std::string SegmentReader::summary() const {
  if (!stats_.parts) return {};
  return "segment cache: " + std::to_string(stats_.parts) + " segment Reads, " + std::to_string(stats_.requests) + " requests, " +
         std::to_string(stats_.rereads) + " read again after an eviction, " + std::to_string(stats_.late) + " dropped as late";
}

}  // namespace vod::client
