// SPDX-License-Identifier: LGPL-2.1-or-later
#include "host_allow_list.hpp"

#include <utility>  // first: Boost.Asio 1.74's awaitable.hpp uses std::exchange without including it

#include <cctype>

#include <boost/asio/ip/address.hpp>
#include <stdexcept>

namespace vod::proxy {

namespace {

namespace ip = boost::asio::ip;

bool valid_port(std::string_view port) {
  // RFC 3986: port = *DIGIT (an empty port means the default one).
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos) return false;
  return port.empty() || std::stoul(std::string(port)) <= 65535;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::optional<std::string> canonical_v6(std::string_view inside) {
  if (inside.find('%') != std::string_view::npos) return std::nullopt;  // zone identifiers: browsers send none
  boost::system::error_code ec;
  const auto a = ip::make_address_v6(std::string(inside), ec);
  if (ec) return std::nullopt;
  if (a.is_v4_mapped()) return ip::make_address_v4(ip::v4_mapped, a).to_string();
  return "[" + a.to_string() + "]";
}

std::optional<std::string> canonical_name(std::string_view name) {
  if (!name.empty() && name.back() == '.') name.remove_suffix(1);
  if (name.empty() || name.size() > 253) return std::nullopt;
  if (name.find_first_not_of("0123456789.") == std::string_view::npos) {
    // Digits and dots: browsers parse such a host as IPv4, so it must be one.
    boost::system::error_code ec;
    const auto a = ip::make_address_v4(std::string(name), ec);
    if (ec) return std::nullopt;
    return a.to_string();
  }
  const std::string out = lower(name);
  if (out.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-._~") != std::string::npos) return std::nullopt;
  return out;
}

bool loopback_literal(const std::string& host) {
  if (host == "[::1]") return true;
  boost::system::error_code ec;
  const auto a = ip::make_address_v4(host, ec);
  return !ec && a.is_loopback();
}

// A value from a request, safe to show in a text/plain body: printable ASCII, at most 100 bytes.
std::string shown(std::string_view value) {
  std::string out;
  for (char c : value.substr(0, 100)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return value.size() > 100 ? out + "..." : out;
}

}  // namespace

std::optional<std::string> host_name_of(std::string_view field) {
  if (field.empty()) return std::nullopt;
  if (field.front() == '[') {
    const auto close = field.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    const std::string_view rest = field.substr(close + 1);
    if (!rest.empty() && (rest.front() != ':' || !valid_port(rest.substr(1)))) return std::nullopt;
    return canonical_v6(field.substr(1, close - 1));
  }
  const auto colon = field.find(':');
  if (colon != std::string_view::npos) {
    if (field.find(':', colon + 1) != std::string_view::npos) return std::nullopt;  // a bare IPv6 address needs brackets
    if (!valid_port(field.substr(colon + 1))) return std::nullopt;
    field = field.substr(0, colon);
  }
  return canonical_name(field);
}

HostAllowList::HostAllowList() : names_{"localhost", "127.0.0.1", "[::1]"} {}

void HostAllowList::allow(std::string_view name) {
  // Accept a bare IPv6 address as well as a bracketed one.
  std::optional<std::string> host;
  if (!name.empty() && name.find(':') != name.rfind(':') && name.front() != '[') host = canonical_v6(name);
  else host = host_name_of(name);
  if (!host) throw std::invalid_argument("--allow-host '" + shown(name) + "' is not a host name, IPv4 address or [IPv6] address");
  names_.insert(*host);
}

bool HostAllowList::allows(const std::string& host) const { return names_.count(host) != 0 || loopback_literal(host); }

HostAllowList allowed_hosts_for(const std::string& listen_address, const std::vector<std::string>& extra,
                                const std::vector<std::string>& host_addresses, const std::string& hostname) {
  HostAllowList list;
  boost::system::error_code ec;
  const auto listen = ip::make_address(listen_address, ec);
  if (!ec && listen.is_unspecified()) {
    // A wildcard listen: every address of the host, and its name, reach the proxy.
    for (const auto& a : host_addresses) {
      try {
        list.allow(a);
      } catch (const std::invalid_argument&) {
        // an address this check cannot name (e.g. link-local with a zone): no request carries it
      }
    }
    if (host_name_of(hostname)) list.allow(hostname);
  } else {
    list.allow(listen_address);
  }
  for (const auto& name : extra) list.allow(name);
  return list;
}

HostVerdict check_host(unsigned http_version, std::size_t host_lines, std::string_view host, const HostAllowList& allowed) {
  if (host_lines > 1) return HostVerdict::repeated;
  if (host_lines == 0) return http_version >= 11 ? HostVerdict::missing : HostVerdict::allowed;
  const auto name = host_name_of(host);
  if (!name) return HostVerdict::malformed;
  return allowed.allows(*name) ? HostVerdict::allowed : HostVerdict::not_allowed;
}

Plan host_refusal(HostVerdict verdict, std::string_view host) {
  switch (verdict) {
    case HostVerdict::missing:
      return error_plan(400, "an HTTP/1.1 request needs a Host header; send the address you connected to, e.g. Host: 127.0.0.1:8080");
    case HostVerdict::repeated: return error_plan(400, "the request has more than one Host header; send one");
    case HostVerdict::malformed:
      return error_plan(400, "Host '" + shown(host) + "' is not a host name, IPv4 address or [IPv6] address with an optional :port");
    case HostVerdict::not_allowed:
    case HostVerdict::allowed: break;
  }
  const std::string name = host_name_of(host).value_or(shown(host));
  return error_plan(421, "vod-proxy does not answer to the name '" + name +
                             "' (a web page elsewhere could be reading it through DNS rebinding); if that is how you reach the proxy, "
                             "start it with --allow-host " +
                             name);
}

const char* invalid_cors_origin(const std::string& o) {
  const bool http = o.rfind("http://", 0) == 0, https = o.rfind("https://", 0) == 0;
  if (!http && !https) return "it must start with http:// or https://";
  const std::string rest = o.substr(http ? 7 : 8);
  if (rest.empty()) return "it has no host";
  for (const char c : rest)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' || c == '[' || c == ']'))
      return "it may hold only scheme://host[:port], without a path, a trailing slash or a wildcard (list each origin)";
  return nullptr;
}

}  // namespace vod::proxy
