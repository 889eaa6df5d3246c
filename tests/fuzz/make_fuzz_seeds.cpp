// Writes one valid encoding of each message into DIR/<target>/, the seed corpus for the fuzzers:
// without it, libFuzzer would spend its bounded CI time finding the magic numbers.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "vod/protocol/catalog_layout.hpp"
#include "vod/protocol/keyframe_index_layout.hpp"
#include "vod/protocol/live_messages.hpp"
#include "vod/protocol/live_window.hpp"
#include "vod/protocol/name_hash.hpp"
#include "vod/protocol/private_data.hpp"
#include "vod/protocol/segment_table.hpp"
#include "vod/protocol/write_record.hpp"

namespace fs = std::filesystem;
using namespace vod::proto;

static void write(const fs::path& dir, const std::string& target, const std::string& name, const std::vector<std::uint8_t>& bytes) {
  fs::create_directories(dir / target);
  std::ofstream(dir / target / name, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_fuzz_seeds DIR\n");
    return 2;
  }
  const fs::path dir = argv[1];

  ConnectRequest movie{RequestKind::movie, SelectorType::name_hash, name_hash("movie.mp4"), 0, 0, AuthType::none, {}};
  write(dir, "connect_request", "movie", encode(movie));
  write(dir, "connect_request", "catalog", encode(ConnectRequest{}));

  AcceptData accept{2, 0, 16, 1u << 23, {4096, 1000, 7}, {8192, 64 + 320, 8}, {16384, 48, 9}, {}, 0};
  write(dir, "accept", "movie", encode(accept));
  AcceptData segmented = accept;
  segmented.movie = {4096, 8u << 20, 7};
  segmented.segments = {65536, 64 + 8, 10};
  segmented.movie_size = 1000;
  write(dir, "accept", "segmented", encode(segmented));
  write(dir, "segment_messages", "request", encode(SegmentRequest{1, 2, 3, 4}));
  write(dir, "segment_messages", "notify", encode(SegmentNotify{1, 2, pack({5, SegmentState::resident, 3}), 0x99, SegmentStatus::ok, 4}));
  {
    SegmentTableHeader h{1u << 20, 2, (1u << 20) + 10, 4u << 20, 1000, 8, 2000};
    auto table = encode_segment_table(h, {{3, SegmentState::resident, 1}, {0, SegmentState::absent, 0}});
    std::vector<std::uint8_t> input(8);
    const std::uint64_t length = table.size();
    std::memcpy(input.data(), &length, 8);
    input.insert(input.end(), table.begin(), table.end());
    write(dir, "segment_messages", "table", input);
  }
  write(dir, "reject", "unknown", encode(RejectData{RejectCode::unknown_movie, 1, 1, "no such movie"}));

  Catalog catalog;
  catalog.generation = 1;
  CatalogEntry e;
  e.name = "movie.mp4";
  e.size = 1000;
  e.movie = {4096, 1000, 7};
  e.index = {16384, 48, 9};
  e.flags = kEntryIsMedia | kEntryHasIndex;
  e.container = "mp4";
  e.mime_type = "video/mp4";
  e.content.kind = kContentSha256;  // the content identity at 352 (docs/protocol.md)
  e.content.digest.fill(0x5a);
  catalog.entries.push_back(e);
  write(dir, "catalog", "one", encode_catalog(catalog));
  CatalogEntry cached = e;
  cached.name = "cached.ts";
  cached.movie = {1u << 20, 8u << 20, 11};
  cached.segments = {65536, 64 + 8, 12};
  cached.flags |= kEntrySegmented;
  catalog.entries.push_back(cached);
  write(dir, "catalog", "segmented", encode_catalog(catalog));
  // Version 3: a name with folders in the entry, a long one in the names area.
  catalog.entries[0].name = "Films/Läder (2024)/Läder (2024) - 720p.mp4";
  catalog.entries[1].name = std::string("Series/").append(200, 's').append("/Season 01/").append(100, 'e').append(".ts");
  write(dir, "catalog", "paths", encode_catalog(catalog));
  // Version 4: a title of two renditions with an audio track and a sidecar's subtitles.
  CatalogEntry low = e;
  low.name = "Films/Läder (2024)/Läder (2024) - 360p.mp4";
  catalog.entries.push_back(low);
  Title title{"Films/Läder (2024)", {{0, "720p", 25, 1}, {2, "360p", 25, 1}}, {}};
  title.tracks.push_back({TrackKind::audio, true, "en", "aac", "English", 0, 1, 2, kAllRenditions});
  title.tracks.push_back({TrackKind::subtitles, false, "sv", "subrip", "", 1, kWholeFile, 0, 2});
  catalog.titles.push_back(title);
  write(dir, "catalog", "titles", encode_catalog(catalog));

  KeyframeIndex index{1000, kIndexDirectEntry, {{0, 0}, {2'000'000, 500}}};
  write(dir, "keyframe_index", "two", encode_index(index));

  LiveNotify notify;
  notify.stream_id = 1;
  notify.flags = kLiveKeyframe;
  notify.seq = 1;
  notify.length = 4096;
  notify.credits = 4;
  notify.keyframe_offset = 0;
  write(dir, "live_messages", "notify", encode(notify));
  std::vector<std::uint8_t> header_seed(8, 0);
  header_seed[2] = 0x10;  // ring size 1 MiB in the host's byte order on little-endian machines
  const auto header = encode(LiveHeader{8192, 0, 4096, 0, 1, 0, 6});
  header_seed.insert(header_seed.end(), header.begin(), header.end());
  write(dir, "live_messages", "header", header_seed);
  write(dir, "live_messages", "credit", encode(LiveCredit{4, 1}));
  WindowIndex window;
  window.header = {3, 0, 1000, 9000, 5000, 3, 65536, 4, 4, 60000, 1, 0};
  window.marks = {{1, 0, 1000, 0, 1, kWindowMarkKeyframe | kWindowMarkDiscontinuity},
                  {2, 4000, 3000, 90, 1, kWindowMarkKeyframe},
                  {3, 8000, 4500, 180, 1, kWindowMarkKeyframe}};
  write(dir, "live_window", "three-marks", encode(window));

  std::vector<std::uint8_t> data_seed(8, 0);
  data_seed[6] = 0x10;  // buffer length 4096 in the host's byte order on little-endian machines
  const std::vector<std::uint8_t> payload(64, 0x5a);
  WriteRecordData datagram_fields;
  datagram_fields.session_id = 1;
  datagram_fields.flags = kRecordLastDatagram;
  datagram_fields.epoch = 2;
  datagram_fields.record_length = 64;
  datagram_fields.buffer_offset = 128;
  datagram_fields.payload = payload;
  auto datagram = encode(datagram_fields);
  data_seed.insert(data_seed.end(), datagram.begin(), datagram.end());
  write(dir, "write_record", "data", data_seed);
  // Live multicast: one record in three datagrams, one of them twice, then an end of stream, each
  // framed as fuzz_live_multicast reads them ([2-byte length][clock step ms][datagram]).
  std::vector<std::uint8_t> live_seed;
  const std::vector<std::uint8_t> packets(3 * 376, 0x47);
  auto frame = [&live_seed](const std::vector<std::uint8_t>& d, std::uint8_t step) {
    live_seed.push_back(static_cast<std::uint8_t>(d.size() >> 8));
    live_seed.push_back(static_cast<std::uint8_t>(d.size()));
    live_seed.push_back(step);
    live_seed.insert(live_seed.end(), d.begin(), d.end());
  };
  for (int part : {0, 2, 1, 2}) {
    WriteRecordData live;
    live.session_id = 0x1234abcd;
    live.epoch = 1;
    live.record_seq = 5;
    live.record_length = packets.size();
    live.record_offset = static_cast<std::uint64_t>(part) * 376;
    live.buffer_offset = 1'000'000;
    live.flags =
        static_cast<std::uint16_t>(kRecordStreamOffset | kRecordKeyframe | kRecordUnitStart | (part == 2 ? kRecordLastDatagram : 0));
    live.payload = Bytes(packets.data() + live.record_offset, 376);
    frame(encode(live), 10);
  }
  WriteRecordData eos;
  eos.session_id = 0x1234abcd;
  eos.epoch = 1;
  eos.record_seq = 6;
  eos.buffer_offset = 1'000'000 + packets.size();
  eos.flags = kRecordStreamOffset | kRecordEndOfStream | kRecordLastDatagram;
  frame(encode(eos), 60);
  write(dir, "live_multicast", "record_and_eos", live_seed);
  auto stream_seed = std::vector<std::uint8_t>(8, 0);
  stream_seed[2] = 0x10;  // a 1 MiB ring
  const auto first = std::vector<std::uint8_t>(live_seed.begin() + 3, live_seed.begin() + 3 + (live_seed[0] << 8 | live_seed[1]));
  stream_seed.insert(stream_seed.end(), first.begin(), first.end());
  write(dir, "write_record", "live_data", stream_seed);

  WriteRecordRequest request;
  request.session_id = 1;
  request.epoch = 2;
  request.record_seq = 3;
  request.region = WriteRecordRegion::movie;
  request.selector = name_hash("movie.mp4");
  request.length = 4096;
  request.buffer_length = 1 << 20;
  request.max_payload = 1416;
  request.rate_bps = 100'000'000;
  write(dir, "write_record", "request", encode(request));
  write(dir, "write_record", "hello", encode(WriteRecordHello{42}));
  write(dir, "write_record", "cookie", encode(WriteRecordCookie{42, {}, 60, 1416}));
  write(dir, "write_record", "error", encode(WriteRecordError{1, 2, 3, RejectCode::bad_cookie, "say hello again"}));

  // MPEG-TS: a PAT, a PMT with H.264 video and AAC audio, and a video PES start with a PCR and the
  // random access indicator (what the live sources scan).
  std::vector<std::uint8_t> ts;
  auto packet = [&](std::uint16_t pid, std::vector<std::uint8_t> head, std::vector<std::uint8_t> payload) {
    std::vector<std::uint8_t> p{0x47, static_cast<std::uint8_t>(0x40 | (pid >> 8)), static_cast<std::uint8_t>(pid), 0x30};
    const std::size_t af = 184 - 1 - payload.size();
    p.push_back(static_cast<std::uint8_t>(af));
    head.resize(af, 0xff);
    p.insert(p.end(), head.begin(), head.end());
    p.insert(p.end(), payload.begin(), payload.end());
    ts.insert(ts.end(), p.begin(), p.end());
  };
  packet(0, {0}, {0, 0x00, 0xb0, 0x0d, 0, 1, 0xc1, 0, 0, 0, 1, 0xe0, 0x20, 0xde, 0xad, 0xbe, 0xef});
  packet(0x20, {0},
         {0, 0x02, 0xb0, 0x17, 0, 1, 0xc1, 0, 0, 0xe1, 0, 0xf0, 0, 0x1b, 0xe1, 0, 0xf0, 0, 0x0f, 0xe1, 1, 0xf0, 0, 0xde, 0xad, 0xbe, 0xef});
  packet(0x100, {0x50, 0, 0, 0, 0, 0x7e, 0}, {0, 0, 1, 0xe0, 0, 0, 0x80, 0x80, 5, 0x21, 0, 1, 0, 1, 0, 0, 0, 1, 0x65, 0x88});
  write(dir, "ts_scanner", "program", ts);
  write(dir, "hls_movie_bytes", "program", ts);  // the tables an EXT-X-MAP covers
  return 0;
}
