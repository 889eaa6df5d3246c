// SPDX-License-Identifier: LGPL-2.1-or-later
// hostile_reader: a client of protocol v1 that misuses the rkeys it is given (tests/rdma/vod_auth_test.sh).
// It speaks rdma_cm and verbs through libvodclient's transport layer (rdma::connect, ReadEngine),
// not through Session, so nothing in the client library stands between it and the server's device.
//
//   hostile_reader --host H --port P --name MOVIE --token HEX --file F [--mr-rkey HEX] [--fallback]
//
// Each probe opens connections of its own for MOVIE (4 KiB Reads) and prints "refused: ..." when the
// device refused the read on that QP, "read: ..." when it returned bytes (compared with F):
//   own          its own window at offset 0: must read, byte-exact
//   catalog      the catalog its accept names: must list no rkey (rkey 0, flag windowed)
//   stolen       another connection's window rkey, used on this connection's QP: refused, and the
//                other connection still reads afterwards (it notices nothing)
//   wrong-rkey   its own window's rkey with another key byte: refused
//   mr-rkey      the shared region's rkey (--mr-rkey, as if leaked from the server): refused
//   beyond       4 KiB starting 100 bytes before its window's end: refused
//   reuse        the rkey of a connection it closed, on a new connection: refused; the new one's own reads
// With --fallback (a server run with --no-memory-windows) the expectations are the weaker ones that
// mode documents: the catalog lists rkeys and a stolen rkey reads from another connection.
// Exit 0 when every probe behaved as expected, 1 otherwise.
#include <boost/program_options.hpp>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "vod/client/read_engine.hpp"
#include "vod/protocol/access_token.hpp"
#include "vod/protocol/catalog_layout.hpp"
#include "vod/protocol/name_hash.hpp"
#include "vod/protocol/private_data.hpp"
#include "vod/rdma/connection.hpp"

namespace po = boost::program_options;
using namespace vod;

namespace {

struct Target {
  std::string host;
  std::uint16_t port = 0;
  proto::ConnectRequest request{};
  std::vector<std::uint8_t> file;  // the movie's bytes, to compare reads with
};

// One connection with the pipeline every client uses; members in teardown order (QP, engine, CQ).
struct Connection {
  rdma::CompletionHub hub;
  client::ReadEngine engine{engine_options()};
  std::unique_ptr<rdma::ClientEndpoint> ep;
  proto::AcceptData accept;

  ~Connection() { engine.detach(); }  // its fetcher holds the endpoint: it goes first
  static client::EngineOptions engine_options() {
    client::EngineOptions o;
    o.readahead_bytes = 0;
    return o;
  }
};

std::unique_ptr<Connection> connect(const Target& t) {
  auto c = std::make_unique<Connection>();
  rdma::ConnectOptions o;
  o.host = t.host;
  o.port = t.port;
  o.private_data = proto::encode(t.request);
  o.wanted_read_depth = 1;
  o.send_queue_depth = 4;
  o.timeout = std::chrono::milliseconds(10000);
  o.hub = &c->hub;
  c->ep = rdma::connect(o);  // a reject throws: the token is the test's, so that is a failure
  auto accept = proto::decode_accept(c->ep->accept_data);
  if (!accept) throw std::runtime_error("accept private data: " + accept.error().message);
  c->accept = *accept;
  c->engine.attach(*c->ep, 1, std::min<std::size_t>(accept->max_message_size, c->ep->limits.max_msg_size));
  return c;
}

int failures = 0;

// Reads 4 KiB at `offset` of region `d` on connection `c` (a Read with d's rkey on c's QP). True when
// the device returned bytes; false when it refused (the QP is then in error).
bool try_read(Connection& c, client::Region r, proto::RegionDescriptor d, std::uint64_t offset, std::vector<std::uint8_t>& out,
              std::string& why) {
  d.length = std::max<std::uint64_t>(d.length, offset + 4096);  // what the hostile client claims; the device knows better
  c.engine.set_region(r, d);
  out.assign(4096, 0);
  try {
    out.resize(c.engine.read(r, offset, out));
    return true;
  } catch (const std::exception& e) {
    why = e.what();
    return false;
  }
}

void expect_refused(const std::string& probe, bool read, const std::string& why) {
  if (read) {
    std::printf("READ: %s: the device returned bytes it should have refused\n", probe.c_str());
    ++failures;
  } else {
    std::printf("refused: %s: %s\n", probe.c_str(), why.c_str());
  }
}

void expect_read(const Target& t, const std::string& probe, bool read, const std::string& why, const std::vector<std::uint8_t>& got,
                 std::uint64_t offset) {
  if (!read) {
    std::printf("REFUSED: %s: %s\n", probe.c_str(), why.c_str());
    ++failures;
  } else if (offset + got.size() > t.file.size() || std::memcmp(got.data(), t.file.data() + offset, got.size()) != 0) {
    std::printf("DIFFERS: %s: %zu bytes at %llu are not the movie's\n", probe.c_str(), got.size(), static_cast<unsigned long long>(offset));
    ++failures;
  } else {
    std::printf("read: %s: %zu bytes at %llu, byte-exact\n", probe.c_str(), got.size(), static_cast<unsigned long long>(offset));
  }
}

int run(const Target& t, std::uint32_t mr_rkey, bool fallback) {
  using client::Region;
  std::vector<std::uint8_t> got;
  std::string why;

  auto a = connect(t);
  const proto::RegionDescriptor a_movie = a->accept.movie;
  std::printf("info: movie window %llu bytes at 0x%llx, rkey 0x%x\n", static_cast<unsigned long long>(a_movie.length),
              static_cast<unsigned long long>(a_movie.addr), a_movie.rkey);
  bool ok = try_read(*a, Region::movie, a_movie, 0, got, why);
  expect_read(t, "own window", ok, why, got, 0);

  {  // the catalog lists no rkey that would bypass the windows
    std::vector<std::uint8_t> bytes(a->accept.catalog.length);
    a->engine.set_region(Region::catalog, a->accept.catalog);
    a->engine.read(Region::catalog, 0, bytes);
    auto catalog = proto::decode_catalog(bytes);
    if (!catalog) throw std::runtime_error("catalog: " + catalog.error().message);
    unsigned with_rkeys = 0, windowed = 0;
    for (const auto& e : catalog->entries) {
      with_rkeys += e.movie.rkey != 0 || e.index.rkey != 0;
      windowed += (e.flags & proto::kEntryWindowed) != 0;
    }
    const bool as_expected =
        fallback ? (with_rkeys == catalog->entries.size() && windowed == 0) : (with_rkeys == 0 && windowed == catalog->entries.size());
    std::printf("%s: catalog: %zu entries, %u with rkeys, %u flagged windowed\n", as_expected ? "info" : "UNEXPECTED",
                catalog->entries.size(), with_rkeys, windowed);
    failures += !as_expected;
  }

  {  // another client's window rkey, on this QP
    auto b = connect(t);
    ok = try_read(*b, Region::movie, a_movie, 0, got, why);
    if (fallback) expect_read(t, "stolen rkey (fallback: the shared MR's rkey works from any QP)", ok, why, got, 0);
    else expect_refused("another connection's window rkey on this QP", ok, why);
    ok = try_read(*a, Region::movie, a_movie, 8192, got, why);
    expect_read(t, "the robbed connection reads on", ok, why, got, 8192);
  }
  if (!fallback) {
    auto c = connect(t);
    proto::RegionDescriptor wrong = c->accept.movie;
    wrong.rkey = ibv_inc_rkey(wrong.rkey);
    ok = try_read(*c, Region::movie, wrong, 0, got, why);
    expect_refused("its own window with another key byte", ok, why);
  }
  if (mr_rkey) {
    auto d = connect(t);
    proto::RegionDescriptor mr = d->accept.movie;
    mr.rkey = mr_rkey;
    ok = try_read(*d, Region::movie, mr, 0, got, why);
    expect_refused("the shared region's own rkey", ok, why);
  }
  {
    auto e = connect(t);
    ok = try_read(*e, Region::movie, e->accept.movie, e->accept.movie.length - 100, got, why);
    expect_refused("4 KiB from 100 bytes before the end of its window", ok, why);
  }
  if (!fallback) {  // reuse after a reconnect
    a.reset();
    auto f = connect(t);
    std::printf("info: after reconnecting: movie rkey 0x%x (was 0x%x)\n", f->accept.movie.rkey, a_movie.rkey);
    if (f->accept.movie.rkey == a_movie.rkey) {
      std::printf("SAME RKEY: the new connection got the closed one's rkey again\n");
      ++failures;
    }
    ok = try_read(*f, Region::movie, a_movie, 0, got, why);
    expect_refused("the rkey of its closed connection, on its new one", ok, why);
    auto g = connect(t);
    ok = try_read(*g, Region::movie, g->accept.movie, 4096, got, why);
    expect_read(t, "a new connection's own window", ok, why, got, 4096);
  }
  std::printf("%s\n", failures ? "FAILED" : "all probes as expected");
  return failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  po::options_description opts("hostile_reader options");
  Target t;
  std::string name, token, file, mr_rkey_hex;
  unsigned port = 0;
  bool fallback = false;
  opts.add_options()("help,h", "show this help")("host", po::value(&t.host)->required(), "server address")(
      "port", po::value(&port)->required(), "server port")("name", po::value(&name)->required(), "movie")(
      "token", po::value(&token)->required(), "access token (64 hex digits)")(
      "file", po::value(&file)->required(), "the movie's file, to compare")("mr-rkey", po::value(&mr_rkey_hex),
                                                                            "the shared region's rkey (hex), as if leaked")(
      "fallback", po::bool_switch(&fallback), "expect the weaker --no-memory-windows behaviour");
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, opts), vm);
    if (vm.count("help")) {
      std::cout << opts << "\n";
      return 0;
    }
    po::notify(vm);
    t.port = static_cast<std::uint16_t>(port);
    const auto parsed = proto::parse_token_text(token);
    if (!parsed) throw std::runtime_error("--token is not 64 hex digits");
    t.request = {
        proto::RequestKind::movie, proto::SelectorType::name_hash, proto::name_hash(name), 0, 0, proto::AuthType::token_v1, *parsed};
    std::ifstream in(file, std::ios::binary);
    t.file.assign(std::istreambuf_iterator<char>(in), {});
    if (t.file.size() < 16384) throw std::runtime_error(file + ": the movie must be at least 16 KiB");
    const std::uint32_t mr_rkey = mr_rkey_hex.empty() ? 0 : static_cast<std::uint32_t>(std::stoul(mr_rkey_hex, nullptr, 16));
    return run(t, mr_rkey, fallback);
  } catch (const std::exception& e) {
    std::cerr << "hostile_reader: error: " << e.what() << "\n";
    return 2;
  }
}
