// SPDX-License-Identifier: LGPL-2.1-or-later
// admit(): which connect request gets which descriptors or which reject, without a NIC.
#include <gtest/gtest.h>

#include "admission.hpp"
#include "vod/protocol/name_hash.hpp"

namespace vod::server {
namespace {

proto::Catalog catalog() {
  proto::Catalog c;
  c.generation = 4;
  for (const char* name : {"a.mp4", "b.ts"}) {
    proto::CatalogEntry e;
    e.name = name;
    e.size = 100;
    e.movie = {4096, 100, 1};
    e.flags = proto::kEntryIsMedia;
    c.entries.push_back(e);
  }
  proto::CatalogEntry live;
  live.name = "cam";
  live.size = 1 << 20;
  live.movie = {8192, 1 << 20, 2};
  live.index = {16384, 64, 3};
  live.flags = proto::kEntryIsMedia | proto::kEntryLive;
  c.entries.push_back(live);
  return c;
}

std::vector<std::uint8_t> request(proto::RequestKind kind, const std::string& name) {
  proto::ConnectRequest r;
  r.kind = kind;
  if (kind != proto::RequestKind::catalog_only) {
    r.selector_type = proto::SelectorType::name_hash;
    r.selector = proto::name_hash(name);
  }
  return proto::encode(r);
}

Refuse refused(const Admission& a) {
  EXPECT_TRUE(std::holds_alternative<Refuse>(a));
  return std::holds_alternative<Refuse>(a) ? std::get<Refuse>(a) : Refuse{};
}

TEST(Admission, MoviesCatalogAndLiveChannelsGetTheirEntries) {
  const auto c = catalog();
  const AdmissionState s{c, 0, 10, false};
  EXPECT_EQ(std::get<Admit>(admit(request(proto::RequestKind::movie, "b.ts"), s)), (Admit{Admit::Kind::movie, 1}));
  EXPECT_EQ(std::get<Admit>(admit(request(proto::RequestKind::catalog_only, ""), s)), (Admit{Admit::Kind::catalog, proto::kNoMovie}));
  EXPECT_EQ(std::get<Admit>(admit(request(proto::RequestKind::live, "cam"), s)), (Admit{Admit::Kind::live, 2}));
  EXPECT_EQ(describe(Admit{Admit::Kind::live, 2}, c), "live channel 'cam'");
}

TEST(Admission, EachRefusalHasItsCodeAndSaysWhy) {
  const auto c = catalog();
  const AdmissionState s{c, 0, 10, false};
  auto unknown = refused(admit(request(proto::RequestKind::movie, "nope"), s));
  EXPECT_EQ(unknown.code, proto::RejectCode::unknown_movie);
  EXPECT_NE(unknown.reason.find("2 movies: a.mp4, b.ts"), std::string::npos) << unknown.reason;
  auto unknown_live = refused(admit(request(proto::RequestKind::live, "nope"), s));
  EXPECT_NE(unknown_live.reason.find("1 live channels: cam"), std::string::npos) << unknown_live.reason;
  auto movie_as_live = refused(admit(request(proto::RequestKind::live, "a.mp4"), s));
  EXPECT_EQ(movie_as_live.code, proto::RejectCode::unsupported_kind);
  EXPECT_NE(movie_as_live.reason.find("is a movie, not a live channel"), std::string::npos);
  auto live_as_movie = refused(admit(request(proto::RequestKind::movie, "cam"), s));
  EXPECT_NE(live_as_movie.reason.find("rdma://host/live/cam"), std::string::npos) << live_as_movie.reason;
  EXPECT_EQ(refused(admit(request(proto::RequestKind::write_record, "a.mp4"), s)).code, proto::RejectCode::unsupported_kind);
  auto bad = request(proto::RequestKind::movie, "a.mp4");
  bad[0] = 0;
  EXPECT_EQ(refused(admit(bad, s)).code, proto::RejectCode::malformed_request);
  bad = request(proto::RequestKind::movie, "a.mp4");
  bad[4] = proto::kProtocolVersion + 1;
  EXPECT_EQ(refused(admit(bad, s)).code, proto::RejectCode::unsupported_version);
}

TEST(Admission, AVersion1ClientIsToldThatTheSegmentCacheNeedsVersion2) {
  auto c = catalog();
  auto v1 = request(proto::RequestKind::movie, "a.mp4");
  v1[4] = 1;
  EXPECT_EQ(std::get<Admit>(admit(v1, AdmissionState{c, 0, 10, false})).kind, Admit::Kind::movie);  // a library served whole
  c.entries[1].flags |= proto::kEntrySegmented;
  c.entries[1].segments = {0x1000, 72, 1};
  const auto r = refused(admit(v1, AdmissionState{c, 0, 10, false}));
  EXPECT_EQ(r.code, proto::RejectCode::unsupported_version);
  EXPECT_NE(r.reason.find("needs protocol version 2"), std::string::npos) << r.reason;
  EXPECT_EQ(std::get<Admit>(admit(request(proto::RequestKind::movie, "b.ts"), AdmissionState{c, 0, 10, false})).entry, 1u);
}

TEST(Admission, AVersion2ClientIsToldThatNamesWithFoldersNeedVersion3) {
  auto c = catalog();
  proto::ConnectRequest old{proto::RequestKind::movie, proto::SelectorType::name_hash, proto::name_hash("a.mp4")};
  old.version = proto::kSegmentsVersion;
  // A flat library stays open to it.
  EXPECT_EQ(std::get<Admit>(admit(proto::encode(old), AdmissionState{c, 0, 10, false})).entry, 0u);
  for (const std::string& name : {std::string("Films/a.mp4"), std::string(129, 'n')}) {
    c.entries[1].name = name;
    const auto r = refused(admit(proto::encode(old), AdmissionState{c, 0, 10, false}));
    EXPECT_EQ(r.code, proto::RejectCode::unsupported_version);
    EXPECT_NE(r.reason.find("need protocol version 3; the client speaks 2"), std::string::npos) << r.reason;
    EXPECT_LE(r.reason.size(), proto::kRejectReasonMax);
    EXPECT_EQ(std::get<Admit>(admit(request(proto::RequestKind::movie, name), AdmissionState{c, 0, 10, false})).entry, 1u);
  }
}

TEST(Admission, AVersion3ClientIsToldThatTitlesNeedVersion4) {
  auto c = catalog();
  proto::ConnectRequest old{proto::RequestKind::movie, proto::SelectorType::name_hash, proto::name_hash("a.mp4")};
  old.version = proto::kPathNamesVersion;
  EXPECT_EQ(std::get<Admit>(admit(proto::encode(old), AdmissionState{c, 0, 10, false})).entry, 0u);
  c.titles.push_back({"t", {{0, "720p", 0, 0}}, {}});
  const auto r = refused(admit(proto::encode(old), AdmissionState{c, 0, 10, false}));
  EXPECT_EQ(r.code, proto::RejectCode::unsupported_version);
  EXPECT_NE(r.reason.find("need protocol version 4; the client speaks 3"), std::string::npos) << r.reason;
  EXPECT_LE(r.reason.size(), proto::kRejectReasonMax);
  EXPECT_EQ(std::get<Admit>(admit(request(proto::RequestKind::movie, "a.mp4"), AdmissionState{c, 0, 10, false})).entry, 0u);
}

TEST(Admission, CatalogIndexSelectorsNeedTheCurrentGeneration) {
  const auto c = catalog();
  const AdmissionState s{c, 0, 10, false};
  proto::ConnectRequest r{proto::RequestKind::movie, proto::SelectorType::catalog_index, 1, 4, 0, proto::AuthType::none, {}};
  EXPECT_EQ(std::get<Admit>(admit(proto::encode(r), s)), (Admit{Admit::Kind::movie, 1}));
  r.catalog_generation = 3;
  EXPECT_EQ(refused(admit(proto::encode(r), s)).code, proto::RejectCode::stale_catalog);
  r.catalog_generation = 4;
  r.selector = 3;
  EXPECT_EQ(refused(admit(proto::encode(r), s)).code, proto::RejectCode::unknown_movie);
}

TEST(Admission, FullAndDrainingServersRefuseEveryKind) {
  const auto c = catalog();
  for (auto kind : {proto::RequestKind::movie, proto::RequestKind::live, proto::RequestKind::catalog_only}) {
    const std::string name = kind == proto::RequestKind::live ? "cam" : "a.mp4";
    EXPECT_EQ(refused(admit(request(kind, name), {c, 10, 10, false})).code, proto::RejectCode::server_full);
    EXPECT_EQ(refused(admit(request(kind, name), {c, 0, 10, true})).code, proto::RejectCode::shutting_down);
  }
}

}  // namespace
}  // namespace vod::server
