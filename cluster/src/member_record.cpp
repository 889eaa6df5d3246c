// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/cluster/member_record.hpp"

#include <arpa/inet.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "vod/cluster/etcd_url.hpp"
#include "vod/protocol/catalog_layout.hpp"

namespace vod::cluster {

namespace {

using nlohmann::json;
using proto::DecodeError;
using proto::DecodeFault;

DecodeError bad(const std::string& what) { return {DecodeFault::bad_field, "member record: " + what}; }

// A host clients may be sent to: an IPv4 or IPv6 literal, or a DNS name of letters, digits, '-' and '.'.
bool valid_host(const std::string& h) {
  if (h.empty() || h.size() > 253) return false;
  unsigned char buf[16];
  if (inet_pton(AF_INET, h.c_str(), buf) == 1 || inet_pton(AF_INET6, h.c_str(), buf) == 1) return true;
  if (h.front() == '-' || h.front() == '.' || h.back() == '-') return false;
  bool digits_only = true;
  for (char c : h) {
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!alpha && !(c >= '0' && c <= '9') && c != '-' && c != '.') return false;
    if (alpha || c == '-') digits_only = false;
  }
  return !digits_only;  // "1.2.3" or "999.1.1.1" is not a name, and not an address either
}

// A number field: present, a number, finite, within [lo, hi].
double number(const json& j, const char* field, double lo, double hi) {
  const auto it = j.find(field);
  if (it == j.end() || !it->is_number()) throw bad(std::string("'") + field + "' is missing or not a number");
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < lo || v > hi)
    throw bad(std::string("'") + field + "' is " + it->dump() + ", outside " + json(lo).dump() + ".." + json(hi).dump());
  return v;
}

}  // namespace

std::string MemberRecord::id() const { return format_host_port(host, port); }

std::string encode_member(const MemberRecord& r) {
  json j;
  j["version"] = kMemberRecordVersion;
  j["host"] = r.host;
  j["port"] = r.port;
  j["weight"] = r.weight;
  j["capacity"] = {{"nic_gbps", r.nic_gbps}, {"cache_bytes", r.cache_bytes}};
  j["load"] = {{"connections", r.load.connections},
               {"udp_sessions", r.load.udp_sessions},
               {"estimated_mbps", r.load.estimated_mbps},
               {"estimate", "connections x movie bitrate"},
               {"served_mbps", r.load.served_mbps}};
  j["catalog_generation"] = r.catalog_generation;
  j["spread"] = json::object();
  for (const auto& [name, k] : r.spread) j["spread"][name] = k;
  j["live"] = r.live;
  return j.dump();
}

proto::Decoded<MemberRecord> decode_member(std::string_view key_id, std::string_view text) try {
  if (text.size() > kMaxRecordBytes) return bad("longer than " + std::to_string(kMaxRecordBytes) + " bytes");
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return bad("not JSON");
  if (!j.is_object()) return bad("not a JSON object");
  MemberRecord r;
  const double version = number(j, "version", 1, 1e9);
  if (version != kMemberRecordVersion)
    return {DecodeError{DecodeFault::unsupported_version,
                        "member record: version " + j["version"].dump() + ", this build reads " + std::to_string(kMemberRecordVersion)}};
  const auto host = j.find("host");
  if (host == j.end() || !host->is_string() || !valid_host(host->get<std::string>()))
    return bad("'host' is missing or not an address or host name");
  r.host = host->get<std::string>();
  r.port = static_cast<std::uint16_t>(number(j, "port", 1, 65535));
  if (number(j, "port", 1, 65535) != r.port) return bad("'port' is not a whole number");
  if (r.id() != key_id)
    return {DecodeError{DecodeFault::inconsistent, "member record: its key names '" + std::string(key_id) + "' but it says " + r.id()}};
  r.weight = number(j, "weight", 0, kMaxWeight);
  if (!(r.weight > 0)) return bad("'weight' must be above 0");
  if (auto c = j.find("capacity"); c != j.end() && c->is_object()) {
    r.nic_gbps = number(*c, "nic_gbps", 0, 1e6);
    r.cache_bytes = static_cast<std::uint64_t>(number(*c, "cache_bytes", 0, 1e18));
  }
  if (auto l = j.find("load"); l != j.end() && l->is_object()) {
    r.load.connections = static_cast<std::uint64_t>(number(*l, "connections", 0, 1e9));
    r.load.estimated_mbps = number(*l, "estimated_mbps", 0, 1e9);
    // Since issue 48; a record of an older server has neither.
    if (l->contains("udp_sessions")) r.load.udp_sessions = static_cast<std::uint64_t>(number(*l, "udp_sessions", 0, 1e9));
    if (l->contains("served_mbps")) r.load.served_mbps = number(*l, "served_mbps", 0, 1e9);
  }
  r.catalog_generation = static_cast<std::uint32_t>(number(j, "catalog_generation", 0, 4294967295.0));
  if (auto s = j.find("spread"); s != j.end()) {
    if (!s->is_object() || s->size() > kMaxListed)
      return bad("'spread' is not an object of at most " + std::to_string(kMaxListed) + " movies");
    for (const auto& [name, k] : s->items()) {
      if (proto::invalid_name_reason(name)) return bad("'spread' names an invalid movie name");
      if (!k.is_number_unsigned() || k.get<std::uint64_t>() < 1 || k.get<std::uint64_t>() > kMaxSpread)
        return bad("'spread' of '" + name + "' is not a whole number from 1 to " + std::to_string(kMaxSpread));
      r.spread[name] = k.get<unsigned>();
    }
  }
  if (auto l = j.find("live"); l != j.end()) {
    if (!l->is_array() || l->size() > kMaxListed)
      return bad("'live' is not an array of at most " + std::to_string(kMaxListed) + " channels");
    for (const auto& c : *l) {
      if (!c.is_string() || proto::invalid_channel_name_reason(c.get<std::string>()))
        return bad("'live' holds something that is not a channel name");
      r.live.push_back(c.get<std::string>());
    }
  }
  return r;
} catch (const DecodeError& e) {
  return e;
} catch (const nlohmann::json::exception& e) {
  return bad(std::string("a field has the wrong type (") + e.what() + ")");
}

}  // namespace vod::cluster
