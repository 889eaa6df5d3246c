// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/cluster/etcd_url.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace vod::cluster {

namespace {

bool prefix_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

}  // namespace

namespace {
EtcdSecurity& process_security() {
  static EtcdSecurity s;
  return s;
}
}  // namespace

EtcdSecurity checked_etcd_security(EtcdSecurity s) {
  auto readable = [](const std::string& path, const char* option) {
    if (path.empty()) return;
    if (FILE* f = std::fopen(path.c_str(), "r")) {
      std::fclose(f);
      return;
    }
    throw ClusterError(std::string(option) + " " + path + ": " + std::strerror(errno));
  };
  readable(s.cacert, "--etcd-cacert");
  readable(s.cert, "--etcd-cert");
  readable(s.key, "--etcd-key");
  readable(s.password_file, "--etcd-password-file");
  if (s.cert.empty() != s.key.empty()) throw ClusterError("--etcd-cert and --etcd-key go together: a client certificate needs its key");
  if (!s.user.empty() && s.password_file.empty())
    throw ClusterError("--etcd-user needs --etcd-password-file (the password is never given on the command line)");
  if (s.user.empty() && !s.password_file.empty()) throw ClusterError("--etcd-password-file needs --etcd-user");
  return s;
}

void set_etcd_security(EtcdSecurity s) { process_security() = checked_etcd_security(std::move(s)); }

const EtcdSecurity& etcd_security() noexcept { return process_security(); }

std::string format_host_port(std::string_view host, std::uint16_t port) {
  const bool v6 = host.find(':') != std::string_view::npos;
  return (v6 ? "[" + std::string(host) + "]" : std::string(host)) + ":" + std::to_string(port);
}

std::string EtcdEndpoint::to_string() const { return std::string(tls ? "etcds://" : "etcd://") + format_host_port(host, port) + prefix; }

void parse_host_port(std::string_view text, std::string& host, std::uint16_t& port, std::string_view what) {
  const std::string w(what);
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) throw ClusterError(w + " '" + std::string(text) + "': an IPv6 address needs its closing ']'");
    host = std::string(text.substr(1, close - 1));
    const auto after = text.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') throw ClusterError(w + " '" + std::string(text) + "': unexpected characters after the IPv6 address");
      port_text = after.substr(1);
      if (port_text.empty()) throw ClusterError(w + " '" + std::string(text) + "': the port after ':' is empty");
    }
  } else {
    const auto colon = text.find(':');
    host = std::string(text.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = text.substr(colon + 1);
      if (port_text.empty()) throw ClusterError(w + " '" + std::string(text) + "': the port after ':' is empty");
    }
  }
  if (host.empty()) throw ClusterError(w + " '" + std::string(text) + "': the host is empty");
  if (port_text.empty()) return;
  unsigned long p = 0;
  for (char c : port_text) {
    if (c < '0' || c > '9' || (p = p * 10 + static_cast<unsigned long>(c - '0')) > 65535)
      throw ClusterError(w + " '" + std::string(text) + "': the port '" + std::string(port_text) + "' is not a number from 1 to 65535");
  }
  if (p == 0) throw ClusterError(w + " '" + std::string(text) + "': port 0 cannot be connected to");
  port = static_cast<std::uint16_t>(p);
}

std::string checked_prefix(std::string_view prefix) {
  while (!prefix.empty() && prefix.front() == '/') prefix.remove_prefix(1);
  while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
  if (prefix.empty()) throw ClusterError("the etcd key prefix is empty (the default is " + std::string(kDefaultPrefix) + ")");
  if (prefix.size() > 128) throw ClusterError("the etcd key prefix is longer than 128 characters");
  bool after_slash = true;
  for (char c : prefix) {
    if (c == '/') {
      if (after_slash) throw ClusterError("the etcd key prefix '" + std::string(prefix) + "' has an empty part ('//')");
      after_slash = true;
    } else if (!prefix_char(c)) {
      throw ClusterError("the etcd key prefix '" + std::string(prefix) + "' may hold only letters, digits, '.', '_', '-' and '/'");
    } else {
      after_slash = false;
    }
  }
  return "/" + std::string(prefix);
}

EtcdEndpoint parse_etcd_url(std::string_view text) {
  constexpr std::string_view scheme = "etcd://", tls_scheme = "etcds://";
  const std::string form = " (expected etcd://HOST[:PORT][/PREFIX], e.g. etcd://192.0.2.10:2379/rdma-vod, or etcds:// for TLS)";
  const bool tls = text.substr(0, tls_scheme.size()) == tls_scheme;
  if (!tls && text.substr(0, scheme.size()) != scheme)
    throw ClusterError("invalid cluster URL '" + std::string(text) + "': the scheme must be etcd:// or etcds://" + form);
  std::string_view rest = text.substr(tls ? tls_scheme.size() : scheme.size());
  if (rest.find_first_of("?#") != std::string_view::npos)
    throw ClusterError("invalid cluster URL '" + std::string(text) + "': no query or fragment" + form);
  EtcdEndpoint e;
  e.tls = tls;
  e.security = etcd_security();
  const auto slash = rest.find('/');
  try {
    parse_host_port(rest.substr(0, slash), e.host, e.port, "cluster URL");
    if (slash != std::string_view::npos && slash + 1 < rest.size()) e.prefix = checked_prefix(rest.substr(slash));
  } catch (const ClusterError& err) {
    throw ClusterError(err.what() + form);
  }
  return e;
}

}  // namespace vod::cluster
