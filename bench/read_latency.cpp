// SPDX-License-Identifier: LGPL-2.1-or-later
// read-latency: the device's own latency for the first Read of a start or seek, without libvodclient's
// read engine. It opens one connection to vod-server for a movie (rdma_cm and verbs through the
// transport layer, as hostile_reader does) and times single RDMA Reads of --size bytes, one at a
// time, each from post to completion, sleeping on the completion channel as vod-client and
// perftest -e do:
//   fixed   the same offset (the movie's start) again and again: what ib_read_lat measures, one
//           buffer that stays hot in every cache on the way
//   random  a new random, page-aligned offset of the movie each time: what a seek does
// With --gap-ms each timed Read follows that much idle time, as a seek does in a paced player: the
// device path (in a Soft-RoCE guest: rxe in the kernel, emulated vCPUs) has been idle since the
// last Read, where ib_read_lat's loop keeps it busy. So the seek benchmark's gap to ib_read_lat
// splits into what memory the device has not touched lately costs (random - fixed), what an idle
// device path costs (gap - no gap), and the read engine's own (seek - random after a gap).
//
// --busy-poll spins on the CQ instead of sleeping on its channel, to tell the reader's wake-up from the
// device path's own latency.
//
// --new-connections instead opens --count connections one after another (--gap-ms apart, each closed
// before the next) and times each one's connect and its first Read, at the movie's start: what a
// player's start costs without the read engine, for the startup benchmark's zap runs.
//
// --fresh N instead runs 2N fresh processes (this program again): N of a bare raw-verbs open and N
// of a libvodclient Session's, each timed from its open call to the first --size bytes in hand
// (fresh_open.hpp), --gap-ms apart.
//
//   read-latency --host H --port P --name MOVIE [--size 16384] [--count 200] [--gap-ms 0] [--busy-poll]
//                [--new-connections | --fresh N] [--seed 1]
//
// Prints one line: READLAT size=... count=... fixed_p50_us=... fixed_p99_us=... random_p50_us=... random_p99_us=...
// (with --new-connections: READLAT_FIRST size=... count=... connect_p50_us=... first_p50_us=... first_p99_us=...;
// with --fresh: READLAT_FRESH size=... count=... bare_p50_us=... vod_p50_us=... ratio=... ...)
#include <poll.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fresh_open.hpp"
#include "vod/client/stats.hpp"
#include "vod/client/uri.hpp"
#include "vod/protocol/name_hash.hpp"
#include "vod/protocol/private_data.hpp"
#include "vod/rdma/connection.hpp"
#include "vod/rdma/post.hpp"

namespace po = boost::program_options;
using namespace vod;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string host;
  unsigned port = client::kDefaultPort;
  std::string name;
  std::uint32_t size = 16384;
  unsigned count = 200;
  unsigned seed = 1;
  unsigned gap_ms = 0;           // idle time before each timed Read
  bool busy_poll = false;        // spin on the CQ instead of sleeping on its completion channel
  bool new_connections = false;  // time each new connection's first Read
  unsigned fresh = 0;            // fresh processes per path (fresh_open.hpp)
  std::string fresh_child;       // this process is one of them: "bare" or "vod"
};

// One connection and one registered buffer; members in teardown order (endpoint before the hub).
struct Reader {
  rdma::CompletionHub hub;
  std::unique_ptr<rdma::ClientEndpoint> ep;
  proto::AcceptData accept;
  std::vector<std::uint8_t> buffer;
  ibv_mr* mr = nullptr;  // owned by ep->memory
  std::uint32_t owner = 0;
  bool landed = false;
  std::string failure;

  explicit Reader(const Options& o) : buffer(o.size) {
    owner = hub.add_owner([this](const ibv_wc& wc, rdma::WorkId) {
      landed = true;
      if (wc.status != IBV_WC_SUCCESS) failure = std::string("a Read completed with ") + ibv_wc_status_str(wc.status);
    });
    rdma::ConnectOptions c;
    c.host = o.host;
    c.port = static_cast<std::uint16_t>(o.port);
    c.private_data =
        proto::encode(proto::ConnectRequest{proto::RequestKind::movie, proto::SelectorType::name_hash, proto::name_hash(o.name)});
    c.wanted_read_depth = 1;
    c.send_queue_depth = 4;
    c.hub = &hub;
    ep = rdma::connect(c);
    auto a = proto::decode_accept(ep->accept_data);
    if (!a) throw std::runtime_error("the accept private data does not decode: " + a.error().message);
    accept = *a;
    if (accept.movie.length < o.size) throw std::runtime_error("'" + o.name + "' is smaller than --size");
    if (o.size > ep->limits.max_msg_size) throw std::runtime_error("--size is more than the device's largest message");
    ep->memory.push_back(rdma::register_memory(ep->pd.get(), buffer.data(), buffer.size(), IBV_ACCESS_LOCAL_WRITE, "the read buffer"));
    mr = ep->memory.back().get();
  }

  // One Read of the buffer's size at `offset`, from post to completion, in µs.
  std::uint64_t read_at(std::uint64_t offset, bool busy_poll) {
    landed = false;
    const auto start = Clock::now();
    if (int err = rdma::post_read(ep->qp.get(), rdma::WorkId{owner, 0, 0}.pack(), buffer.data(), static_cast<std::uint32_t>(buffer.size()),
                                  mr->lkey, accept.movie.addr + offset, accept.movie.rkey))
      throw std::runtime_error(std::string("ibv_post_send: ") + std::strerror(err));
    while (!landed) {
      if (hub.poll() > 0) break;
      if (busy_poll) {
        if (Clock::now() - start > std::chrono::seconds(5)) throw std::runtime_error("a Read did not complete within 5 s");
        continue;
      }
      hub.arm();
      if (hub.poll() > 0) break;  // it may have landed before the CQ was armed
      std::vector<pollfd> fds;
      for (int fd : hub.fds()) fds.push_back({fd, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), 5000) == 0) throw std::runtime_error("a Read did not complete within 5 s");
      hub.consume();
    }
    const auto us = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count());
    if (!failure.empty()) throw std::runtime_error(failure);
    return us;
  }
};

int run_new_connections(const Options& o) {
  client::LatencySamples connect, first;
  for (unsigned i = 0; i < o.count; ++i) {
    if (o.gap_ms) std::this_thread::sleep_for(std::chrono::milliseconds(o.gap_ms));
    const auto start = Clock::now();
    Reader r(o);  // rdma_cm connect, and the buffer registered (the engine's ring is, at attach)
    connect.record(static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count()));
    first.record(r.read_at(0, o.busy_poll));
  }
  std::printf("READLAT_FIRST size=%u count=%u connect_p50_us=%llu first_p50_us=%llu first_p99_us=%llu\n", o.size, o.count,
              static_cast<unsigned long long>(connect.percentile(0.5)), static_cast<unsigned long long>(first.percentile(0.5)),
              static_cast<unsigned long long>(first.percentile(0.99)));
  return 0;
}

int run(const Options& o) {
  if (o.fresh || !o.fresh_child.empty()) {
    const bench::FreshOptions f{o.host, static_cast<std::uint16_t>(o.port), o.name, o.size, o.fresh, o.gap_ms};
    return o.fresh_child.empty() ? bench::run_fresh(f) : bench::run_fresh_child(f, o.fresh_child);
  }
  if (o.new_connections) return run_new_connections(o);
  Reader r(o);
  constexpr std::uint64_t kPage = 4096;
  const std::uint64_t pages = (r.accept.movie.length - o.size) / kPage + 1;
  std::mt19937_64 rng(o.seed);
  client::LatencySamples fixed, random;  // exact percentiles, as vod-client bench's seeks
  auto timed = [&](std::uint64_t offset) {
    if (o.gap_ms) std::this_thread::sleep_for(std::chrono::milliseconds(o.gap_ms));
    return r.read_at(offset, o.busy_poll);
  };
  r.read_at(0, o.busy_poll);  // the connection's first Read warms what any first Read pays once
  for (unsigned i = 0; i < o.count; ++i) {
    fixed.record(timed(0));
    random.record(timed(rng() % pages * kPage));  // interleaved: both see the same guest
  }
  std::printf("READLAT size=%u count=%u fixed_p50_us=%llu fixed_p99_us=%llu random_p50_us=%llu random_p99_us=%llu\n", o.size, o.count,
              static_cast<unsigned long long>(fixed.percentile(0.5)), static_cast<unsigned long long>(fixed.percentile(0.99)),
              static_cast<unsigned long long>(random.percentile(0.5)), static_cast<unsigned long long>(random.percentile(0.99)));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  po::options_description opts("read-latency options");
  opts.add_options()("help,h", "show this help")("host", po::value(&o.host)->required(), "vod-server's address")(
      "port", po::value(&o.port)->default_value(o.port), "vod-server's port")("name", po::value(&o.name)->required(), "the movie to read")(
      "size", po::value(&o.size)->default_value(o.size), "bytes per Read (vod-client's first Read after a start or seek is 16384)")(
      "count", po::value(&o.count)->default_value(o.count), "Reads of each kind (with --new-connections: connections)")(
      "gap-ms", po::value(&o.gap_ms)->default_value(o.gap_ms), "idle milliseconds before each timed Read")(
      "seed", po::value(&o.seed)->default_value(o.seed), "for the random offsets")(
      "busy-poll", po::bool_switch(&o.busy_poll), "spin on the CQ instead of sleeping on its completion channel (perftest without -e)")(
      "new-connections", po::bool_switch(&o.new_connections), "time the first Read of --count new connections, one after another")(
      "fresh", po::value(&o.fresh)->default_value(o.fresh),
      "run this many fresh processes of a bare raw-verbs open and of a libvodclient open each, and time each one's open to the first "
      "--size bytes");
  po::options_description hidden;
  hidden.add_options()("fresh-child", po::value(&o.fresh_child), "one of --fresh's processes: bare or vod");
  po::options_description all;
  all.add(opts).add(hidden);
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, all), vm);
    if (vm.count("help")) {
      std::cout << opts << "\n";
      return 0;
    }
    po::notify(vm);
    if (o.size == 0 || o.count == 0 || o.port == 0 || o.port > 65535)
      throw std::invalid_argument("--size, --count and --port must be positive (port ≤ 65535)");
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "read-latency: error: " << e.what() << "\n";
    return 1;
  }
}
