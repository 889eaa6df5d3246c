// SPDX-License-Identifier: LGPL-2.1-or-later
// libvodclient against a vod-server that binds a memory window per connection (vod_auth_test.sh
// starts it with --auth-secret and passes VOD_TEST_WINDOWED_URI with a token for 'premium-*'): the
// catalog lists no rkeys, so a switch makes a connection of its own for the other movie, and the
// caller sees the same MovieReader go on byte-exact. A movie outside the token's scope is refused
// as unauthorized, and the current movie stays readable.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "pattern.hpp"
#include "vod/client/movie_reader.hpp"
#include "vod/client/session.hpp"

namespace vod::client {
namespace {

using test::first_mismatch;

// The script's movies: premium-a.bin (seed 1), premium-b.bin (seed 2), free.bin (seed 3).
constexpr std::uint64_t kSizeA = 300000, kSizeB = 200000;

Uri windowed_uri(const std::string& name) {
  const char* text = std::getenv("VOD_TEST_WINDOWED_URI");
  if (!text) throw std::runtime_error("VOD_TEST_WINDOWED_URI is not set: run through vod_auth_test.sh");
  Uri u = parse_uri(text);
  u.movie = name;
  return u;
}

void expect_whole_movie(MovieReader& r, std::uint64_t size, std::uint64_t seed) {
  std::vector<std::uint8_t> buf(64 * 1024);
  std::uint64_t at = 0;
  for (std::size_t n; (n = r.read(buf)) > 0; at += n) ASSERT_EQ(first_mismatch(buf.data(), n, at, seed), -1) << "at " << at;
  EXPECT_EQ(at, size);
}

TEST(Windows, CatalogListsNoRkeys) {
  Session s(windowed_uri("premium-a.bin"));
  ASSERT_FALSE(s.catalog().entries.empty());
  for (const auto& e : s.catalog().entries) {
    EXPECT_TRUE(e.flags & proto::kEntryWindowed) << e.name;
    EXPECT_EQ(e.movie.rkey, 0u) << e.name;
    EXPECT_EQ(e.index.rkey, 0u) << e.name;
  }
  EXPECT_NE(s.accept().movie.rkey, 0u);
  EXPECT_TRUE(s.movie()->movie.same_bytes(s.catalog().find("premium-a.bin")->movie));
}

TEST(Windows, SwitchConnectsForTheOtherMovieUnnoticed) {
  Session s(windowed_uri("premium-a.bin"));
  MovieReader r(s);
  const std::uint32_t first_rkey = s.accept().movie.rkey;
  expect_whole_movie(r, kSizeA, 1);
  r.switch_movie("premium-b.bin");
  EXPECT_EQ(s.movie()->name, "premium-b.bin");
  EXPECT_EQ(r.position(), 0u);
  EXPECT_NE(s.accept().movie.rkey, first_rkey) << "the switch did not get a window of its own";
  expect_whole_movie(r, kSizeB, 2);
  r.switch_movie("premium-a.bin");
  r.seek(kSizeA - 1000);
  std::vector<std::uint8_t> buf(4096);
  ASSERT_EQ(r.read(buf), 1000u);
  EXPECT_EQ(first_mismatch(buf.data(), 1000, kSizeA - 1000, 1), -1);
  EXPECT_EQ(s.stats().reconnects, 0u) << "a switch is not a reconnect";
}

TEST(Windows, SwitchOutsideTheTokenIsRefusedAndTheMovieStays) {
  Session s(windowed_uri("premium-b.bin"));
  MovieReader r(s);
  try {
    r.switch_movie("free.bin");
    FAIL() << "a switch outside the token's scope succeeded";
  } catch (const ClientError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unauthorized) << e.what();
    EXPECT_NE(std::string(e.what()).find("out of scope"), std::string::npos) << e.what();
  }
  EXPECT_EQ(s.movie()->name, "premium-b.bin");
  r.seek(0);
  expect_whole_movie(r, kSizeB, 2);
}

}  // namespace
}  // namespace vod::client
