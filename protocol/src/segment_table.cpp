// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/protocol/segment_table.hpp"

#include <bit>

#include "decode_support.hpp"

namespace vod::proto {

using detail::fail;
using detail::hex;
using detail::num;

std::uint64_t pack(const SegmentEntry& e) noexcept {
  return (std::uint64_t{e.generation} << 32) | (std::uint64_t{static_cast<std::uint8_t>(e.state)} << 24) | (e.slot & kMaxSlot);
}

Decoded<SegmentEntry> unpack_segment_entry(std::uint64_t word) {
  SegmentEntry e;
  e.generation = static_cast<std::uint32_t>(word >> 32);
  const auto state = static_cast<std::uint8_t>(word >> 24);
  e.slot = static_cast<std::uint32_t>(word & kMaxSlot);
  if (state > 1) return fail(DecodeFault::bad_field, "segment entry: state " + num(state) + " is undefined (0 absent, 1 resident)");
  e.state = static_cast<SegmentState>(state);
  if (!e.resident() && e.slot != 0) return fail(DecodeFault::inconsistent, "segment entry: an absent segment names slot " + num(e.slot));
  return e;
}

std::vector<std::uint8_t> encode_segment_table(const SegmentTableHeader& h, const std::vector<SegmentEntry>& entries) {
  std::vector<std::uint8_t> out(kSegmentTableHeaderSize + entries.size() * kSegmentEntrySize);
  WireSegmentTableHeader w{};
  w.magic = kSegmentTableMagic;
  w.version = kSegmentsVersion;
  w.header_length = static_cast<std::uint16_t>(kSegmentTableHeaderSize);
  w.segment_size = h.segment_size;
  w.segment_count = h.segment_count;
  w.movie_size = h.movie_size;
  w.arena_length = h.arena_length;
  w.read_deadline_ms = h.read_deadline_ms;
  w.request_credits = h.request_credits;
  w.grace_ms = h.grace_ms;
  store_wire(out.data(), w);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const be64 word = pack(entries[i]);
    store_wire(out.data() + segment_entry_offset(static_cast<std::uint32_t>(i)), word);
  }
  return out;
}

Decoded<SegmentTableHeader> decode_segment_table_header(Bytes buf, std::uint64_t region_length) {
  if (buf.size() < kSegmentTableHeaderSize)
    return fail(DecodeFault::truncated, "segment table: " + num(buf.size()) + " bytes, fewer than the 64-byte header");
  const auto w = load_wire<WireSegmentTableHeader>(buf.data());
  if (w.magic.get() != kSegmentTableMagic)
    return fail(DecodeFault::bad_magic, "segment table: magic " + hex(w.magic.get()) + " is not " + hex(kSegmentTableMagic));
  if (w.version < kSegmentsVersion || w.version > kProtocolVersion)
    return fail(DecodeFault::unsupported_version, "segment table: layout version " + num(w.version) + " not supported");
  if (w.header_length.get() != kSegmentTableHeaderSize)
    return fail(DecodeFault::bad_length, "segment table: header length " + num(w.header_length.get()) + " is not 64");
  SegmentTableHeader h;
  h.segment_size = w.segment_size.get();
  h.segment_count = w.segment_count.get();
  h.movie_size = w.movie_size.get();
  h.arena_length = w.arena_length.get();
  h.read_deadline_ms = w.read_deadline_ms.get();
  h.request_credits = w.request_credits.get();
  h.grace_ms = w.grace_ms.get();
  if (h.segment_size < kMinSegmentSize || h.segment_size > kMaxSegmentSize || !std::has_single_bit(h.segment_size))
    return fail(DecodeFault::bad_field, "segment table: segment size " + num(h.segment_size) + " is not a power of two in 64 KiB..1 GiB");
  const std::uint64_t count = (h.movie_size + h.segment_size - 1) / h.segment_size;
  if (count != h.segment_count)
    return fail(DecodeFault::inconsistent, "segment table: " + num(h.segment_count) + " segments, but a movie of " + num(h.movie_size) +
                                               " bytes in segments of " + num(h.segment_size) + " has " + num(count));
  if (h.arena_length < h.segment_size || h.arena_length % h.segment_size != 0 || h.arena_length / h.segment_size > kMaxSlot + 1ull)
    return fail(DecodeFault::inconsistent,
                "segment table: an arena of " + num(h.arena_length) + " bytes is not a whole number of slots (at most 2^24)");
  if (h.read_deadline_ms == 0) return fail(DecodeFault::bad_field, "segment table: read deadline 0");
  if (h.request_credits == 0) return fail(DecodeFault::bad_field, "segment table: 0 request credits would allow no request");
  if (region_length != segment_entry_offset(h.segment_count))
    return fail(DecodeFault::inconsistent, "segment table: region of " + num(region_length) + " bytes, but " + num(h.segment_count) +
                                               " entries need " + num(segment_entry_offset(h.segment_count)));
  return h;
}

Decoded<std::vector<SegmentEntry>> decode_segment_entries(Bytes buf, std::uint32_t count, std::uint32_t max_slot) {
  if (buf.size() < std::uint64_t{count} * kSegmentEntrySize)
    return fail(DecodeFault::truncated, "segment table: " + num(buf.size()) + " bytes hold fewer than " + num(count) + " entries");
  std::vector<SegmentEntry> out;
  out.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    auto e = unpack_segment_entry(load_wire<be64>(buf.data() + std::size_t{i} * kSegmentEntrySize).get());
    if (!e) return fail(e.error().fault, "segment " + num(i) + ": " + e.error().message);
    if (e->resident() && e->slot > max_slot)
      return fail(DecodeFault::inconsistent,
                  "segment " + num(i) + ": slot " + num(e->slot) + " is past the arena's last, " + num(max_slot));
    out.push_back(*e);
  }
  return out;
}

// ------------------------------------------------------------------ messages

const char* to_string(SegmentStatus s) noexcept {
  switch (s) {
    case SegmentStatus::ok: return "ok";
    case SegmentStatus::out_of_range: return "no such segment";
    case SegmentStatus::unknown_movie: return "not a cached movie of this connection's catalog";
    case SegmentStatus::disk_error: return "the server could not read it from disk";
    case SegmentStatus::refused: return "this connection may not read that movie";
    case SegmentStatus::busy:
      return "the server has no memory left to isolate this read (its --isolation-memory is used up); try again later";
    case SegmentStatus::origin_error: return "the server could not fetch it from its origin (the origin is down, slow or refusing)";
    case SegmentStatus::changed: return "the movie changed at the server's origin: this version is no longer served";
  }
  return "unknown status";
}

std::vector<std::uint8_t> encode(const SegmentRequest& r) {
  WireSegmentRequest w{};
  w.header = make_header(MessageType::segment_request, sizeof w);
  w.movie_index = r.movie_index;
  w.segment = r.segment;
  w.ahead = r.ahead;
  w.request_id = r.request_id;
  return to_bytes(w);
}

std::vector<std::uint8_t> encode(const SegmentNotify& n) {
  WireSegmentNotify w{};
  w.header = make_header(MessageType::segment_notify, sizeof w);
  w.movie_index = n.movie_index;
  w.segment = n.segment;
  w.entry = n.entry;
  w.rkey = n.rkey;
  w.status = static_cast<std::uint16_t>(n.status);
  w.request_id = n.request_id;
  return to_bytes(w);
}

Decoded<SegmentRequest> decode_segment_request(Bytes buf) {
  auto length = decode_header(buf, MessageType::segment_request, sizeof(WireSegmentRequest));
  if (!length) return length.error();
  const auto w = load_wire<WireSegmentRequest>(buf.data());
  SegmentRequest r;
  r.movie_index = w.movie_index.get();
  r.segment = w.segment.get();
  r.ahead = w.ahead.get();
  r.request_id = w.request_id.get();
  if (r.ahead > kMaxReadAhead)
    return fail(DecodeFault::bad_field,
                "segment request: read-ahead of " + num(r.ahead) + " segments (at most " + num(kMaxReadAhead) + ")");
  return r;
}

Decoded<SegmentNotify> decode_segment_notify(Bytes buf) {
  auto length = decode_header(buf, MessageType::segment_notify, sizeof(WireSegmentNotify));
  if (!length) return length.error();
  const auto w = load_wire<WireSegmentNotify>(buf.data());
  SegmentNotify n;
  n.movie_index = w.movie_index.get();
  n.segment = w.segment.get();
  n.entry = w.entry.get();
  n.rkey = w.rkey.get();
  n.request_id = w.request_id.get();
  const std::uint16_t status = w.status.get();
  if (status > kMaxSegmentStatus) return fail(DecodeFault::bad_field, "segment notification: undefined status " + num(status));
  n.status = static_cast<SegmentStatus>(status);
  if (n.status == SegmentStatus::ok) {
    auto e = unpack_segment_entry(n.entry);
    if (!e) return fail(e.error().fault, "segment notification: " + e.error().message);
    if (!e->resident()) return fail(DecodeFault::inconsistent, "segment notification: status ok for a segment that is not resident");
  } else if (n.entry != 0 || n.rkey != 0) {
    return fail(DecodeFault::inconsistent, "segment notification: status '" + std::string(to_string(n.status)) + "' with an entry or rkey");
  }
  return n;
}

}  // namespace vod::proto
