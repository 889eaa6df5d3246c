// SPDX-License-Identifier: LGPL-2.1-or-later
// How a viewer keeps a DVR window's index (WindowReader::update, no I/O: the region is encode()'s
// bytes): the first update takes the marks the window holds, later ones read only the slots
// published since (counted in bytes), across the ring's wrap; marks the oldest edge passed are
// dropped; a mark published after the header was read waits for the next update; another window
// (a new capacity) is read afresh; marks out of order are a protocol error.
#include <gtest/gtest.h>

#include "vod/client/window_reader.hpp"

namespace vod::client {
namespace {

constexpr std::uint32_t kCapacity = 8;

// A window whose marks k = first..next-1 sit at offset 1000 × k and time 10 s × k; the header's
// range is [oldest, end).
proto::WindowIndex window(std::uint64_t first, std::uint64_t next, std::uint64_t oldest, std::uint64_t end,
                          std::uint32_t capacity = kCapacity) {
  proto::WindowIndex w;
  auto& h = w.header;
  h.segment_size = 4096;
  h.segment_count = 4;
  h.keyframe_capacity = capacity;
  h.keyframes_next = next;
  h.oldest_offset = oldest;
  h.end_offset = end;
  h.end_time_us = end * 10'000;
  for (std::uint64_t k = first; k < next; ++k) w.marks.push_back({k + 1, 1000 * k, 10'000'000 * k, 0, 1, proto::kWindowMarkKeyframe});
  return w;
}

// A viewer's reader and the region it reads: sees(w) publishes w's bytes, counts the bytes and Reads
// of marks the update asks for (from zero), and updates.
struct Viewer {
  WindowReader reader{"cam"};
  std::vector<std::uint8_t> bytes;
  std::uint64_t read = 0, reads = 0;

  const proto::WindowIndex& sees(const proto::WindowHeader& header, std::vector<std::uint8_t> region) {
    bytes = std::move(region);
    read = reads = 0;
    return reader.update(header, [this](std::uint64_t offset, std::size_t n) {
      read += n;
      ++reads;
      return std::vector<std::uint8_t>(bytes.begin() + static_cast<std::ptrdiff_t>(offset),
                                       bytes.begin() + static_cast<std::ptrdiff_t>(offset + n));
    });
  }
  const proto::WindowIndex& sees(const proto::WindowIndex& w) { return sees(w.header, proto::encode(w)); }
};

using Offsets = std::vector<std::uint64_t>;
Offsets offsets(const proto::WindowIndex& w) {
  Offsets out;
  for (const auto& m : w.marks) out.push_back(m.offset);
  return out;
}

TEST(WindowReader, ReadsOnlyTheMarksPublishedSince) {
  Viewer v;
  EXPECT_EQ(offsets(v.sees(window(0, 3, 0, 2500))), (Offsets{0, 1000, 2000}));  // marks 0..2, all in the window
  EXPECT_EQ(v.read, 3 * sizeof(proto::WireWindowMark));
  EXPECT_EQ(offsets(v.sees(window(0, 6, 0, 5500))), (Offsets{0, 1000, 2000, 3000, 4000, 5000}));  // three more
  EXPECT_EQ(v.read, 3 * sizeof(proto::WireWindowMark)) << "only the new slots";
  EXPECT_EQ(v.reads, 1u);
  v.sees(window(0, 6, 0, 5500));
  EXPECT_EQ(v.read, 0u) << "nothing new, nothing read";
}

TEST(WindowReader, AcrossTheRingsWrapDroppingWhatTheOldestEdgePassed) {
  Viewer v;
  v.sees(window(0, 6, 0, 5500));
  // Marks 6..10: slots 6, 7, then 0, 1, 2 after the wrap; the oldest edge passed marks 0..2.
  EXPECT_EQ(offsets(v.sees(window(3, 11, 3000, 10'500))), (Offsets{3000, 4000, 5000, 6000, 7000, 8000, 9000, 10'000}));
  EXPECT_EQ(v.read, 5 * sizeof(proto::WireWindowMark));
  EXPECT_EQ(v.reads, 2u) << "one Read to the ring's end, one after the wrap";
}

TEST(WindowReader, AReaderFarBehindTakesWhatTheRingStillHolds) {
  Viewer v;
  v.sees(window(0, 2, 0, 1500));
  const auto& got = v.sees(window(12, 20, 12'000, 19'500));  // the ring went round more than once since
  EXPECT_EQ(got.marks.size(), 8u);
  EXPECT_EQ(got.marks.front().offset, 12'000u);
}

TEST(WindowReader, AMarkPastTheHeadersEndWaitsForTheNextUpdate) {
  Viewer v;
  // Mark 3 (offset 3000) was published after this header was read.
  EXPECT_EQ(offsets(v.sees(window(0, 4, 0, 2500))), (Offsets{0, 1000, 2000}));
  EXPECT_EQ(offsets(v.sees(window(0, 4, 0, 3500))), (Offsets{0, 1000, 2000, 3000}));
}

TEST(WindowReader, ARewrittenSlotIsSkipped) {
  Viewer v;
  const auto w = window(0, 4, 0, 3500);
  auto region = proto::encode(w);
  region[proto::window_mark_offset(1, kCapacity)] ^= 0xff;  // mark 1's number_end: being rewritten
  EXPECT_EQ(offsets(v.sees(w.header, region)), (Offsets{0, 2000, 3000}));
}

TEST(WindowReader, AnotherWindowIsReadAfreshAndMarksOutOfOrderAreAnError) {
  Viewer v;
  v.sees(window(0, 4, 0, 3500));
  EXPECT_EQ(offsets(v.sees(window(0, 2, 0, 1500, 16))), (Offsets{0, 1000}));  // a restarted server's window, of another capacity

  Viewer fresh;
  auto w = window(0, 3, 0, 5000);
  w.marks[2].offset = 500;  // before the mark before it
  try {
    fresh.sees(w);
    ADD_FAILURE() << "marks out of order were accepted";
  } catch (const ClientError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::protocol_error);
    EXPECT_NE(std::string(e.what()).find("not after the one before it"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vod::client
