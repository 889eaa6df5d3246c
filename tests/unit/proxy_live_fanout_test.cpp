// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-proxy's live fan-out without sockets: LiveChunker (whole TS packets, cut before every
// keyframe, its PAT/PMT first) on hand-built packets fed in pieces of every size, and LiveBacklog
// (bounded; new viewers start at the newest keyframe; a viewer that fell out jumps to it, and the
// jump is a discontinuity with the bytes skipped; a slow viewer never holds the others back).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "live_backlog.hpp"
#include "live_chunker.hpp"
#include "ts_packets.hpp"

namespace vod::proxy {
namespace {

using test::packet;
using test::pat;
using test::pes;
using test::pmt;
using Bytes = std::vector<std::uint8_t>;
constexpr std::uint64_t P = media::kTsPacketSize;

// Video: H.264 on PID 0x100 (an IDR slice with the random access indicator, or a non-IDR slice);
// audio on 0x101.
test::Packet key(std::uint64_t pts) { return packet(0x100, true, pes(pts, {0, 0, 0, 1, 0x65, 0x88}), true); }
test::Packet delta(std::uint64_t pts) { return packet(0x100, true, pes(pts, {0, 0, 0, 1, 0x41, 0x9a})); }
test::Packet more() { return packet(0x100, false, Bytes(184, 0x5a)); }
test::Packet audio(std::uint64_t pts) { return packet(0x101, true, pes(pts, {0xff, 0xf1})); }

// A stream described by letters: A PAT, M PMT, K keyframe, D delta frame, c continuation, a audio.
Bytes stream(const std::string& letters) {
  Bytes out;
  std::uint64_t pts = 0;
  for (char c : letters) {
    test::Packet p{};
    switch (c) {
      case 'A': p = pat(); break;
      case 'M': p = pmt(0x1b); break;
      case 'K': p = key(pts += 3600); break;
      case 'D': p = delta(pts += 3600); break;
      case 'c': p = more(); break;
      case 'a': p = audio(pts); break;
      default: ADD_FAILURE() << "no packet '" << c << "'";
    }
    out.insert(out.end(), p.begin(), p.end());
  }
  return out;
}

struct Fed {
  std::vector<FanoutChunkPtr> chunks;
  Bytes bytes;                       // the chunks' bytes in order
  std::vector<std::uint64_t> joins;  // offsets of the join-point chunks
};

// Feeds `input` in pieces of `piece` bytes (0: all at once); discontinuity before piece `disc_at`.
Fed feed(LiveChunker& chunker, const Bytes& input, std::size_t piece, Fed fed = {}) {
  const std::size_t step = piece ? piece : input.size();
  for (std::size_t at = 0; at < input.size(); at += step) {
    const std::size_t n = std::min(step, input.size() - at);
    for (auto& c : chunker.feed(std::span<const std::uint8_t>(input.data() + at, n), false)) fed.chunks.push_back(c);
  }
  for (const auto& c : fed.chunks) {
    if (c->join_point && (fed.joins.empty() || fed.joins.back() != c->offset)) fed.joins.push_back(c->offset);
  }
  fed.bytes.clear();
  for (const auto& c : fed.chunks) fed.bytes.insert(fed.bytes.end(), c->bytes.begin(), c->bytes.end());
  return fed;
}

void expect_whole_contiguous(const Fed& fed) {
  std::uint64_t next = 0;
  for (const auto& c : fed.chunks) {
    EXPECT_EQ(c->offset, next) << "chunks are contiguous";
    EXPECT_FALSE(c->bytes.empty());
    EXPECT_EQ(c->bytes.size() % P, 0u) << "a chunk at " << c->offset << " is not whole packets";
    for (std::size_t i = 0; i < c->bytes.size(); i += P)
      EXPECT_EQ(c->bytes[i], media::kTsSyncByte) << "packet boundary at " << c->offset + i;
    next = c->end();
  }
}

TEST(LiveChunker, CutsBeforeEveryKeyframeAtItsPatWhateverThePieces) {
  // The server's records: PAT and PMT copies in front of every keyframe. Then a lone PAT before a
  // delta frame (a muxer's periodic PAT), which is not a join point.
  const Bytes input = stream(
      "AMKccDccDcAMKccDcAMDcc"
      "AMKcc");
  struct Row {
    std::size_t piece;
  };
  for (const Row row : {Row{0}, Row{1}, Row{100}, Row{P}, Row{P + 1}, Row{1000}, Row{4096}}) {
    LiveChunker chunker;
    const Fed fed = feed(chunker, input, row.piece);
    SCOPED_TRACE("pieces of " + std::to_string(row.piece));
    expect_whole_contiguous(fed);
    EXPECT_EQ(fed.joins, (std::vector<std::uint64_t>{0, 10 * P, 22 * P})) << "at the PATs before K, not the one before D";
    // Everything but the held tail was published, byte for byte.
    ASSERT_LE(fed.bytes.size(), input.size());
    EXPECT_TRUE(std::equal(fed.bytes.begin(), fed.bytes.end(), input.begin()));
    EXPECT_EQ(chunker.published() + chunker.held(), input.size());
    EXPECT_EQ(chunker.stats().keyframes, 3u);
  }
}

TEST(LiveChunker, HoldsAPartialPacketAndAPatRunUntilItKnows) {
  LiveChunker chunker;
  const Bytes input = stream("AMKccDcAM");
  // Everything up to the PAT of the last run goes out; the run waits to see what follows it.
  Fed fed = feed(chunker, input, 0);
  EXPECT_EQ(chunker.published(), 7 * P);
  EXPECT_EQ(chunker.held(), 2 * P);
  // Half of the next packet: still held.
  const Bytes next = stream("KccD");
  auto out = chunker.feed(std::span<const std::uint8_t>(next.data(), 100), false);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(chunker.held(), 2 * P + 100);
  // The keyframe completes: its chunk begins with the held PAT.
  out = chunker.feed(std::span<const std::uint8_t>(next.data() + 100, next.size() - 100), false);
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out.front()->offset, 7 * P);
  EXPECT_TRUE(out.front()->join_point);
  EXPECT_EQ(out.front()->bytes[0], media::kTsSyncByte);
}

TEST(LiveChunker, APatRunTooLongToHoldIsPublishedAndTheKeyframeItselfIsTheJoinPoint) {
  // PAT, PMT, then more audio than may be held before the keyframe.
  const std::string audio_run(LiveChunker::kMaxHeldBytes / P + 2, 'a');
  const Bytes input = stream(
      "AMKc"
      "AM" +
      audio_run + "Kcc");
  for (std::size_t piece : {std::size_t{0}, std::size_t{P}, std::size_t{777}}) {
    LiveChunker chunker;
    const Fed fed = feed(chunker, input, piece);
    SCOPED_TRACE("pieces of " + std::to_string(piece));
    expect_whole_contiguous(fed);
    const std::uint64_t keyframe = (6 + audio_run.size()) * P;
    ASSERT_EQ(fed.joins.size(), 2u);
    EXPECT_EQ(fed.joins[0], 0u);
    if (piece == 0) {
      EXPECT_EQ(fed.joins[1], 4 * P) << "seen at once, the whole run is in front of the keyframe";
    } else {
      EXPECT_EQ(fed.joins[1], keyframe) << "the run went out before the keyframe came: start at the keyframe";
    }
  }
}

TEST(LiveChunker, ADiscontinuityDropsThePartialPacketAndStartsAJoinPoint) {
  LiveChunker chunker;
  const Bytes first = stream("AMKccDc");
  auto out = chunker.feed(std::span<const std::uint8_t>(first.data(), first.size() - 50), false);  // the last packet cut short
  std::uint64_t published = chunker.published();
  EXPECT_EQ(published, 6 * P);
  // A new stream (a reconnect, a skip, a source restart) starts mid-GOP, without PAT: a join point
  // anyway, since the server starts every stream at a keyframe record.
  const Bytes second = stream("DccKc");
  out = chunker.feed(second, true);
  EXPECT_EQ(chunker.stats().dropped_partial, P - 50);
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out.front()->offset, published) << "the proxy's numbering has no gap for the dropped bytes";
  EXPECT_TRUE(out.front()->join_point);
  std::uint64_t total = 0;
  for (const auto& c : out) total += c->bytes.size();
  EXPECT_EQ(total, second.size()) << "no PAT was seen in the new stream, so nothing is held";
  // The scanner learnt the program again: without PAT/PMT the later keyframe is not recognised.
  for (const auto& c : out) {
    if (c->offset != published) {
      EXPECT_FALSE(c->join_point);
    }
  }
}

TEST(LiveChunker, BytesWithoutTheSyncByteAreCountedAndNeverAJoinPoint) {
  LiveChunker chunker;
  Bytes input = stream("AMKcc");
  input.insert(input.end(), P, 0x00);  // garbage the size of a packet
  const Bytes tail = stream("AMKc");
  input.insert(input.end(), tail.begin(), tail.end());
  const Fed fed = feed(chunker, input, 0);
  EXPECT_EQ(chunker.stats().unsynced_packets, 1u);
  EXPECT_EQ(fed.joins, (std::vector<std::uint64_t>{0, 6 * P}));
}

// ---------------------------------------------------------------- LiveBacklog

FanoutChunkPtr chunk(std::uint64_t offset, std::size_t size, bool join) {
  auto c = std::make_shared<FanoutChunk>();
  c->offset = offset;
  c->bytes.assign(size, static_cast<std::uint8_t>(offset));
  c->join_point = join;
  return c;
}

// A backlog holding chunks of `size` bytes from offset 0, join points where `joins` says 'K'.
LiveBacklog backlog_of(std::size_t capacity, const std::string& joins, std::size_t size = 100) {
  LiveBacklog b(capacity);
  for (std::size_t i = 0; i < joins.size(); ++i) b.append(chunk(i * size, size, joins[i] == 'K'));
  return b;
}

TEST(LiveBacklog, KeepsTheNewestChunksWithinItsCapacity) {
  struct Row {
    std::size_t capacity;
    std::string chunks;
    std::uint64_t begin, end;
  };
  for (const Row& r : {Row{1000, "K...", 0, 400}, Row{300, "K...K..", 400, 700}, Row{250, "K..", 100, 300}, Row{50, "K.K", 200, 300}}) {
    const LiveBacklog b = backlog_of(r.capacity, r.chunks);
    EXPECT_EQ(b.begin(), r.begin) << r.capacity << " " << r.chunks;
    EXPECT_EQ(b.end(), r.end) << r.capacity << " " << r.chunks;
    EXPECT_LE(b.bytes(), std::max<std::size_t>(r.capacity, 100)) << "the newest chunk stays even when it alone is over";
  }
}

TEST(LiveBacklog, ViewersStartAtTheNewestJoinPointAndJumpThereWhenTheyFallOut) {
  struct Row {
    const char* what;
    std::string chunks;  // '.' a chunk, 'K' a join point; 100 bytes each, capacity 500
    bool started;
    std::uint64_t position;
    std::uint64_t sent;  // the chunk the viewer gets (UINT64_MAX: none yet)
    bool discontinuity;
    std::uint64_t skipped;
  };
  constexpr std::uint64_t none = UINT64_MAX;
  const std::vector<Row> rows = {
      {"new viewer: the newest keyframe", "K..K..", false, 0, 300, false, 0},
      {"new viewer: a keyframe that was dropped is not offered", "K...K....", false, 0, 400, false, 0},
      {"new viewer, no keyframe held: the oldest chunk", "K.......", false, 0, 300, false, 0},
      {"new viewer of an empty channel: wait", "", false, 0, none, false, 0},
      {"in step: the next chunk", "K..K..", true, 400, 400, false, 0},
      {"at the live edge: wait", "K..K..", true, 600, none, false, 0},
      {"the oldest chunk held: still in", "K...K....", true, 400, 400, false, 0},
      {"fell out: jump to the newest keyframe", "K...K...K.", true, 300, 800, true, 500},
      {"fell out, no keyframe held: the oldest chunk", "K.........", true, 200, 500, true, 300},
  };
  for (const Row& r : rows) {
    const LiveBacklog b = backlog_of(500, r.chunks);
    ViewerCursor v{r.started, r.position};
    const BacklogStep step = b.next(v);
    SCOPED_TRACE(r.what);
    if (r.sent == none) {
      EXPECT_EQ(step.chunk, nullptr);
      EXPECT_EQ(v.position, r.position) << "a viewer that waits stays where it is";
      continue;
    }
    ASSERT_NE(step.chunk, nullptr);
    EXPECT_EQ(step.chunk->offset, r.sent);
    EXPECT_EQ(v.position, r.sent + 100);
    EXPECT_TRUE(v.started);
    EXPECT_EQ(step.discontinuity, r.discontinuity);
    EXPECT_EQ(step.skipped_bytes, r.skipped);
  }
}

TEST(LiveBacklog, ASlowViewerNeverHoldsBackTheChannelOrAFastViewer) {
  LiveBacklog b(1000);
  ViewerCursor fast, slow;
  std::uint64_t fast_bytes = 0, slow_bytes = 0, skipped = 0, jumps = 0;
  FanoutChunkPtr slow_first;  // the first chunk the slow viewer wrote: it holds it past the backlog
  for (std::uint64_t i = 0; i < 200; ++i) {
    b.append(chunk(i * 100, 100, i % 10 == 0));  // a keyframe every 10 chunks
    EXPECT_LE(b.bytes(), 1000u) << "the backlog never grows for a slow viewer";
    // The fast viewer takes everything there is.
    while (auto step = b.next(fast).chunk) fast_bytes += step->bytes.size();
    // The slow viewer takes one chunk every 7 appends.
    if (i % 7 == 0) {
      const BacklogStep step = b.next(slow);
      if (step.chunk) {
        slow_bytes += step.chunk->bytes.size();
        if (step.discontinuity) {
          ++jumps;
          skipped += step.skipped_bytes;
          EXPECT_TRUE(step.chunk->join_point) << "a jump lands on a keyframe";
        }
        if (!slow_first) slow_first = step.chunk;
      }
    }
  }
  EXPECT_EQ(fast_bytes, 200u * 100) << "the fast viewer got every byte";
  EXPECT_GT(jumps, 0u);
  EXPECT_EQ(slow_bytes + skipped + (b.end() - slow.position), fast_bytes)
      << "what the slow viewer sent, skipped and has still to send accounts for every byte";
  ASSERT_NE(slow_first, nullptr);
  EXPECT_GT(b.begin(), slow_first->end()) << "the backlog dropped it long ago";
  EXPECT_EQ(slow_first->bytes, Bytes(100, 0)) << "a chunk a viewer holds stays intact after the backlog dropped it";
}

TEST(LiveBacklog, ChunksFromTheChunkerFanOutByteExact) {
  // The whole path without sockets: chunker -> backlog -> two viewers, one joining late.
  const Bytes input = stream("AMKccDccAMKccDccAMKcc");
  LiveChunker chunker;
  LiveBacklog backlog(1 << 20);
  ViewerCursor early, late;
  Bytes got_early, got_late;
  for (std::size_t at = 0; at < input.size(); at += 300) {
    const std::size_t n = std::min<std::size_t>(300, input.size() - at);
    for (auto& c : chunker.feed(std::span<const std::uint8_t>(input.data() + at, n), false)) backlog.append(c);
    while (auto c = backlog.next(early).chunk) got_early.insert(got_early.end(), c->bytes.begin(), c->bytes.end());
    if (at >= 12 * P)
      while (auto c = backlog.next(late).chunk) got_late.insert(got_late.end(), c->bytes.begin(), c->bytes.end());
  }
  ASSERT_GE(got_early.size(), 8 * P);
  EXPECT_TRUE(std::equal(got_early.begin(), got_early.end(), input.begin()));
  // The late viewer's first byte is the PAT in front of the newest keyframe it could see.
  ASSERT_FALSE(got_late.empty());
  const std::uint64_t late_start = input.size() - got_late.size() - chunker.held();
  EXPECT_TRUE(late_start == 8 * P || late_start == 16 * P) << late_start;
  EXPECT_TRUE(std::equal(got_late.begin(), got_late.end(), input.begin() + static_cast<std::ptrdiff_t>(late_start)));
}

}  // namespace
}  // namespace vod::proxy
