#include "vod/protocol/keyframe_index_layout.hpp"

#include <algorithm>
#include <stdexcept>

#include "decode_support.hpp"
#include "vod/protocol/crc32c.hpp"

namespace vod::proto {

using detail::fail;
using detail::hex;
using detail::num;

const Keyframe* KeyframeIndex::at_or_before(std::uint64_t time_us) const noexcept {
  if (entries.empty()) return nullptr;
  auto it = std::upper_bound(entries.begin(), entries.end(), time_us, [](std::uint64_t t, const Keyframe& k) { return t < k.time_us; });
  return it == entries.begin() ? &entries.front() : &*std::prev(it);
}

std::vector<std::uint8_t> encode_index(const KeyframeIndex& index, std::uint8_t version) {
  if (index.flags & ~kIndexKnownFlags) throw std::invalid_argument("keyframe index: undefined flags");
  if ((index.flags & kIndexPending) && (version < kSegmentsVersion || !index.entries.empty()))
    throw std::invalid_argument("keyframe index: a pending index is version 2 and has no entries");
  std::vector<std::uint8_t> out(sizeof(WireIndexHeader) + index.entries.size() * sizeof(WireIndexEntry));
  WireIndexHeader h{};
  h.magic = kIndexMagic;
  h.version = version;
  h.header_length = static_cast<std::uint16_t>(sizeof h);
  h.entry_count = static_cast<std::uint32_t>(index.entries.size());
  h.entry_size = static_cast<std::uint16_t>(sizeof(WireIndexEntry));
  h.flags = index.flags;
  h.movie_size = index.movie_size;
  store_wire(out.data(), h);
  std::size_t at = sizeof h;
  std::uint64_t previous = 0;
  for (const Keyframe& k : index.entries) {
    if (k.time_us < previous) throw std::invalid_argument("keyframe index: entries out of time order");
    if (k.offset >= index.movie_size) throw std::invalid_argument("keyframe index: offset past the end of the movie");
    previous = k.time_us;
    WireIndexEntry w;
    w.time_us = k.time_us;
    w.offset = k.offset;
    store_wire(out.data() + at, w);
    at += sizeof w;
  }
  if (version >= kSegmentsVersion) {
    h.entries_crc32c = crc32c(0, std::span<const std::uint8_t>(out).subspan(sizeof h));
    store_wire(out.data(), h);
  }
  return out;
}

Decoded<KeyframeIndex> decode_index(Bytes buf) {
  if (buf.size() < sizeof(WireIndexHeader))
    return fail(DecodeFault::truncated, "keyframe index: " + num(buf.size()) + " bytes, fewer than the 32-byte header");
  const auto h = load_wire<WireIndexHeader>(buf.data());
  if (h.magic.get() != kIndexMagic)
    return fail(DecodeFault::bad_magic, "keyframe index: magic " + hex(h.magic.get()) + " is not " + hex(kIndexMagic));
  if (h.version < kMinProtocolVersion || h.version > kProtocolVersion)
    return fail(DecodeFault::unsupported_version, "keyframe index: layout version " + num(h.version) + " not supported");
  const std::uint64_t header_length = h.header_length.get();
  const std::uint64_t entry_size = h.entry_size.get();
  const std::uint64_t count = h.entry_count.get();
  if (header_length < sizeof(WireIndexHeader))
    return fail(DecodeFault::bad_length, "keyframe index: header length " + num(header_length) + " below 32");
  if (entry_size < sizeof(WireIndexEntry))
    return fail(DecodeFault::bad_length, "keyframe index: entry size " + num(entry_size) + " below 16");
  if (header_length + count * entry_size > buf.size())
    return fail(DecodeFault::truncated, "keyframe index: " + num(count) + " entries of " + num(entry_size) + " bytes do not fit the " +
                                            num(buf.size()) + " bytes read");
  KeyframeIndex index;
  index.movie_size = h.movie_size.get();
  index.flags = h.flags.get();
  if (index.flags & ~kIndexKnownFlags)
    return fail(DecodeFault::bad_field, "keyframe index: undefined flags " + hex(index.flags & ~kIndexKnownFlags));
  if ((index.flags & kIndexPending) && (h.version < kSegmentsVersion || count != 0))
    return fail(DecodeFault::inconsistent, "keyframe index: the pending flag needs version 2 and no entries");
  if (h.version >= kSegmentsVersion && entry_size == sizeof(WireIndexEntry) &&
      crc32c(0, buf.subspan(header_length, count * entry_size)) != h.entries_crc32c.get())
    return fail(DecodeFault::inconsistent,
                "keyframe index: torn: its entries do not match their CRC32C (read while it was filled in): read it again");
  index.entries.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto w = load_wire<WireIndexEntry>(buf.data() + header_length + i * entry_size);
    Keyframe k{w.time_us.get(), w.offset.get()};
    if (k.offset >= index.movie_size)
      return fail(DecodeFault::inconsistent, "keyframe index: entry " + num(i) + " offset " + num(k.offset) + " is not inside the " +
                                                 num(index.movie_size) + "-byte movie");
    if (!index.entries.empty() && k.time_us < index.entries.back().time_us)
      return fail(DecodeFault::inconsistent,
                  "keyframe index: entry " + num(i) + " time " + num(k.time_us) + " us precedes the previous entry's");
    index.entries.push_back(k);
  }
  return index;
}

}  // namespace vod::proto
