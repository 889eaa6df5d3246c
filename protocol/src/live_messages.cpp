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
  w.pts_us = n.pts_us;
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
  LiveNotify n{w.stream_id.get(), w.flags.get(),   w.seq.get(),           w.stream_offset.get(),
               w.length.get(),    w.credits.get(), w.oldest_offset.get(), w.pts_us.get()};
  if (n.flags & ~kLiveKnownFlags)
    return fail(DecodeFault::bad_field, "live notification: undefined flags " + hex(n.flags & ~kLiveKnownFlags));
  if (n.length == 0 && !(n.flags & kLiveEndOfStream))
    return fail(DecodeFault::bad_field, "live notification: zero length without end-of-stream");
  if (n.stream_offset + n.length < n.stream_offset)
    return fail(DecodeFault::bad_field, "live notification: stream offset " + num(n.stream_offset) + " + length wraps");
  if (n.oldest_offset > n.stream_offset)
    return fail(DecodeFault::inconsistent, "live notification: oldest offset " + num(n.oldest_offset) +
                                               " is after the published offset " + num(n.stream_offset));
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

}  // namespace vod::proto
