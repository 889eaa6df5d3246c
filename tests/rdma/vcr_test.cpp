// SPDX-License-Identifier: LGPL-2.1-or-later
// Longer than 400 lines because: its 18 cases share one fixture (the connection to the test's
// server, pattern movies whose every byte is checked by its offset, the poll loops that pace them).
// VoD core, VCR control through libvodclient against a running vod-server (vod_vcr_test.sh starts
// it): pause posts no Reads, seeks deliver the bytes at the new offset, switches stay on the same
// connection, and completions from before a seek never reach the caller.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/resource.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "pattern.hpp"
#include "vod/client/movie_reader.hpp"
#include "vod/client/session.hpp"
#include "vod/protocol/name_hash.hpp"
#include "vod/protocol/private_data.hpp"
#include "vod/rdma/completion_hub.hpp"
#include "vod/rdma/connection.hpp"
#include "vod/rdma/connector.hpp"
#include "vod/rdma/post.hpp"

namespace vod::client {
namespace {

using test::first_mismatch;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  if (!v) throw std::runtime_error(std::string(name) + " is not set: run through vod_vcr_test.sh");
  return v;
}

Uri movie_uri(const std::string& name) {
  Uri u = parse_uri(env("VOD_TEST_URI"));
  u.movie = name;
  return u;
}

// Movies the script made: pattern-a.bin (seed 1) and pattern-b.bin (seed 2), plus a real MPEG-TS.
constexpr std::uint64_t kSizeA = 48ull * 1024 * 1024 + 5;
constexpr std::uint64_t kSizeB = 3ull * 1024 * 1024 + 7;

SessionOptions small_chunks() {
  SessionOptions o;
  o.engine.chunk_size = 64 * 1024;
  o.engine.readahead_bytes = 2u << 20;
  o.engine.read_depth = 16;
  return o;
}

std::size_t count_lines(const std::string& path, const std::string& needle) {
  std::ifstream in(path);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(needle) != std::string::npos;
  return n;
}

TEST(Vcr, PausePostsNoReads) {
  Session s(movie_uri("pattern-a.bin"), small_chunks());
  MovieReader r(s);
  std::vector<std::uint8_t> buf(256 * 1024);
  ASSERT_EQ(r.read(buf), buf.size());
  ASSERT_EQ(first_mismatch(buf.data(), buf.size(), 0, 1), -1);
  r.pause();
  // Let Reads already in flight land, then watch: an engine driven while paused posts nothing.
  for (int i = 0; i < 20; ++i) s.progress(std::chrono::milliseconds(10));
  const auto posted = s.stats().reads_posted;
  EXPECT_EQ(s.stats().in_flight, 0u);
  for (int i = 0; i < 50; ++i) s.progress(std::chrono::milliseconds(10));
  EXPECT_EQ(s.stats().reads_posted, posted) << "Reads were posted while paused";
  r.resume();
  ASSERT_EQ(r.read(buf), buf.size());
  EXPECT_EQ(first_mismatch(buf.data(), buf.size(), buf.size(), 1), -1);
  EXPECT_GT(s.stats().reads_posted, posted);
}

TEST(Vcr, SeekDeliversTheBytesAtTheNewOffset) {
  Session s(movie_uri("pattern-a.bin"), small_chunks());
  MovieReader r(s);
  std::mt19937_64 random(7);
  std::vector<std::uint8_t> buf(100'000);
  for (int i = 0; i < 30; ++i) {
    const std::uint64_t at = random() % kSizeA;
    r.seek(at);
    const std::size_t n = r.read(buf);
    ASSERT_EQ(n, std::min<std::uint64_t>(buf.size(), kSizeA - at));
    ASSERT_EQ(first_mismatch(buf.data(), n, at, 1), -1) << "after seek to " << at;
    ASSERT_EQ(r.position(), at + n);
  }
  r.seek(kSizeA);  // the end is a valid position: reads return 0
  EXPECT_EQ(r.read(buf), 0u);
  try {
    r.seek(kSizeA + 1);
    FAIL() << "seek past the end succeeded";
  } catch (const ClientError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::out_of_range);
    EXPECT_NE(std::string(e.what()).find("past the end of 'pattern-a.bin'"), std::string::npos) << e.what();
  }
}

TEST(Vcr, CompletionsFromBeforeASeekNeverSurface) {
  SessionOptions o = small_chunks();
  o.engine.readahead_bytes = 4u << 20;  // plenty of Reads in flight at every seek
  Session s(movie_uri("pattern-a.bin"), o);
  MovieReader r(s);
  std::mt19937_64 random(11);
  std::vector<std::uint8_t> buf(10'000);
  for (int i = 0; i < 60; ++i) {
    const std::uint64_t at = random() % (kSizeA - buf.size());
    r.seek(at);
    ASSERT_EQ(r.read(buf), buf.size());
    ASSERT_EQ(first_mismatch(buf.data(), buf.size(), at, 1), -1) << "iteration " << i << ", offset " << at;
  }
  // The seeks really did overtake Reads in flight, and those were discarded.
  EXPECT_GT(s.stats().stale_discarded, 0u);
  std::printf("stale completions discarded: %llu of %llu Reads\n", static_cast<unsigned long long>(s.stats().stale_discarded),
              static_cast<unsigned long long>(s.stats().reads_posted));
}

TEST(Vcr, SwitchStaysOnTheSameConnection) {
  const std::string log = env("VOD_TEST_SERVER_LOG");
  Session s(movie_uri("pattern-a.bin"), small_chunks());
  MovieReader r(s);
  std::vector<std::uint8_t> buf(300'000);
  ASSERT_EQ(r.read(buf), buf.size());
  const std::size_t connects = count_lines(log, "connect from");
  r.switch_movie("pattern-b.bin");
  EXPECT_EQ(s.movie()->name, "pattern-b.bin");
  EXPECT_EQ(r.position(), 0u);
  std::uint64_t at = 0;
  for (std::size_t n; (n = r.read(buf)) > 0; at += n) ASSERT_EQ(first_mismatch(buf.data(), n, at, 2), -1) << "at " << at;
  EXPECT_EQ(at, kSizeB);
  r.switch_movie("pattern-a.bin");
  r.seek(kSizeA - 1000);
  ASSERT_EQ(r.read(buf), 1000u);
  EXPECT_EQ(first_mismatch(buf.data(), 1000, kSizeA - 1000, 1), -1);
  EXPECT_EQ(count_lines(log, "connect from"), connects) << "a switch sent something to the server";
  EXPECT_EQ(s.stats().reconnects, 0u);
  try {
    r.switch_movie("nope.bin");
    FAIL() << "switch to an unknown movie succeeded";
  } catch (const ClientError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unknown_movie);
    EXPECT_NE(std::string(e.what()).find("pattern-a.bin, pattern-b.bin"), std::string::npos) << e.what();
  }
}

TEST(Vcr, TimeSeekUsesTheKeyframeIndex) {
  const std::string ts = env("VOD_TEST_MEDIA_DIR") + "/test-480p-60s.ts";
  std::ifstream file(ts, std::ios::binary);
  const std::string original((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  Session s(movie_uri("test-480p-60s.ts"), small_chunks());
  ASSERT_EQ(s.movie()->size, original.size());
  ASSERT_GE(s.index().entries.size(), 25u);
  EXPECT_EQ(s.index().flags, proto::kIndexDirectEntry);
  MovieReader r(s);
  for (std::uint64_t t : {0ull, 1'500'000ull, 30'000'000ull, 59'000'000ull}) {
    const std::uint64_t at = r.seek_time(t);
    const proto::Keyframe* k = s.index().at_or_before(t);
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(at, k->offset);
    EXPECT_LE(k->time_us, std::max<std::uint64_t>(t, s.index().entries.front().time_us));
    std::vector<std::uint8_t> buf(188 * 100);
    const std::size_t n = r.read(buf);
    ASSERT_GT(n, 0u);
    EXPECT_EQ(std::string(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n)), original.substr(at, n)) << "t = " << t;
    EXPECT_EQ(buf[0], 0x47) << "an MPEG-TS entry point starts with a sync byte";
  }
  EXPECT_THROW(r.seek_time(61'000'000), ClientError);
}

// Startup: the accept describes the movie, so its first bytes (a small head Read) go out alone as
// soon as the connection is up, and the open returns without waiting for anything else: the
// catalog and the keyframe index are submitted behind the head, read once it has landed, and
// waited for only by the calls that need them (movie(), catalog(), index()).
TEST(Startup, TheFirstBytesGoOutAloneWithTheCatalogAndTheIndexBehindThem) {
  const std::string ts = env("VOD_TEST_MEDIA_DIR") + "/test-480p-60s.ts";
  std::ifstream file(ts, std::ios::binary);
  const std::string original((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  Session s(movie_uri("test-480p-60s.ts"), small_chunks());
  EXPECT_TRUE(s.engine().has_block(Region::movie, 0)) << "the first chunk was not posted during the open";
  EXPECT_EQ(s.stats().reads_posted, 1u) << "the open posts the movie's head, alone";
  EXPECT_EQ(s.stats().head_reads, 1u);
  EXPECT_EQ(s.engine().pending(), 2u) << "the catalog and the index wait behind the head";
  EXPECT_FALSE(s.index_ready()) << "the open waited for the keyframe index";
  EXPECT_EQ(s.size(), original.size()) << "the size comes from the accept";
  std::vector<std::uint8_t> buf(s.engine().chunk_size());
  ASSERT_EQ(s.pread(0, buf), buf.size());
  EXPECT_EQ(std::string(buf.begin(), buf.end()), original.substr(0, buf.size()));
  ASSERT_NE(s.movie(), nullptr) << "the catalog is read when asked for";
  EXPECT_EQ(s.movie()->name, "test-480p-60s.ts");
  EXPECT_EQ(s.movie()->size, original.size());
  EXPECT_GT(s.movie()->bitrate_bps, 0u);
  EXPECT_NE(s.catalog().find("pattern-a.bin"), nullptr);
  ASSERT_FALSE(s.index().entries.empty()) << "the index is read when asked for";
  EXPECT_TRUE(s.index_ready());
  EXPECT_EQ(s.index().flags, proto::kIndexDirectEntry);
  EXPECT_GT(s.startup().connect.count(), 0);
  EXPECT_GT(s.startup().describe.count(), 0);
}

// An open registers its ring while the connect request is on the wire (ConnectOptions::
// while_connecting): the hook runs once, with the PD and QP made and before the server's answer
// has been taken, and memory it registered is where a Read lands, byte-exact. A hook that throws
// fails that connect alone; the next one works.
TEST(Startup, MemoryRegisteredWhileConnectingTakesReads) {
  rdma::CompletionHub hub;
  rdma::ConnectOptions o;
  const Uri uri = movie_uri("pattern-a.bin");
  o.host = uri.host;
  o.port = static_cast<std::uint16_t>(uri.port);
  o.private_data =
      proto::encode(proto::ConnectRequest{proto::RequestKind::movie, proto::SelectorType::name_hash, proto::name_hash("pattern-a.bin")});
  o.wanted_read_depth = 1;
  o.send_queue_depth = 4;
  o.hub = &hub;
  o.while_connecting = [](rdma::ClientEndpoint&) { throw std::runtime_error("refused by the hook"); };
  EXPECT_THROW(rdma::connect(o), std::runtime_error);

  std::vector<std::uint8_t> sink(64 * 1024, 0);
  ibv_mr* mr = nullptr;
  int calls = 0;
  o.while_connecting = [&](rdma::ClientEndpoint& ep) {
    ++calls;
    EXPECT_NE(ep.pd.get(), nullptr);
    EXPECT_NE(ep.qp.get(), nullptr);
    EXPECT_TRUE(ep.accept_data.empty()) << "the hook ran after the answer was taken";
    ep.memory.push_back(rdma::register_memory(ep.pd.get(), sink.data(), sink.size(), rdma::read_sink_access(ep.limits), "the test sink"));
    mr = ep.memory.back().get();
  };
  auto ep = rdma::connect(o);
  ASSERT_EQ(calls, 1);
  ASSERT_NE(mr, nullptr);
  auto accept = proto::decode_accept(ep->accept_data);
  ASSERT_TRUE(accept);
  bool landed = false;
  const std::uint32_t owner = hub.add_owner([&](const ibv_wc& wc, rdma::WorkId) {
    landed = true;
    EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  });
  const std::uint64_t at = 1'000'000;
  ASSERT_EQ(rdma::post_read(ep->qp.get(), rdma::WorkId{owner, 0, 0}.pack(), sink.data(), static_cast<std::uint32_t>(sink.size()), mr->lkey,
                            accept->movie.addr + at, accept->movie.rkey),
            0);
  for (int i = 0; i < 5000 && !landed; ++i) {
    if (hub.poll() > 0) break;
    hub.arm();
    if (hub.poll() > 0) break;
    std::vector<pollfd> fds;
    for (int fd : hub.fds()) fds.push_back({fd, POLLIN, 0});
    ASSERT_GT(::poll(fds.data(), fds.size(), 1000), 0) << "the Read did not complete";
    hub.consume();
  }
  ASSERT_TRUE(landed);
  EXPECT_EQ(first_mismatch(sink.data(), sink.size(), at, 1), -1);
  hub.remove_owner(owner);
}

// Asking for the movie's entry straight after the open waits for the catalog (it went out behind
// the head), and then the first bytes are there without waiting.
TEST(Startup, TheCatalogIsWaitedForOnlyWhenAsked) {
  const std::string ts = env("VOD_TEST_MEDIA_DIR") + "/test-480p-60s.ts";
  std::ifstream file(ts, std::ios::binary);
  const std::string original((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  Session s(movie_uri("test-480p-60s.ts"), small_chunks());
  ASSERT_NE(s.movie(), nullptr);
  EXPECT_EQ(s.movie()->size, original.size());
  EXPECT_GE(s.stats().reads_completed, 2u) << "the head and the catalog";
  const auto stalls = s.stats().stalls;
  std::vector<std::uint8_t> head(16 * 1024);
  ASSERT_EQ(s.pread(0, head), head.size());
  EXPECT_EQ(s.stats().stalls, stalls) << "the head had landed before the catalog was posted: no wait";
  EXPECT_EQ(std::string(head.begin(), head.end()), original.substr(0, head.size()));
}

// A time seek straight after the open waits for the index, then lands on a keyframe: the bytes
// there are the file's.
TEST(Startup, ATimeSeekBeforeTheIndexLandedWaitsForIt) {
  const std::string ts = env("VOD_TEST_MEDIA_DIR") + "/test-480p-60s.ts";
  std::ifstream file(ts, std::ios::binary);
  const std::string original((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  Session s(movie_uri("test-480p-60s.ts"), small_chunks());
  MovieReader r(s);
  ASSERT_FALSE(s.index_ready());
  const std::uint64_t at = r.seek_time(30'000'000);
  ASSERT_TRUE(s.index_ready());
  ASSERT_GT(at, 0u);
  std::vector<std::uint8_t> buf(4096);
  ASSERT_EQ(r.read(buf), buf.size());
  EXPECT_EQ(std::string(buf.begin(), buf.end()), original.substr(at, buf.size()));
}

// Ramp-up: after a seek the first Read is a small head (16 KiB) that goes out alone; the first bytes
// come from it, the rest of the chunk from the Reads posted once the reader took them, all
// byte-exact; reading on sequentially posts no more heads until the next seek.
TEST(RampUp, ASeekStartsWithOneSmallReadThenWholeChunks) {
  SessionOptions o = small_chunks();
  o.engine.first_read_bytes = 16 * 1024;
  Session s(movie_uri("pattern-a.bin"), o);
  MovieReader r(s);
  const std::uint64_t chunk = s.engine().chunk_size();
  for (std::uint64_t at : {std::uint64_t{20} * chunk + 12345, std::uint64_t{300} * chunk, kSizeA - 3 * chunk - 77}) {
    r.seek(at);
    const std::uint64_t heads = s.stats().head_reads;
    std::vector<std::uint8_t> first(4096);
    ASSERT_EQ(r.read(first), first.size());
    EXPECT_EQ(first_mismatch(first.data(), first.size(), at, 1), -1) << "at " << at;
    EXPECT_EQ(s.stats().head_reads, heads + 1) << "one small first Read after the seek to " << at;
    std::vector<std::uint8_t> rest(2 * chunk);
    ASSERT_EQ(r.read(rest), rest.size());
    EXPECT_EQ(first_mismatch(rest.data(), rest.size(), at + first.size(), 1), -1) << "after " << at;
    EXPECT_EQ(s.stats().head_reads, heads + 1) << "reading on needs whole chunks only";
  }
}

TEST(RampUp, OffMeansWholeChunksOnly) {
  SessionOptions o = small_chunks();
  o.engine.first_read_bytes = 0;
  Session s(movie_uri("pattern-b.bin"), o);
  MovieReader r(s);
  r.seek(1000000);
  std::vector<std::uint8_t> buf(100000);
  ASSERT_EQ(r.read(buf), buf.size());
  EXPECT_EQ(first_mismatch(buf.data(), buf.size(), 1000000, 2), -1);
  EXPECT_EQ(s.stats().head_reads, 0u);
}

// Sessions on one completion queue (a shared CompletionHub, as vod-client bench and vod-proxy use):
// reads of different movies interleave on it and each lands in its own session, byte-exact.
TEST(SharedCq, TwoSessionsOnOneHubReadTheirOwnMovies) {
  SessionOptions o = small_chunks();
  o.hub = std::make_shared<rdma::CompletionHub>();
  Session a(movie_uri("pattern-a.bin"), o), b(movie_uri("pattern-b.bin"), o);
  ASSERT_EQ(a.hub(), b.hub());
  std::vector<std::uint8_t> ba(1 << 20), bb(1 << 20);
  bool done_a = false, done_b = false;
  a.pread_async(5'000'000, ba, [&](std::size_t n) { done_a = n == ba.size(); });
  b.pread_async(1'000'000, bb, [&](std::size_t n) { done_b = n == bb.size(); });
  for (int i = 0; i < 600 && !(done_a && done_b); ++i) {
    a.progress(std::chrono::milliseconds(10));
    b.progress(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(done_a && done_b);
  EXPECT_EQ(first_mismatch(ba.data(), ba.size(), 5'000'000, 1), -1);
  EXPECT_EQ(first_mismatch(bb.data(), bb.size(), 1'000'000, 2), -1);
}

// Scale: a thousand sessions in one process on one shared CQ (one completion channel, one fd to
// sleep on), each reading its own part of the movie; every one gets its bytes exactly.
TEST(Scale, AThousandSessionsOnOneHub) {
  const char* wanted = std::getenv("VOD_TEST_SCALE_SESSIONS");
  const unsigned n = wanted ? static_cast<unsigned>(std::atoi(wanted)) : 1000;
  rlimit files{};  // each connection has its rdma_cm event channel
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &files), 0);
  files.rlim_cur = files.rlim_max;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &files), 0);
  ASSERT_GE(files.rlim_cur, n + 64) << "the open-file limit is too low for " << n << " connections";
  SessionOptions o;
  o.engine.chunk_size = 8 * 1024;
  o.engine.readahead_bytes = 0;
  o.engine.read_depth = 1;
  o.hub = std::make_shared<rdma::CompletionHub>();
  struct Viewer {
    std::unique_ptr<Session> session;
    std::uint64_t at = 0;
    std::vector<std::uint8_t> buf;
    bool done = false;
  };
  std::vector<Viewer> viewers(n);
  for (unsigned i = 0; i < n; ++i) {
    viewers[i].session = std::make_unique<Session>(movie_uri("pattern-a.bin"), o);
    viewers[i].at = (kSizeA - 5000) / n * i + i % 4096;
    viewers[i].buf.resize(5000);
    if (i % 100 == 99) std::printf("%u sessions open\n", i + 1);
  }
  ASSERT_EQ(o.hub->fds().size(), 1u) << "one completion channel for every connection";
  for (auto& v : viewers) {
    Viewer* vp = &v;
    v.session->pread_async(v.at, v.buf, [vp](std::size_t got) { vp->done = got == vp->buf.size(); });
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::any_of(viewers.begin(), viewers.end(), [](const Viewer& v) { return !v.done; })) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "not every session was served";
    o.hub->arm();
    for (auto& v : viewers) v.session->progress(std::chrono::milliseconds(0));
    pollfd p{o.hub->fds().front(), POLLIN, 0};
    if (poll(&p, 1, 10) > 0) o.hub->consume();
  }
  for (unsigned i = 0; i < n; ++i)
    ASSERT_EQ(first_mismatch(viewers[i].buf.data(), viewers[i].buf.size(), viewers[i].at, 1), -1)
        << "session " << i << " at " << viewers[i].at;
}

TEST(RandomAccess, ManyAsynchronousPreadsAtOnce) {
  Session s(movie_uri("pattern-a.bin"), small_chunks());
  std::mt19937_64 random(3);
  struct Job {
    std::uint64_t at;
    std::vector<std::uint8_t> buf;
    std::size_t got = 0;
    bool done = false;
  };
  std::vector<Job> jobs(64);
  for (auto& j : jobs) {
    j.at = random() % kSizeA;
    j.buf.resize(1 + random() % 300'000);
    Job* jp = &j;
    s.pread_async(j.at, j.buf, [jp](std::size_t n) {
      jp->got = n;
      jp->done = true;
    });
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::any_of(jobs.begin(), jobs.end(), [](const Job& j) { return !j.done; })) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    s.progress(std::chrono::milliseconds(100));
  }
  for (const auto& j : jobs) {
    ASSERT_EQ(j.got, std::min<std::uint64_t>(j.buf.size(), kSizeA - j.at));
    ASSERT_EQ(first_mismatch(j.buf.data(), j.got, j.at, 1), -1) << "pread at " << j.at;
  }
  EXPECT_LE(s.stats().in_flight, s.read_depth());
  std::printf("%s\n", s.stats().summary().c_str());
}

TEST(Catalog, ListsEveryMovieWithDescriptors) {
  Uri u = parse_uri(env("VOD_TEST_URI"));
  Session s(u, small_chunks());
  EXPECT_EQ(s.movie(), nullptr);
  const auto& c = s.catalog();
  ASSERT_EQ(c.entries.size(), 3u);
  EXPECT_EQ(c.find("pattern-a.bin")->size, kSizeA);
  EXPECT_EQ(c.find("pattern-b.bin")->size, kSizeB);
  const auto* ts = c.find("test-480p-60s.ts");
  ASSERT_NE(ts, nullptr);
  EXPECT_EQ(ts->container, "mpegts");
  EXPECT_EQ(ts->mime_type, "video/mp2t");
  EXPECT_EQ(ts->video_codec, "h264");
  EXPECT_NEAR(static_cast<double>(ts->duration_us), 60e6, 0.1e6);
  EXPECT_TRUE(ts->flags & proto::kEntryHasIndex);
}

}  // namespace
}  // namespace vod::client

namespace vod::rdma {
namespace {

// The non-blocking connect (issue 30), driven by this test's own poll of its fd: it connects, takes
// the accept, and no step ever waits (a step longer than 50 ms would mean a hidden blocking call;
// a TCG guest is slow, the waits it replaced were seconds).
ConnectOptions connector_options(const std::string& movie, std::uint16_t port_override = 0) {
  const char* text = std::getenv("VOD_TEST_URI");
  if (!text) throw std::runtime_error("VOD_TEST_URI is not set: run through vod_vcr_test.sh");
  const client::Uri uri = client::parse_uri(text);
  ConnectOptions o;
  o.host = uri.host;
  o.port = port_override ? port_override : static_cast<std::uint16_t>(uri.port);
  o.private_data = proto::encode(proto::ConnectRequest{proto::RequestKind::movie, proto::SelectorType::name_hash, proto::name_hash(movie)});
  o.wanted_read_depth = 4;
  o.send_queue_depth = 8;
  return o;
}

// Drives `c` until it is established or failed (or `limit` passes); returns the longest step().
std::chrono::microseconds drive(Connector& c, std::chrono::milliseconds limit) {
  std::chrono::microseconds longest{0};
  const auto end = Connector::Clock::now() + limit;
  while (Connector::Clock::now() < end) {
    const auto t0 = Connector::Clock::now();
    const auto s = c.step();
    longest = std::max(longest, std::chrono::duration_cast<std::chrono::microseconds>(Connector::Clock::now() - t0));
    if (s == ConnectState::established || s == ConnectState::failed) break;
    pollfd p{c.fd(), POLLIN, 0};
    ::poll(&p, 1, 10);  // the test's own loop ticks every 10 ms whatever the server does
  }
  return longest;
}

TEST(Connector, DrivenByItsFdItConnectsAndNoStepWaits) {
  if (std::getenv("VOD_TEST_SERVER_STOPPED")) GTEST_SKIP() << "the server is stopped for ConnectorStopped.*";
  CompletionHub hub;
  ConnectOptions o = connector_options("pattern-a.bin");
  o.hub = &hub;
  Connector c(o);
  EXPECT_EQ(c.state(), ConnectState::resolving_address);
  const auto longest = drive(c, std::chrono::milliseconds(20000));
  ASSERT_EQ(c.state(), ConnectState::established);
  // Generous, as in ConnectorStopped below (which proves that no step waits: there a waiting step
  // would take the whole timeout): a step that does not wait took up to 52 ms in a loaded TCG guest.
  EXPECT_LT(longest, std::chrono::milliseconds(500)) << "a step() waited";
  auto ep = c.take();
  ASSERT_NE(ep, nullptr);
  const auto accept = proto::decode_accept(ep->accept_data);
  ASSERT_TRUE(accept) << accept.error().message;
  EXPECT_GT(accept->movie.length, 0u);
  EXPECT_EQ(c.take(), nullptr) << "taken once";
}

TEST(Connector, NobodyListeningFailsAsRefused) {
  if (std::getenv("VOD_TEST_SERVER_STOPPED")) GTEST_SKIP() << "the server is stopped for ConnectorStopped.*";
  CompletionHub hub;
  ConnectOptions o = connector_options("pattern-a.bin", 9);  // the discard port: no rdma_cm listener
  o.hub = &hub;
  Connector c(o);
  drive(c, std::chrono::milliseconds(20000));
  ASSERT_EQ(c.state(), ConnectState::failed);
  try {
    c.rethrow();
    ADD_FAILURE() << "rethrow returned";
  } catch (const ConnectRejected& e) {
    EXPECT_TRUE(e.no_listener()) << e.what();
  }
}

// vod_vcr_test.sh runs this with the server SIGSTOPped: the connect request is never answered.
TEST(ConnectorStopped, AHungServerNeverHoldsTheLoopAndTheStepTimesOut) {
  if (!std::getenv("VOD_TEST_SERVER_STOPPED")) GTEST_SKIP() << "needs the server stopped (vod_vcr_test.sh)";
  CompletionHub hub;
  ConnectOptions o = connector_options("pattern-a.bin");
  o.hub = &hub;
  o.timeout = std::chrono::milliseconds(1500);
  const auto start = Connector::Clock::now();
  Connector c(o);
  const auto longest = drive(c, std::chrono::milliseconds(20000));
  const auto took = Connector::Clock::now() - start;
  ASSERT_EQ(c.state(), ConnectState::failed);
  // A step that waited on the hung server would take the whole 1500 ms timeout; under TCG beside
  // the other tests a step that does not wait has taken 52 ms (once), so the bound is 500 ms.
  EXPECT_LT(longest, std::chrono::milliseconds(500)) << "a step() waited on the hung server";
  EXPECT_GE(took, std::chrono::milliseconds(1500));
  EXPECT_LT(took, std::chrono::milliseconds(8000));
  try {
    c.rethrow();
  } catch (const ConnectFailed& e) {
    EXPECT_NE(std::string(e.what()).find("no answer within 1500 ms"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vod::rdma
