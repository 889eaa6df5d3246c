// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-token: mints an access token for a vod-server running with --auth-secret FILE, with a key of
// the same file. Prints the token (64 hex digits) for ?token= in rdma:// URIs. docs/security.md.
#include <boost/program_options.hpp>
#include <ctime>
#include <iostream>

#include "auth/token_authority.hpp"

namespace po = boost::program_options;
using namespace vod;

int main(int argc, char** argv) {
  std::string secret, movie, live, prefix, ttl = "2h", client;
  int key_id = -1;
  bool all = false, uri_form = false;
  po::options_description d(
      "vod-token: mints an access token for a vod-server that runs with --auth-secret\n\n"
      "usage: vod-token --secret FILE (--movie NAME | --live NAME | --prefix TEXT | --all) [--ttl 2h] [--client ADDR] [--key-id N]\n\n"
      "options");
  // An option table, laid out by hand: one option a line.
  // clang-format off
  d.add_options()
      ("help,h", "show this help")
      ("version,V", "show the version")
      ("secret", po::value(&secret), "the server's --auth-secret file (lines 'ID HEX')")
      ("key-id", po::value(&key_id), "the key to sign with (default: the highest id in the file)")
      ("movie", po::value(&movie), "grant this movie")
      ("live", po::value(&live), "grant this live channel")
      ("prefix", po::value(&prefix), "grant every movie and channel whose name starts with TEXT")
      ("all", po::bool_switch(&all), "grant everything the server serves")
      ("ttl", po::value(&ttl)->default_value(ttl), "how long the token is valid: 30s, 90m, 2h, 7d")
      ("client", po::value(&client), "bind the token to this client IP address (the address its connections come from)")
      ("query", po::bool_switch(&uri_form), "print ?token=... (to append to an rdma:// URI) instead of the bare token");
  // clang-format on
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, d), vm);
    po::notify(vm);
    if (vm.count("version")) {
      std::cout << "vod-token " VOD_VERSION "\n";
      return 0;
    }
    if (vm.count("help")) {
      std::cout << d << "\nexample: vod-client play \"rdma://host/movie.mp4?token=$(vod-token --secret keys --movie movie.mp4)\"\n";
      return 0;
    }
    if (secret.empty()) throw std::invalid_argument("--secret FILE is required (the server's --auth-secret file)");
    const int scopes = !movie.empty() + !live.empty() + !prefix.empty() + all;
    if (scopes != 1) throw std::invalid_argument("give exactly one of --movie, --live, --prefix and --all");
    const auto authority = server::auth::TokenAuthority::load(secret);
    if (key_id > 255) throw std::invalid_argument("--key-id must be 0..255");
    const std::uint8_t key = key_id < 0 ? authority.newest_key() : static_cast<std::uint8_t>(key_id);
    std::optional<proto::TokenAddress> address;
    if (!client.empty()) {
      address = server::auth::parse_address(client);
      if (!address) throw std::invalid_argument("--client '" + client + "' is not an IPv4 or IPv6 address");
    }
    const std::uint64_t expires = static_cast<std::uint64_t>(std::time(nullptr)) + server::auth::parse_duration(ttl);
    if (expires > 0xffffffffull) throw std::invalid_argument("--ttl reaches past 2106");
    const proto::TokenScope scope = all              ? proto::TokenScope::all
                                    : !movie.empty() ? proto::TokenScope::movie
                                    : !live.empty()  ? proto::TokenScope::live
                                                     : proto::TokenScope::prefix;
    const std::string name = !movie.empty() ? movie : !live.empty() ? live : prefix;
    const auto token = authority.mint(key, scope, name, static_cast<std::uint32_t>(expires), address);
    std::cout << (uri_form ? "?token=" : "") << proto::token_text(proto::encode(token)) << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "vod-token: " << e.what() << "\n";
    return 2;
  }
}
