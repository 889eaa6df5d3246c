// SPDX-License-Identifier: LGPL-2.1-or-later
// Access tokens: the 32-byte layout, the text form, minting and every reason a token is refused,
// the keys file, and admission with authorization on (no NIC needed).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "admission.hpp"
#include "auth/token_authority.hpp"
#include "vod/client/uri.hpp"
#include "vod/protocol/name_hash.hpp"

namespace vod::server::auth {
namespace {

using proto::TokenScope;

TokenAuthority authority() {
  std::map<std::uint8_t, std::vector<std::uint8_t>> keys;
  keys[1] = std::vector<std::uint8_t>(32, 0x11);
  keys[7] = std::vector<std::uint8_t>(40, 0x77);
  return TokenAuthority(std::move(keys));
}

proto::CatalogEntry entry(const std::string& name, bool live = false) {
  proto::CatalogEntry e;
  e.name = name;
  e.flags = proto::kEntryIsMedia | (live ? proto::kEntryLive : 0);
  return e;
}

proto::ConnectRequest with(const proto::AccessToken& t) {
  proto::ConnectRequest r;
  r.auth_type = proto::AuthType::token_v1;
  r.auth_token = proto::encode(t);
  return r;
}

const proto::TokenAddress kClient = *parse_address("192.0.2.10");
const proto::TokenAddress kOther = *parse_address("192.0.2.11");
constexpr std::uint64_t kNow = 1'800'000'000;

TEST(AccessToken, LayoutAndTextRoundTrip) {
  const auto a = authority();
  const proto::AccessToken t = a.mint(7, TokenScope::movie, "a.mp4", kNow + 60, kClient);
  const auto bytes = proto::encode(t);
  EXPECT_EQ(bytes[0], proto::kTokenVersion);
  EXPECT_EQ(bytes[1], 7);
  const auto back = proto::decode_access_token(bytes);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, t);
  EXPECT_EQ(back->scope_hash, proto::name_hash("a.mp4"));
  EXPECT_EQ(back->address_hint, proto::address_hint(kClient));
  const std::string text = proto::token_text(bytes);
  EXPECT_EQ(text.size(), 64u);
  EXPECT_EQ(proto::parse_token_text(text), bytes);
  EXPECT_FALSE(proto::parse_token_text(text.substr(1)));
  EXPECT_FALSE(proto::parse_token_text(text.substr(0, 63) + "g"));
}

TEST(AccessToken, DecodeFaultsSayWhat) {
  auto bytes = proto::encode(authority().mint(1, TokenScope::all, "", kNow, std::nullopt));
  auto poked = [&](std::size_t at, std::uint8_t v) {
    auto b = bytes;
    b[at] = v;
    return proto::decode_access_token(b);
  };
  EXPECT_NE(poked(0, 9).error().message.find("version 9"), std::string::npos);
  EXPECT_NE(poked(2, 4).error().message.find("unknown scope 4"), std::string::npos);
  EXPECT_NE(poked(3, 0x80).error().message.find("undefined flags"), std::string::npos);
  EXPECT_EQ(poked(15, 1).error().fault, proto::DecodeFault::inconsistent);  // scope all with a name hash
  EXPECT_EQ(proto::decode_access_token(std::span(bytes).first(31)).error().fault, proto::DecodeFault::truncated);
}

TEST(AccessToken, TokensMintedAlikeDiffer) {
  const auto a = authority();
  const auto t1 = a.mint(1, TokenScope::movie, "a.mp4", kNow + 60, std::nullopt);
  const auto t2 = a.mint(1, TokenScope::movie, "a.mp4", kNow + 60, std::nullopt);
  EXPECT_NE(t1.address_hint, t2.address_hint) << "unbound tokens carry a random nonce";
  EXPECT_NE(t1.mac, t2.mac);
  const auto e = entry("a.mp4");
  EXPECT_EQ(a.refusal(with(t1), &e, kNow, kClient), std::nullopt);
  EXPECT_EQ(a.refusal(with(t2), &e, kNow, kClient), std::nullopt);
}

TEST(TokenAuthority, AdmitsWhatItGrants) {
  const auto a = authority();
  const auto movie = a.mint(1, TokenScope::movie, "a.mp4", kNow + 60, std::nullopt);
  EXPECT_EQ(a.refusal(with(movie), nullptr, kNow, kClient), std::nullopt) << "the catalog alone needs only a valid token";
  EXPECT_EQ(a.refusal(with(movie), &*std::make_unique<proto::CatalogEntry>(entry("a.mp4")), kNow, kClient), std::nullopt);
  const auto all = a.mint(7, TokenScope::all, "", kNow + 60, std::nullopt);
  for (const auto& e : {entry("a.mp4"), entry("b.ts"), entry("cam", true)})
    EXPECT_EQ(a.refusal(with(all), &e, kNow, kOther), std::nullopt) << e.name;
  const auto prefix = a.mint(1, TokenScope::prefix, "premium-", kNow + 60, std::nullopt);
  const auto premium = entry("premium-1.mp4"), free = entry("free-1.mp4"), whole = entry("premium-");
  EXPECT_EQ(a.refusal(with(prefix), &premium, kNow, kClient), std::nullopt);
  EXPECT_EQ(a.refusal(with(prefix), &whole, kNow, kClient), std::nullopt);
  EXPECT_NE(a.refusal(with(prefix), &free, kNow, kClient)->find("out of scope"), std::string::npos);
  // A folder's prefix grants everything below it, at any depth, and nothing beside it.
  const auto folder = a.mint(1, TokenScope::prefix, "Series/Show/", kNow + 60, std::nullopt);
  const auto deep = entry(std::string("Series/Show/Season 01/").append(900, 'e').append(".mkv")), other = entry("Series/Shows/x.mkv");
  EXPECT_EQ(a.refusal(with(folder), &deep, kNow, kClient), std::nullopt);
  EXPECT_NE(a.refusal(with(folder), &other, kNow, kClient)->find("out of scope"), std::string::npos);
  const auto live = a.mint(1, TokenScope::live, "cam", kNow + 60, std::nullopt);
  const auto cam = entry("cam", true), cam_movie = entry("cam");
  EXPECT_EQ(a.refusal(with(live), &cam, kNow, kClient), std::nullopt);
  EXPECT_NE(a.refusal(with(live), &cam_movie, kNow, kClient)->find("grants one live channel, not 'cam'"), std::string::npos);
}

TEST(TokenAuthority, EachRefusalNamesItsReason) {
  const auto a = authority();
  const auto e = entry("a.mp4"), other = entry("b.ts");
  EXPECT_NE(a.refusal(proto::ConnectRequest{}, &e, kNow, kClient)->find("missing token"), std::string::npos);

  auto bytes = proto::encode(a.mint(1, TokenScope::movie, "a.mp4", kNow + 60, std::nullopt));
  bytes[0] = 2;
  proto::ConnectRequest malformed;
  malformed.auth_type = proto::AuthType::token_v1;
  malformed.auth_token = bytes;
  EXPECT_NE(a.refusal(malformed, &e, kNow, kClient)->find("malformed token"), std::string::npos);

  auto forged = a.mint(1, TokenScope::movie, "a.mp4", kNow + 60, std::nullopt);
  forged.scope_hash = proto::name_hash("b.ts");  // re-scoped without the key
  EXPECT_NE(a.refusal(with(forged), &other, kNow, kClient)->find("forged"), std::string::npos);
  forged = a.mint(1, TokenScope::movie, "a.mp4", kNow + 60, std::nullopt);
  forged.expires += 3600;  // extended without the key
  EXPECT_NE(a.refusal(with(forged), &e, kNow, kClient)->find("forged"), std::string::npos);

  const TokenAuthority other_keys(std::map<std::uint8_t, std::vector<std::uint8_t>>{{1, std::vector<std::uint8_t>(32, 0x22)}});
  EXPECT_NE(other_keys.refusal(with(a.mint(1, TokenScope::all, "", kNow + 60, std::nullopt)), &e, kNow, kClient)->find("forged"),
            std::string::npos);
  EXPECT_NE(
      other_keys.refusal(with(a.mint(7, TokenScope::all, "", kNow + 60, std::nullopt)), &e, kNow, kClient)->find("key 7 is not known"),
      std::string::npos);

  const auto expired = a.mint(1, TokenScope::movie, "a.mp4", kNow - 10, std::nullopt);
  EXPECT_NE(a.refusal(with(expired), &e, kNow, kClient)->find("expired token: it expired at 2027-01-15T07:59:50Z, 10 s ago"),
            std::string::npos)
      << *a.refusal(with(expired), &e, kNow, kClient);

  EXPECT_NE(a.refusal(with(a.mint(1, TokenScope::movie, "a.mp4", kNow + 60, std::nullopt)), &other, kNow, kClient)->find("out of scope"),
            std::string::npos);

  const auto bound = a.mint(1, TokenScope::movie, "a.mp4", kNow + 60, kClient);
  EXPECT_EQ(a.refusal(with(bound), &e, kNow, kClient), std::nullopt);
  EXPECT_NE(a.refusal(with(bound), &e, kNow, kOther)->find("wrong address"), std::string::npos);
  // Every reason fits a reject's 120 bytes.
  for (const auto& r : {a.refusal(with(expired), &e, kNow, kClient), a.refusal(with(forged), &e, kNow, kClient),
                        a.refusal(malformed, &e, kNow, kClient), a.refusal(proto::ConnectRequest{}, &e, kNow, kClient)})
    EXPECT_LE(r->size(), proto::kRejectReasonMax) << *r;
}

TEST(TokenAuthority, KeysFileErrorsNameTheLine) {
  const std::string path = ::testing::TempDir() + "/vod-keys";
  auto write = [&](const std::string& text) { std::ofstream(path) << text; };
  write("# comment\n\n3 " + std::string(64, 'a') + "  # trailing comment\n9 " + std::string(64, 'b') + "\n");
  const auto a = TokenAuthority::load(path);
  EXPECT_EQ(a.key_count(), 2u);
  EXPECT_EQ(a.newest_key(), 9);
  for (const auto& [text, want] : std::vector<std::pair<std::string, std::string>>{
           {"1 abcd\n", ":1: the secret has 2 bytes"},
           {"\n256 " + std::string(64, 'a') + "\n", ":2: the key id '256' is not 0..255"},
           {"1 " + std::string(64, 'z') + "\n", ":1: the secret is not hex"},
           {"1\n", ":1: expected 'ID HEX'"},
           {"1 " + std::string(64, 'a') + "\n1 " + std::string(64, 'b') + "\n", ":2: key id 1 appears twice"},
           {"# nothing\n", "no keys"}}) {
    write(text);
    try {
      TokenAuthority::load(path);
      FAIL() << text;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(TokenAuthority::load("/nonexistent/keys"), std::runtime_error);
  std::remove(path.c_str());
}

TEST(TokenAuthority, DurationsAndAddresses) {
  EXPECT_EQ(parse_duration("2h"), 7200u);
  EXPECT_EQ(parse_duration("90m"), 5400u);
  EXPECT_EQ(parse_duration("30"), 30u);
  EXPECT_EQ(parse_duration("1d"), 86400u);
  for (const char* bad : {"", "h", "0s", "2w", "-1h", "99999999999d"}) EXPECT_THROW(parse_duration(bad), std::invalid_argument) << bad;
  EXPECT_EQ(parse_address("::ffff:192.0.2.10"), kClient);  // IPv4 and IPv4-mapped are the same client
  EXPECT_TRUE(parse_address("2001:db8::1"));
  EXPECT_FALSE(parse_address("host.example"));
}

TEST(AdmissionWithAuth, NoTokenLearnsNothingAndScopesHold) {
  proto::Catalog c;
  c.generation = 2;
  for (const char* name : {"a.mp4", "b.ts"}) {
    proto::CatalogEntry e = entry(name);
    e.size = 100;
    e.movie = {4096, 100, 1};
    c.entries.push_back(e);
  }
  const auto a = authority();
  AdmissionState s{c, 0, 10, false};
  s.auth = &a;
  s.now_unix = kNow;
  s.peer = kClient;
  proto::ConnectRequest r;
  r.kind = proto::RequestKind::movie;
  r.selector_type = proto::SelectorType::name_hash;
  r.selector = proto::name_hash("nope");
  // Without a token even an unknown movie is 'unauthorized', and the reason lists no names.
  auto no = std::get<Refuse>(admit(proto::encode(r), s));
  EXPECT_EQ(no.code, proto::RejectCode::unauthorized);
  EXPECT_EQ(no.reason.find("a.mp4"), std::string::npos) << no.reason;
  // With a token for a.mp4: a.mp4 is admitted, b.ts is out of scope.
  const auto t = a.mint(1, TokenScope::movie, "a.mp4", kNow + 60, std::nullopt);
  r.auth_type = proto::AuthType::token_v1;
  r.auth_token = proto::encode(t);
  r.selector = proto::name_hash("a.mp4");
  EXPECT_EQ(std::get<Admit>(admit(proto::encode(r), s)), (Admit{Admit::Kind::movie, 0, t}));
  r.selector = proto::name_hash("b.ts");
  auto out = std::get<Refuse>(admit(proto::encode(r), s));
  EXPECT_EQ(out.code, proto::RejectCode::unauthorized);
  EXPECT_NE(out.reason.find("out of scope"), std::string::npos);
  // A valid token's holder learns which names exist.
  r.selector = proto::name_hash("nope");
  EXPECT_EQ(std::get<Refuse>(admit(proto::encode(r), s)).code, proto::RejectCode::unknown_movie);
}

TEST(UriToken, ParsedFromTheQueryAndNeverPrinted) {
  const auto t = proto::encode(authority().mint(1, TokenScope::all, "", kNow, std::nullopt));
  const std::string text = proto::token_text(t);
  const auto u = client::parse_uri("rdma://192.0.2.1/a.mp4?token=" + text);
  EXPECT_EQ(u.movie, "a.mp4");
  EXPECT_EQ(u.token, t);
  EXPECT_EQ(u.to_string(), "rdma://192.0.2.1:7470/a.mp4");
  EXPECT_EQ(client::parse_uri("rdma://192.0.2.1?token=" + text).token, t);  // catalog-only, e.g. vod-proxy --server
  EXPECT_EQ(client::parse_uri("rdma://h/live/cam?token=" + text).token, t);
  for (const std::string& bad : {std::string("rdma://h/a?token=12"), "rdma://h/a?tok=" + text,
                                 "rdma://h/a?token=" + text + "&token=" + text, std::string("rdma://h/a#x")})
    EXPECT_THROW(client::parse_uri(bad), client::UriError) << bad;
}

}  // namespace
}  // namespace vod::server::auth
