// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/protocol/live_window.hpp"

#include <cstring>

#include "decode_support.hpp"
#include "vod/protocol/catalog_layout.hpp"

namespace vod::proto {

using detail::fail;
using detail::hex;
using detail::num;

std::vector<std::uint8_t> encode(const WindowIndex& w) {
  const auto& h = w.header;
  std::vector<std::uint8_t> out(window_region_length(h.keyframe_capacity));
  WireWindowHeader wh{};
  wh.magic = kWindowMagic;
  wh.version = kWindowVersion;
  wh.header_length = static_cast<std::uint16_t>(sizeof wh);
  wh.seq_end = h.sequence;
  wh.oldest_offset = h.oldest_offset;
  wh.oldest_time_us = h.oldest_time_us;
  wh.end_offset = h.end_offset;
  wh.end_time_us = h.end_time_us;
  wh.keyframes_next = h.keyframes_next;
  wh.segment_size = h.segment_size;
  wh.segment_count = h.segment_count;
  wh.keyframe_capacity = h.keyframe_capacity;
  wh.duration_ms = h.duration_ms;
  wh.stream_id = h.stream_id;
  wh.flags = h.flags;
  wh.seq_begin = h.sequence;
  std::memcpy(out.data(), &wh, sizeof wh);
  for (const auto& m : w.marks) {
    if (h.keyframe_capacity == 0 || m.number == 0) continue;
    WireWindowMark wm{};
    wm.number_begin = m.number;
    wm.offset = m.offset;
    wm.publish_time_us = m.publish_time_us;
    wm.pts_us = m.pts_us;
    wm.stream_id = m.stream_id;
    wm.flags = m.flags;
    wm.number_end = m.number;
    std::memcpy(out.data() + window_mark_offset(m.number - 1, h.keyframe_capacity), &wm, sizeof wm);
  }
  return out;
}

Decoded<WindowHeader> decode_window_header(Bytes region) {
  if (region.size() < sizeof(WireWindowHeader))
    return fail(DecodeFault::truncated, "window index: " + num(region.size()) + " bytes, fewer than the 128-byte header");
  const auto w = load_wire<WireWindowHeader>(region.data());
  if (w.magic.get() != kWindowMagic)
    return fail(DecodeFault::bad_magic, "window index: magic " + hex(w.magic.get()) + " is not " + hex(kWindowMagic));
  if (w.version != kWindowVersion)
    return fail(DecodeFault::unsupported_version, "window index: version " + num(w.version) + " not supported");
  if (w.header_length.get() != sizeof(WireWindowHeader))
    return fail(DecodeFault::bad_length, "window index: header length " + num(w.header_length.get()) + ", not 128");
  if (w.seq_begin.get() != w.seq_end.get())
    return fail(DecodeFault::inconsistent, "window index: torn snapshot (update " + num(w.seq_begin.get()) + " began, " +
                                               num(w.seq_end.get()) + " ended): read it again");
  WindowHeader h;
  h.sequence = w.seq_end.get();
  h.oldest_offset = w.oldest_offset.get();
  h.oldest_time_us = w.oldest_time_us.get();
  h.end_offset = w.end_offset.get();
  h.end_time_us = w.end_time_us.get();
  h.keyframes_next = w.keyframes_next.get();
  h.segment_size = w.segment_size.get();
  h.segment_count = w.segment_count.get();
  h.keyframe_capacity = w.keyframe_capacity.get();
  h.duration_ms = w.duration_ms.get();
  h.stream_id = w.stream_id.get();
  h.flags = w.flags.get();
  if (h.flags & ~kWindowEndOfStream) return fail(DecodeFault::bad_field, "window index: undefined flags " + hex(h.flags));
  if (h.segment_size < 4096 || (h.segment_size & (h.segment_size - 1)) != 0)
    return fail(DecodeFault::bad_field, "window index: segment size " + num(h.segment_size) + " is not a power of two of 4 KiB or more");
  if (h.segment_count < 2) return fail(DecodeFault::bad_field, "window index: " + num(h.segment_count) + " chunks, fewer than 2");
  if (h.keyframe_capacity == 0 || h.keyframe_capacity > kWindowMaxCapacity)
    return fail(DecodeFault::bad_field, "window index: keyframe capacity " + num(h.keyframe_capacity) + " is outside 1..2^20");
  if (h.oldest_offset > h.end_offset || h.end_offset - h.oldest_offset > h.bytes())
    return fail(DecodeFault::inconsistent, "window index: range [" + num(h.oldest_offset) + ", " + num(h.end_offset) +
                                               ") does not fit its " + num(h.bytes()) + " bytes");
  return h;
}

std::optional<WindowMark> decode_window_mark(Bytes slot, std::uint64_t k) {
  if (slot.size() < sizeof(WireWindowMark)) return std::nullopt;
  const auto m = load_wire<WireWindowMark>(slot.data());
  if (m.number_begin.get() != k + 1 || m.number_end.get() != k + 1) return std::nullopt;
  return WindowMark{k + 1, m.offset.get(), m.publish_time_us.get(), m.pts_us.get(), m.stream_id.get(), m.flags.get()};
}

Decoded<WindowIndex> decode_window(Bytes region) {
  auto header = decode_window_header(region);
  if (!header) return fail(header.error().fault, header.error().message);
  WindowIndex out;
  out.header = *header;
  const auto& h = out.header;
  if (region.size() < window_region_length(h.keyframe_capacity))
    return fail(DecodeFault::truncated,
                "window index: " + num(region.size()) + " bytes hold fewer than its " + num(h.keyframe_capacity) + " marks");
  const std::uint64_t next = h.keyframes_next;
  const std::uint64_t first = next > h.keyframe_capacity ? next - h.keyframe_capacity : 0;
  for (std::uint64_t k = first; k < next; ++k) {
    const auto slot = region.subspan(window_mark_offset(k, h.keyframe_capacity), sizeof(WireWindowMark));
    const auto decoded = decode_window_mark(slot, k);
    if (!decoded) continue;  // being rewritten
    const WindowMark& mark = *decoded;
    if (mark.offset < h.oldest_offset || mark.offset >= h.end_offset) continue;
    if (!out.marks.empty() && (mark.offset <= out.marks.back().offset || mark.publish_time_us < out.marks.back().publish_time_us))
      return fail(DecodeFault::inconsistent, "window index: mark " + num(k) + " is not after the one before it");
    out.marks.push_back(mark);
  }
  return out;
}

std::string window_entry_name(std::string_view channel) { return std::string(kWindowPrefix) + std::string(channel); }

std::optional<std::string> window_channel(std::string_view entry_name) {
  if (!entry_name.starts_with(kWindowPrefix) || entry_name.size() == kWindowPrefix.size()) return std::nullopt;
  const std::string_view channel = entry_name.substr(kWindowPrefix.size());
  if (invalid_channel_name_reason(channel)) return std::nullopt;
  return std::string(channel);
}

std::optional<WindowMark> keyframe_at_or_before(const WindowIndex& w, std::uint64_t time_us) {
  std::optional<WindowMark> best;
  for (const auto& m : w.marks) {
    if (!(m.flags & kWindowMarkKeyframe)) continue;
    if (!best || m.publish_time_us <= time_us) best = m;
    if (m.publish_time_us > time_us) break;
  }
  return best;
}

}  // namespace vod::proto
