// SPDX-License-Identifier: LGPL-2.1-or-later
// Member records (cluster/member_record.hpp): what a server writes decodes to the same record; what
// a hostile or broken writer puts in etcd is refused with the reason. Also the etcd URL and the
// load estimate a server puts in its record.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "fleet/load_estimate.hpp"
#include "vod/cluster/etcd_client.hpp"
#include "vod/cluster/etcd_url.hpp"
#include "vod/cluster/member_directory.hpp"
#include "vod/cluster/member_record.hpp"

namespace vod::cluster {
namespace {

MemberRecord sample() {
  MemberRecord r;
  r.host = "192.0.2.12";
  r.port = 7470;
  r.weight = 2.5;
  r.nic_gbps = 100;
  r.cache_bytes = 8ull << 30;
  r.load = {12, 3, 96.5, 12.5};  // connections, UDP sessions, estimated and served Mbit/s
  r.catalog_generation = 7;
  r.spread = {{"hit.mp4", 3}};
  r.live = {"cam1"};
  return r;
}

TEST(MemberRecord, RoundTrips) {
  const auto r = sample();
  const auto d = decode_member(r.id(), encode_member(r));
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(*d, r);
  MemberRecord v6 = sample();
  v6.host = "2001:db8::7";
  EXPECT_EQ(v6.id(), "[2001:db8::7]:7470");
  EXPECT_TRUE(decode_member(v6.id(), encode_member(v6)));
}

TEST(MemberRecord, ARecordOfAnOlderServerHasNoUdpLoad) {
  const auto d = decode_member("192.0.2.12:7470", R"({"version":1,"host":"192.0.2.12","port":7470,"weight":1,"catalog_generation":1,)"
                                                  R"("load":{"connections":5,"estimated_mbps":2}})");
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->load.udp_sessions, 0u);
  EXPECT_EQ(d->load.served_mbps, 0);
  EXPECT_EQ(d->load.sessions(), 5u);
}

TEST(MemberRecord, RefusesHostileOrBrokenRecords) {
  const std::string id = "192.0.2.12:7470";
  const std::string ok_fields = R"("version":1,"host":"192.0.2.12","port":7470,"catalog_generation":1)";
  struct Case {
    const char* what;
    std::string key, json, reason;
  };
  const Case cases[] = {
      {"garbage", id, "not json {", "not JSON"},
      {"an array", id, "[1,2]", "not a JSON object"},
      {"null", id, "null", "not a JSON object"},
      {"a huge weight", id, "{" + ok_fields + R"(,"weight":1e300})", "'weight'"},
      {"a negative weight", id, "{" + ok_fields + R"(,"weight":-1})", "'weight'"},
      {"a zero weight", id, "{" + ok_fields + R"(,"weight":0})", "above 0"},
      {"a weight that is a string", id, "{" + ok_fields + R"(,"weight":"9"})", "'weight'"},
      {"no weight", id, "{" + ok_fields + "}", "'weight'"},
      {"a host with a shell", "x:1", R"({"version":1,"host":"x;rm -rf /","port":1,"weight":1,"catalog_generation":1})", "'host'"},
      {"a numeric non-address", "999.1.1.1:1", R"({"version":1,"host":"999.1.1.1","port":1,"weight":1,"catalog_generation":1})", "'host'"},
      {"port 0", "192.0.2.12:0", R"({"version":1,"host":"192.0.2.12","port":0,"weight":1,"catalog_generation":1})", "'port'"},
      {"port 70000", id, R"({"version":1,"host":"192.0.2.12","port":70000,"weight":1,"catalog_generation":1})", "'port'"},
      {"a fractional port", id, R"({"version":1,"host":"192.0.2.12","port":7470.5,"weight":1,"catalog_generation":1})", "whole"},
      {"a key that lies", "192.0.2.99:7470", "{" + ok_fields + R"(,"weight":1})", "its key names"},
      {"another version", id, R"({"version":2,"host":"192.0.2.12","port":7470,"weight":1,"catalog_generation":1})", "version"},
      {"a spread too wide", id, "{" + ok_fields + R"(,"weight":1,"spread":{"a.mp4":1000}})", "'spread'"},
      {"a spread of a bad name", id, "{" + ok_fields + R"(,"weight":1,"spread":{"../x":2}})", "'spread'"},
      {"live that is not a list", id, "{" + ok_fields + R"(,"weight":1,"live":"cam"})", "'live'"},
      {"a huge record", id, "{" + ok_fields + R"(,"weight":1,"pad":")" + std::string(70000, 'x') + "\"}", "longer than"},
      {"load of the wrong type", id, "{" + ok_fields + R"(,"weight":1,"load":{"connections":"many","estimated_mbps":1}})", "'connections'"},
      {"UDP sessions out of bounds", id, "{" + ok_fields + R"(,"weight":1,"load":{"connections":1,"estimated_mbps":1,"udp_sessions":-4}})",
       "'udp_sessions'"},
      {"a served rate that is a string", id,
       "{" + ok_fields + R"(,"weight":1,"load":{"connections":1,"estimated_mbps":1,"served_mbps":"fast"}})", "'served_mbps'"},
  };
  for (const auto& c : cases) {
    const auto d = decode_member(c.key, c.json);
    ASSERT_FALSE(d) << c.what;
    EXPECT_NE(d.error().message.find(c.reason), std::string::npos) << c.what << ": " << d.error().message;
  }
}

TEST(MemberDirectory, DecodeMembersSkipsBadRecordsAndOtherKeys) {
  EtcdEndpoint etcd;
  etcd.prefix = "/f";
  const auto good = sample();
  std::vector<KeyValue> kvs{{"/f/members/" + good.id(), encode_member(good)}, {"/f/members/junk", "{"}, {"/f/other", "x"}};
  std::vector<std::string> bad;
  const auto m = decode_members(etcd, kvs, [&](const std::string& key, const std::string&) { bad.push_back(key); });
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0], good);
  EXPECT_EQ(bad, std::vector<std::string>{"/f/members/junk"});
}

TEST(EtcdUrl, ParsesAndRefuses) {
  const auto e = parse_etcd_url("etcd://192.0.2.10:2380/video/fleet");
  EXPECT_EQ(e.host, "192.0.2.10");
  EXPECT_EQ(e.port, 2380);
  EXPECT_EQ(e.prefix, "/video/fleet");
  EXPECT_EQ(e.members_key(), "/video/fleet/members/");
  EXPECT_EQ(parse_etcd_url("etcd://h").to_string(), "etcd://h:2379/rdma-vod");
  EXPECT_EQ(parse_etcd_url("etcd://[::1]:1/p/").to_string(), "etcd://[::1]:1/p");
  for (const char* bad : {"http://h", "etcd://", "etcd://h:0", "etcd://h:99999", "etcd://h/a//b", "etcd://h/a b", "etcd://h?x=1",
                          "etcd://[::1", "etcds:/h", "https://h"})
    EXPECT_THROW(parse_etcd_url(bad), ClusterError) << bad;
  const auto tls = parse_etcd_url("etcds://192.0.2.10/video");
  EXPECT_TRUE(tls.tls);
  EXPECT_FALSE(e.tls);
  EXPECT_EQ(tls.to_string(), "etcds://192.0.2.10:2379/video");
}

TEST(EtcdSecurity, RefusesHalfAPairOrAFileThatCannotBeRead) {
  const std::string pem = ::testing::TempDir() + "/vod-etcd-test.pem";
  std::ofstream(pem) << "-----BEGIN CERTIFICATE-----\n";
  EtcdSecurity s;
  s.cert = pem;
  EXPECT_THROW(set_etcd_security(s), ClusterError) << "a certificate without its key";
  s = {};
  s.user = "vod";
  EXPECT_THROW(set_etcd_security(s), ClusterError) << "a user without a password file";
  s = {};
  s.cacert = "/nonexistent/ca.pem";
  EXPECT_THROW(set_etcd_security(s), ClusterError) << "a CA file that is not there";
  s = {};
  s.cacert = pem;
  set_etcd_security(s);
  EXPECT_EQ(parse_etcd_url("etcds://h").security.cacert, pem) << "every endpoint parsed afterwards carries them";
  set_etcd_security({});
  std::remove(pem.c_str());
}

TEST(EtcdClient, Base64AndPrefixEnd) {
  for (const std::string s : {"", "a", "ab", "abc", "/rdma-vod/members/192.0.2.1:7470"}) EXPECT_EQ(base64_decode(base64_encode(s)), s);
  EXPECT_EQ(base64_encode("foo"), "Zm9v");
  EXPECT_THROW(base64_decode("abc"), EtcdError);
  EXPECT_EQ(prefix_end("/a/"), "/a0");
  EXPECT_EQ(prefix_end(std::string("a\xff", 2)), "b");
}

TEST(LoadEstimate, ConnectionsTimesBitrate) {
  const std::map<std::pair<std::string, std::string>, std::size_t> counts{
      {{"movie", "a.mp4"}, 3}, {{"movie", "b.mp4"}, 1}, {{"catalog", ""}, 2}, {{"live", "cam"}, 0}};
  const auto load = server::fleet::estimate_load(counts, [](const std::string& kind, const std::string& name) -> std::uint64_t {
    if (kind != "movie") return 0;
    return name == "a.mp4" ? 4'000'000 : 10'000'000;
  });
  EXPECT_EQ(load.connections, 6u);
  EXPECT_DOUBLE_EQ(load.estimated_mbps, 22.0);
}

}  // namespace
}  // namespace vod::cluster
