// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/uri.hpp"

#include <cctype>
#include <charconv>
#include <cstdio>

#include "vod/cluster/etcd_url.hpp"
#include "vod/cluster/member_record.hpp"
#include "vod/protocol/access_token.hpp"
#include "vod/protocol/catalog_layout.hpp"
#include "vod/protocol/hex_text.hpp"

namespace vod::client {

namespace {

const char* const kForm =
    " (expected rdma://host[:port][/movie][?token=HEX] or rdma://host[:port]/live/channel[?token=HEX], e.g. "
    "rdma://192.0.2.1:7470/movie.mp4; "
    "for a fleet rdma+etcd://etcd-host[:2379]/movie[?prefix=/rdma-vod&k=N&token=HEX])";

[[noreturn]] void bad(std::string_view text, const std::string& why) {
  throw UriError("invalid URI '" + std::string(text) + "': " + why + kForm);
}

}  // namespace

std::optional<std::string> percent_decode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    const int hi = i + 2 < text.size() ? proto::hex_digit(text[i + 1]) : -1;
    const int lo = i + 2 < text.size() ? proto::hex_digit(text[i + 2]) : -1;
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

std::string percent_encode(std::string_view name) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : name) {
    // ASCII only, whatever the locale says isalnum is.
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string percent_encode_path(std::string_view name) {
  std::string out;
  for (std::size_t from = 0;;) {
    const auto slash = name.find('/', from);
    out += percent_encode(name.substr(from, slash == name.npos ? name.npos : slash - from));
    if (slash == name.npos) return out;
    out += '/';
    from = slash + 1;
  }
}

void add_token(proto::ConnectRequest& request, const Uri& uri) {
  if (!uri.token) return;
  request.auth_type = proto::AuthType::token_v1;
  request.auth_token = *uri.token;
}

std::optional<std::string> expired_token(const Uri& uri, std::uint64_t now_unix) {
  if (!uri.token) return std::nullopt;
  const auto token = proto::decode_access_token(*uri.token);
  if (!token || now_unix < token->expires) return std::nullopt;
  return "token expired " + std::to_string(now_unix - token->expires) + " s ago (it was valid until Unix time " +
         std::to_string(token->expires) + "): " + uri.to_string() + " needs a new one (vod-token)";
}

std::string Uri::to_string() const {
  const std::string& h = cluster ? cluster->etcd.host : host;
  std::string s = std::string(cluster ? (cluster->etcd.tls ? "rdma+etcds://" : "rdma+etcd://") : "rdma://") +
                  cluster::format_host_port(h, cluster ? cluster->etcd.port : port);
  if (movie) s += (live ? "/live/" : "/") + percent_encode_path(*movie);
  if (cluster) {
    std::string query;
    if (cluster->etcd.prefix != cluster::kDefaultPrefix) query += "prefix=" + cluster->etcd.prefix;
    if (cluster->spread) query += std::string(query.empty() ? "" : "&") + "k=" + std::to_string(cluster->spread);
    if (cluster->load_epsilon != ClusterRef::kDefaultLoadEpsilon) {
      char e[32];
      std::snprintf(e, sizeof e, "%g", cluster->load_epsilon);
      query += std::string(query.empty() ? "" : "&") + "epsilon=" + e;
    }
    if (cluster->failover_ms != ClusterRef::kDefaultFailoverMs)
      query += std::string(query.empty() ? "" : "&") + "failover-ms=" + std::to_string(cluster->failover_ms);
    if (!query.empty()) s += "?" + query;
  }
  return s;
}

namespace {

// The query of `text`: token=HEX, and for a fleet prefix=P, k=N, epsilon=E and failover-ms=MS.
void parse_query(std::string_view text, std::string_view query, Uri& uri) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (uri.cluster && item.substr(0, 7) == "prefix=") {
      try {
        uri.cluster->etcd.prefix = cluster::checked_prefix(item.substr(7));
      } catch (const cluster::ClusterError& e) {
        bad(text, e.what());
      }
      continue;
    }
    if (uri.cluster && item.substr(0, 2) == "k=") {
      const auto k = item.substr(2);
      if (k.empty() || k.size() > 2 || k.find_first_not_of("0123456789") != std::string_view::npos || std::stoul(std::string(k)) < 1 ||
          std::stoul(std::string(k)) > cluster::kMaxSpread)
        bad(text, "k= must be a whole number from 1 to " + std::to_string(cluster::kMaxSpread));
      uri.cluster->spread = static_cast<unsigned>(std::stoul(std::string(k)));
      continue;
    }
    if (uri.cluster && item.substr(0, 8) == "epsilon=") {
      // A plain decimal (no sign, exponent, inf or nan), from 0 to 10.
      const std::string_view e = item.substr(8);
      double v = -1;
      if (!e.empty() && e.size() <= 8 && e.find_first_not_of("0123456789.") == std::string_view::npos) {
        const auto [end, ec] = std::from_chars(e.data(), e.data() + e.size(), v);
        if (ec != std::errc() || end != e.data() + e.size()) v = -1;
      }
      if (v < 0 || v > 10) bad(text, "epsilon= must be a number from 0 (no bound) to 10");
      uri.cluster->load_epsilon = v;
      continue;
    }
    if (uri.cluster && item.substr(0, 12) == "failover-ms=") {
      const auto ms = item.substr(12);
      unsigned v = 1;
      if (ms.empty() || ms.size() > 5 || ms.find_first_not_of("0123456789") != std::string_view::npos ||
          std::from_chars(ms.data(), ms.data() + ms.size(), v).ec != std::errc() || (v != 0 && (v < 200 || v > 60000)))
        bad(text, "failover-ms= must be 0 (no watch) or a number of milliseconds from 200 to 60000");
      uri.cluster->failover_ms = v;
      continue;
    }
    if (item.substr(0, 6) != "token=")
      bad(text, uri.cluster ? "the query parameters are prefix=P, k=N, epsilon=E, failover-ms=MS and token=HEX"
                            : "the only query parameter is token=HEX (an access token from vod-token)");
    if (uri.token) bad(text, "token= appears twice");
    const auto bytes = proto::parse_token_text(item.substr(6));
    if (!bytes) bad(text, "the token is not 64 hex digits (vod-token prints one)");
    uri.token = *bytes;
  }
}

}  // namespace

Uri parse_uri(std::string_view text) {
  constexpr std::string_view scheme = "rdma://", fleet_scheme = "rdma+etcd://", tls_fleet_scheme = "rdma+etcds://";
  const bool tls_fleet = text.substr(0, tls_fleet_scheme.size()) == tls_fleet_scheme;
  const bool fleet = tls_fleet || text.substr(0, fleet_scheme.size()) == fleet_scheme;
  if (text.substr(0, scheme.size()) != scheme && !fleet)
    bad(text, "the scheme must be rdma:// (or rdma+etcd://, rdma+etcds:// for a fleet)");
  std::string_view rest = text.substr(tls_fleet ? tls_fleet_scheme.size() : fleet ? fleet_scheme.size() : scheme.size());
  if (rest.find('#') != std::string_view::npos) bad(text, "fragments are not part of rdma:// URIs");
  std::string_view query;
  if (const auto q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);

  Uri uri;
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) bad(text, "an IPv6 address needs its closing ']'");
    uri.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') bad(text, "unexpected characters after the IPv6 address");
      port_text = after.substr(1);
      if (port_text.empty()) bad(text, "the port after ':' is empty");
    }
  } else {
    const auto colon = authority.find(':');
    uri.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      if (port_text.empty()) bad(text, "the port after ':' is empty");
    }
  }
  if (uri.host.empty()) bad(text, "the host is empty");
  if (fleet) {
    uri.cluster.emplace();
    uri.cluster->etcd.tls = tls_fleet;
    uri.cluster->etcd.security = cluster::etcd_security();  // the tool's --etcd-* options
    uri.cluster->etcd.host = std::move(uri.host);
    uri.host.clear();
    if (port_text.empty()) uri.port = cluster::kEtcdPort;
  }
  if (!port_text.empty()) {
    unsigned long port = 0;
    for (char c : port_text) {
      if (c < '0' || c > '9') bad(text, "the port '" + std::string(port_text) + "' is not a number");
      port = port * 10 + static_cast<unsigned long>(c - '0');
      if (port > 65535) bad(text, "the port '" + std::string(port_text) + "' is above 65535");
    }
    if (port == 0) bad(text, "port 0 cannot be connected to");
    uri.port = static_cast<std::uint16_t>(port);
  }
  if (uri.cluster) {
    uri.cluster->etcd.port = uri.port;
    uri.port = kDefaultPort;  // the member's, once placed
  }
  if (!path.empty()) {
    if (path.substr(0, 5) == "live/") {
      uri.live = true;
      path = path.substr(5);
      if (path.empty()) bad(text, "the live channel's name after /live/ is empty");
    }
    // The whole path, decoded: '/' between folders, whether it came as '/' or as %2F.
    auto decoded = percent_decode(path);
    if (!decoded) bad(text, "a '%' in the movie name is not followed by two hex digits");
    std::string name = std::move(*decoded);
    if (uri.live) {
      if (const char* why = proto::invalid_channel_name_reason(name))
        bad(text, std::string("the live channel's name is not valid: ") + why);
    } else if (const char* why = proto::invalid_name_reason(name)) {
      bad(text, std::string("the movie name is not valid: ") + why);
    }
    uri.movie = std::move(name);
  }
  parse_query(text, query, uri);
  return uri;
}

Uri parse_server_uri(std::string_view text) {
  if (text.substr(0, 7) != "etcd://" && text.substr(0, 8) != "etcds://") return parse_uri(text);
  Uri uri;
  uri.cluster.emplace();
  try {
    uri.cluster->etcd = cluster::parse_etcd_url(text);
  } catch (const cluster::ClusterError& e) {
    throw UriError(e.what());
  }
  return uri;
}

}  // namespace vod::client
