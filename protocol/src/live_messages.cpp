// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/protocol/live_messages.hpp"

#include "decode_support.hpp"

namespace vod::proto {

using detail::fail;
using detail::hex;
using detail::num;

std::vector<std::uint8_t> encode(const LiveNotify& n) {
  WireLiveNotify w{};
  w.header = make_header(MessageType::live_notify, sizeof w);
  w.stream_id = n.stream_id;
  w.flags = n.flags;
  w.seq = n.seq;
  w.stream_offset = n.stream_offset;
  w.length = n.length;
  w.credits = n.credits;
  w.oldest_offset = n.oldest_offset;
  w.keyframe_offset = n.keyframe_offset;
  w.pts_us = n.pts_us;
  w.publish_time_us = n.publish_time_us;
  return to_bytes(w);
}

std::vector<std::uint8_t> encode(const LiveCredit& c) {
  WireLiveCredit w{};
  w.header = make_header(MessageType::live_credit, sizeof w);
  w.credits = c.credits;
  w.acked_seq = c.acked_seq;
  return to_bytes(w);
}

Decoded<LiveNotify> decode_live_notify(Bytes buf) {
  auto length = decode_header(buf, MessageType::live_notify, sizeof(WireLiveNotify));
  if (!length) return length.error();
  const auto w = load_wire<WireLiveNotify>(buf.data());
  LiveNotify n;
  n.stream_id = w.stream_id.get();
  n.flags = w.flags.get();
  n.seq = w.seq.get();
  n.stream_offset = w.stream_offset.get();
  n.length = w.length.get();
  n.credits = w.credits.get();
  n.oldest_offset = w.oldest_offset.get();
  n.keyframe_offset = w.keyframe_offset.get();
  n.pts_us = w.pts_us.get();
  n.publish_time_us = w.publish_time_us.get();
  if (n.flags & ~kLiveKnownFlags)
    return fail(DecodeFault::bad_field, "live notification: undefined flags " + hex(n.flags & ~kLiveKnownFlags));
  if (n.length == 0 && !(n.flags & kLiveEndOfStream))
    return fail(DecodeFault::bad_field, "live notification: zero length without end-of-stream");
  const std::uint64_t end = n.stream_offset + n.length;
  if (end < n.stream_offset)
    return fail(DecodeFault::bad_field, "live notification: stream offset " + num(n.stream_offset) + " + length wraps");
  // A coalesced notification may start before the oldest byte (the client fell behind), but
  // nothing can be older than the newest byte.
  if (n.oldest_offset > end)
    return fail(DecodeFault::inconsistent,
                "live notification: oldest offset " + num(n.oldest_offset) + " is past the published end " + num(end));
  if (n.keyframe_offset != kNoKeyframe && (n.keyframe_offset > end || n.keyframe_offset < n.oldest_offset))
    return fail(DecodeFault::inconsistent, "live notification: keyframe offset " + num(n.keyframe_offset) + " is outside [" +
                                               num(n.oldest_offset) + ", " + num(end) + "]");
  if ((n.flags & kLiveKeyframe) && (n.keyframe_offset == kNoKeyframe || n.keyframe_offset < n.stream_offset))
    return fail(DecodeFault::inconsistent,
                "live notification: keyframe flag, but the newest keyframe " +
                    (n.keyframe_offset == kNoKeyframe ? std::string("is none") : "is at " + num(n.keyframe_offset)) +
                    ", before the range at " + num(n.stream_offset));
  return n;
}

Decoded<LiveCredit> decode_live_credit(Bytes buf) {
  auto length = decode_header(buf, MessageType::live_credit, sizeof(WireLiveCredit));
  if (!length) return length.error();
  const auto w = load_wire<WireLiveCredit>(buf.data());
  LiveCredit c{w.credits.get(), w.acked_seq.get()};
  if (c.credits == 0) return fail(DecodeFault::bad_field, "live credit: a credit message granting 0 credits");
  return c;
}

// ------------------------------------------------------------------ header region

std::vector<std::uint8_t> encode(const LiveHeader& h) {
  WireLiveHeader w{};
  w.magic = kLiveHeaderMagic;
  w.version = kLayoutVersion1;
  w.header_length = static_cast<std::uint16_t>(sizeof w);
  w.seq_end = h.sequence;
  w.write_offset = h.write_offset;
  w.oldest_offset = h.oldest_offset;
  w.keyframe_offset = h.keyframe_offset;
  w.keyframe_pts_us = h.keyframe_pts_us;
  w.stream_id = h.stream_id;
  w.flags = h.flags;
  w.seq_begin = h.sequence;
  return to_bytes(w);
}

Decoded<LiveHeader> decode_live_header(Bytes buf, std::uint64_t ring_size) {
  if (buf.size() < sizeof(WireLiveHeader))
    return fail(DecodeFault::truncated, "live header: " + num(buf.size()) + " bytes, fewer than the 64-byte header");
  const auto w = load_wire<WireLiveHeader>(buf.data());
  if (w.magic.get() != kLiveHeaderMagic)
    return fail(DecodeFault::bad_magic, "live header: magic " + hex(w.magic.get()) + " is not " + hex(kLiveHeaderMagic));
  if (w.version < kMinProtocolVersion || w.version > kProtocolVersion)
    return fail(DecodeFault::unsupported_version, "live header: layout version " + num(w.version) + " not supported");
  if (w.header_length.get() < sizeof(WireLiveHeader))
    return fail(DecodeFault::bad_length, "live header: header length " + num(w.header_length.get()) + " below 64");
  if (w.seq_begin.get() != w.seq_end.get())
    return fail(DecodeFault::inconsistent, "live header: torn snapshot (update " + num(w.seq_begin.get()) + " began, " +
                                               num(w.seq_end.get()) + " ended): read it again");
  LiveHeader h;
  h.sequence = w.seq_end.get();
  h.write_offset = w.write_offset.get();
  h.oldest_offset = w.oldest_offset.get();
  h.keyframe_offset = w.keyframe_offset.get();
  h.keyframe_pts_us = w.keyframe_pts_us.get();
  h.stream_id = w.stream_id.get();
  h.flags = w.flags.get();
  if (h.flags & ~kLiveHeaderKnownFlags) return fail(DecodeFault::bad_field, "live header: undefined flags " + hex(h.flags));
  if (ring_size == 0) return fail(DecodeFault::bad_field, "live header: a ring of 0 bytes");
  if (h.oldest_offset > h.write_offset || h.write_offset - h.oldest_offset > ring_size)
    return fail(DecodeFault::inconsistent, "live header: valid range [" + num(h.oldest_offset) + ", " + num(h.write_offset) +
                                               ") does not fit the " + num(ring_size) + "-byte ring");
  if (h.keyframe_offset != kNoKeyframe && (h.keyframe_offset < h.oldest_offset || h.keyframe_offset > h.write_offset))
    return fail(DecodeFault::inconsistent, "live header: keyframe offset " + num(h.keyframe_offset) + " is outside [" +
                                               num(h.oldest_offset) + ", " + num(h.write_offset) + "]");
  return h;
}

}  // namespace vod::proto
