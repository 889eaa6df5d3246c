// SPDX-License-Identifier: LGPL-2.1-or-later
// Longer than 400 lines because: one program plays the three roles smoke_exchange.sh sets against
// each other (a serving peer, a fetching peer, a raw prober), on one shared set of verbs helpers.
// smoke_peer: the first end-to-end proof of protocol v1 on real rdma-core (tests/rdma/smoke_exchange.sh).
//
//   smoke_peer serve --file F [--bind ADDR] [--port P]
//       Loads F into anonymous memory, registers it REMOTE_READ with a one-entry catalog and an empty
//       keyframe index, and answers connect requests: accept with the three descriptors, or reject
//       with a reason. Prints "READY port=P" when listening; exits 0 on SIGTERM.
//   smoke_peer fetch --host H --port P --name NAME --out F [--chunk BYTES] [--depth N]
//       Connects for NAME, decodes the accept, reads the catalog, then RDMA-Reads the whole movie in
//       pipelined chunks (libvodclient's ReadEngine) into F. A reject prints its decoded reason and exits 3.
//   smoke_peer raw --host H --port P --hex BYTES [--times N]
//       Sends BYTES (hex) as connect private data and prints the decoded reject; exits 3 on reject.
//       With --times, N connects at once from one process, a line each.
//
// The real server and client (server/, client/) follow the same protocol with far more policy.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <latch>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "vod/client/read_engine.hpp"
#include "vod/protocol/access_token.hpp"
#include "vod/protocol/catalog_layout.hpp"
#include "vod/protocol/keyframe_index_layout.hpp"
#include "vod/protocol/name_hash.hpp"
#include "vod/protocol/private_data.hpp"
#include "vod/rdma/connection.hpp"
#include "vod/rdma/error.hpp"

namespace po = boost::program_options;
using namespace vod;

namespace {

volatile std::sig_atomic_t g_stop = 0;

// Page-aligned anonymous memory, so registration never covers a neighbour's data.
struct Region {
  void* data = nullptr;
  std::size_t length = 0;
  explicit Region(std::size_t n) : length(n) {
    if (n == 0) return;
    data = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (data == MAP_FAILED) throw std::runtime_error(std::string("mmap: ") + std::strerror(errno));
    madvise(data, n, MADV_HUGEPAGE);
  }
  Region(const Region&) = delete;
  ~Region() {
    if (data) munmap(data, length);
  }
  std::uint8_t* bytes() const { return static_cast<std::uint8_t*>(data); }
};

proto::RegionDescriptor describe(const ibv_mr* mr) {
  if (!mr) return {};
  return {reinterpret_cast<std::uint64_t>(mr->addr), mr->length, mr->rkey};
}

int serve(const std::string& file, const std::string& bind, std::uint16_t port) {
  const std::string name = std::filesystem::path(file).filename().string();
  const int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("open " + file + ": " + std::strerror(errno));
  struct stat st {};
  fstat(fd, &st);
  // A zero-byte movie still needs a registrable page; its descriptor advertises length 0.
  Region movie(std::max<std::size_t>(static_cast<std::size_t>(st.st_size), 1));
  for (std::size_t done = 0; done < static_cast<std::size_t>(st.st_size);) {
    const ssize_t n = pread(fd, movie.bytes() + done, static_cast<std::size_t>(st.st_size) - done, static_cast<off_t>(done));
    if (n <= 0) throw std::runtime_error("read " + file + ": " + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
  close(fd);

  rdma::Listener listener(bind, port, 64);
  std::printf("READY port=%u\n", listener.port());
  std::fflush(stdout);

  // Device resources, set up by the first connect request (a listener bound to a wildcard address
  // learns its device only then). Declared so that MRs go before the PD and QPs before the CQ.
  rdma::ProtectionDomain pd;
  rdma::CompletionQueue cq;
  rdma::MemoryRegion movie_mr, catalog_mr, index_mr;
  std::vector<std::uint8_t> catalog_bytes, index_bytes;
  std::unique_ptr<Region> catalog_region, index_region;
  rdma::DeviceLimits limits;
  proto::AcceptData accept_data;
  struct Connection {
    rdma::CmIdHandle id;
    rdma::QueuePair qp;
  };
  std::map<rdma_cm_id*, Connection> connections;

  auto setup_device = [&](ibv_context* ctx, std::uint8_t port_num) {
    limits = rdma::query_limits(ctx, port_num);
    pd = rdma::alloc_pd(ctx);
    cq = rdma::create_cq(ctx, 16, nullptr);
    const std::size_t size = static_cast<std::size_t>(st.st_size);
    movie_mr = rdma::register_memory(pd.get(), movie.data, movie.length, IBV_ACCESS_REMOTE_READ, "movie " + name);
    proto::KeyframeIndex index{std::max<std::uint64_t>(size, 1), 0, {}};
    index_bytes = proto::encode_index(index);
    index_region = std::make_unique<Region>(index_bytes.size());
    std::memcpy(index_region->data, index_bytes.data(), index_bytes.size());
    index_mr = rdma::register_memory(pd.get(), index_region->data, index_bytes.size(), IBV_ACCESS_REMOTE_READ, "index");
    proto::CatalogEntry e;
    e.name = name;
    e.size = size;
    e.movie = size ? describe(movie_mr.get()) : proto::RegionDescriptor{};
    e.movie.length = size;
    e.index = describe(index_mr.get());
    e.mime_type = "application/octet-stream";
    proto::Catalog catalog{1, {e}, 0, {}};
    catalog_bytes = proto::encode_catalog(catalog);
    catalog_region = std::make_unique<Region>(catalog_bytes.size());
    std::memcpy(catalog_region->data, catalog_bytes.data(), catalog_bytes.size());
    catalog_mr = rdma::register_memory(pd.get(), catalog_region->data, catalog_bytes.size(), IBV_ACCESS_REMOTE_READ, "catalog");
    accept_data = {1, 0, 0, limits.max_msg_size, e.movie, describe(catalog_mr.get()), e.index, {}, 0};
    std::fprintf(stderr, "INFO device %s: max_qp_rd_atom %u, max_msg_size %u, mtu %u\n", limits.name.c_str(), limits.max_qp_rd_atom,
                 limits.max_msg_size, limits.active_mtu_bytes);
  };

  auto refuse = [](rdma_cm_id* id, proto::RejectCode code, const std::string& reason) {
    const auto data = proto::encode(proto::RejectData{code, proto::kMinProtocolVersion, proto::kProtocolVersion, reason});
    std::fprintf(stderr, "INFO reject: %s: %s\n", proto::to_string(code), reason.c_str());
    if (int err = rdma::reject(id, data)) std::fprintf(stderr, "WARN rdma_reject: %s\n", std::strerror(err));
  };

  while (!g_stop) {
    auto event = listener.events().next(std::chrono::milliseconds(200));
    if (!event) continue;
    rdma_cm_id* id = event->id();
    switch (event->type()) {
      case RDMA_CM_EVENT_CONNECT_REQUEST: {
        rdma::CmIdHandle owned(id);  // the new id is ours from here on
        auto request = proto::decode_connect_request(event->private_data());
        if (!request) {
          refuse(id, proto::reject_code_for(request.error()), request.error().message);
          event.reset();
          break;  // `owned` destroys the id after the event is acknowledged
        }
        if (request->kind == proto::RequestKind::movie && request->selector != proto::name_hash(name)) {
          refuse(id, proto::RejectCode::unknown_movie, "no movie with that name; this server has '" + name + "'");
          event.reset();
          break;
        }
        if (!pd) setup_device(id->verbs, id->port_num);
        if (id->verbs != pd->context) {
          refuse(id, proto::RejectCode::internal_error, "connection arrived on a second device");
          event.reset();
          break;
        }
        ibv_qp_init_attr attr{};
        attr.send_cq = cq.get();
        attr.recv_cq = cq.get();
        attr.qp_type = IBV_QPT_RC;
        attr.cap = {1, 1, 1, 1, 0};
        Connection c{std::move(owned), rdma::QueuePair(id, pd.get(), attr)};
        proto::AcceptData a = accept_data;
        a.granted_read_depth = rdma::server_responder_resources(limits, event->conn().responder_resources);
        if (request->kind == proto::RequestKind::catalog_only) {
          a.movie_index = proto::kNoMovie;
          a.movie = a.index = {};
        }
        rdma::accept(id, proto::encode(a), static_cast<std::uint8_t>(a.granted_read_depth));
        std::fprintf(stderr, "INFO accept: read depth %u (peer asked %u)\n", a.granted_read_depth, event->conn().responder_resources);
        connections.emplace(id, std::move(c));
        break;
      }
      case RDMA_CM_EVENT_ESTABLISHED: std::fprintf(stderr, "INFO established\n"); break;
      case RDMA_CM_EVENT_DISCONNECTED:
      case RDMA_CM_EVENT_TIMEWAIT_EXIT:
      case RDMA_CM_EVENT_CONNECT_ERROR:
      case RDMA_CM_EVENT_UNREACHABLE:
        std::fprintf(stderr, "INFO %s\n", event->type_name());
        event.reset();  // acknowledge before destroying the id
        connections.erase(id);
        break;
      default: std::fprintf(stderr, "INFO event %s\n", event->type_name()); break;
    }
  }
  std::fprintf(stderr, "INFO stopping with %zu connections\n", connections.size());
  connections.clear();
  return 0;
}

// Prints a decoded reject and returns 3, the exit status the test script expects for rejects.
int report_reject(const rdma::ConnectRejected& r) {
  auto reject = proto::decode_reject(r.private_data());
  if (!reject) throw std::runtime_error(std::string(r.what()) + "; reject data: " + reject.error().message);
  std::printf("rejected: reject code %u (%s): %s\n", static_cast<unsigned>(reject->code), proto::to_string(reject->code),
              reject->reason.c_str());
  return 3;
}

// Reads a whole remote region through libvodclient's ReadEngine, the pipeline every client uses
// (chunked Reads, at most the negotiated depth in flight, completions waited for on the channel),
// and hands it to `sink` piece by piece.
template <class Sink>
void read_region(client::ReadEngine& engine, client::Region r, const proto::RegionDescriptor& remote, Sink sink) {
  engine.set_region(r, remote);
  std::vector<std::uint8_t> piece(4u << 20);
  for (std::uint64_t at = 0; at < remote.length;) {
    const std::size_t n = engine.read(r, at, piece);
    sink(at, piece.data(), n);
    at += n;
  }
}

int fetch(const std::string& host, std::uint16_t port, const std::string& name, const std::string& out, std::size_t chunk, unsigned depth) {
  proto::ConnectRequest request{
      proto::RequestKind::movie, proto::SelectorType::name_hash, proto::name_hash(name), 0, 0, proto::AuthType::none, {}};
  client::EngineOptions engine_options;
  engine_options.chunk_size = chunk;
  engine_options.read_depth = depth;
  engine_options.readahead_bytes = 0;
  rdma::CompletionHub hub;                    // first: outlives the engine and the endpoint's QP
  client::ReadEngine engine(engine_options);  // before the endpoint: its ring outlives the MR
  std::unique_ptr<rdma::ClientEndpoint> ep;
  try {
    rdma::ConnectOptions o;
    o.host = host;
    o.port = port;
    o.private_data = proto::encode(request);
    o.wanted_read_depth = depth;
    o.send_queue_depth = depth + 4;
    o.timeout = std::chrono::milliseconds(10000);
    o.hub = &hub;
    ep = rdma::connect(o);
  } catch (const rdma::ConnectRejected& r) {
    return report_reject(r);
  }
  auto accept = proto::decode_accept(ep->accept_data);
  if (!accept) throw std::runtime_error("accept private data: " + accept.error().message);
  const unsigned effective_depth = std::min<unsigned>({depth, ep->initiator_depth, accept->granted_read_depth});
  engine.attach(*ep, effective_depth, std::min<std::size_t>(accept->max_message_size, ep->limits.max_msg_size));
  chunk = engine.chunk_size();
  std::fprintf(stderr, "INFO accepted: generation %u, movie %llu bytes rkey 0x%x, depth %u (asked %u, granted %u), chunk %zu\n",
               accept->catalog_generation, static_cast<unsigned long long>(accept->movie.length), accept->movie.rkey, effective_depth,
               ep->initiator_depth, accept->granted_read_depth, chunk);

  std::vector<std::uint8_t> catalog_bytes(accept->catalog.length);
  read_region(engine, client::Region::catalog, accept->catalog,
              [&](std::uint64_t off, const std::uint8_t* p, std::size_t n) { std::memcpy(catalog_bytes.data() + off, p, n); });
  auto catalog = proto::decode_catalog(catalog_bytes);
  if (!catalog) throw std::runtime_error("catalog region: " + catalog.error().message);
  const proto::CatalogEntry* entry = catalog->find(name);
  if (!entry || entry->movie != accept->movie) throw std::runtime_error("the catalog does not list '" + name + "' as accepted");

  const int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("open " + out + ": " + std::strerror(errno));
  const auto start = std::chrono::steady_clock::now();
  read_region(engine, client::Region::movie, accept->movie, [&](std::uint64_t off, const std::uint8_t* p, std::size_t n) {
    if (pwrite(fd, p, n, static_cast<off_t>(off)) != static_cast<ssize_t>(n)) throw std::runtime_error("write " + out + " failed");
  });
  close(fd);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("fetched %llu bytes in %.3f s (%.1f MB/s) with %u reads of %zu bytes in flight\n",
              static_cast<unsigned long long>(accept->movie.length), s, accept->movie.length / 1e6 / std::max(s, 1e-9), effective_depth,
              chunk);
  return 0;
}

// A hostile reader: for each region the accept describes (movie, catalog, keyframe index), a
// connection of its own reads 4 KiB starting 100 bytes before the advertised end. The device must
// refuse every one (a remote access error on that QP). Exit 0 when all were refused, 1 when any
// read returned bytes past an advertised end.
int cross(const std::string& host, std::uint16_t port, const std::string& name, const std::string& token_hex) {
  proto::ConnectRequest request{
      proto::RequestKind::movie, proto::SelectorType::name_hash, proto::name_hash(name), 0, 0, proto::AuthType::none, {}};
  if (!token_hex.empty()) {
    const auto token = proto::parse_token_text(token_hex);
    if (!token) throw std::runtime_error("--token is not 64 hex digits");
    request.auth_type = proto::AuthType::token_v1;
    request.auth_token = *token;
  }
  int crossed = 0;
  for (const auto region : {client::Region::movie, client::Region::catalog, client::Region::index}) {
    const char* what = region == client::Region::movie ? "movie" : region == client::Region::catalog ? "catalog" : "index";
    client::EngineOptions engine_options;
    engine_options.readahead_bytes = 0;
    rdma::CompletionHub hub;
    client::ReadEngine engine(engine_options);
    rdma::ConnectOptions o;
    o.host = host;
    o.port = port;
    o.private_data = proto::encode(request);
    o.wanted_read_depth = 1;
    o.send_queue_depth = 4;
    o.timeout = std::chrono::milliseconds(10000);
    o.hub = &hub;
    std::unique_ptr<rdma::ClientEndpoint> ep;
    try {
      ep = rdma::connect(o);
    } catch (const rdma::ConnectRejected& r) {
      return report_reject(r);
    }
    auto accept = proto::decode_accept(ep->accept_data);
    if (!accept) throw std::runtime_error("accept private data: " + accept.error().message);
    engine.attach(*ep, 1, std::min<std::size_t>(accept->max_message_size, ep->limits.max_msg_size));
    proto::RegionDescriptor d = region == client::Region::movie     ? accept->movie
                                : region == client::Region::catalog ? accept->catalog
                                                                    : accept->index;
    if (d.length < 100)
      throw std::runtime_error(std::string(what) + " region of " + std::to_string(d.length) + " bytes: too short to test");
    const std::uint64_t advertised = d.length;
    d.length += 8192;  // what a hostile client claims; the device knows better
    engine.set_region(region, d);
    std::vector<std::uint8_t> buf(4096);
    try {
      const std::size_t n = engine.read(region, advertised - 100, buf);
      std::printf("CROSSED: %s: a read of 4096 bytes at %llu (100 before the advertised end) returned %zu bytes\n", what,
                  static_cast<unsigned long long>(advertised - 100), n);
      ++crossed;
    } catch (const std::exception& e) {
      std::printf("refused: %s: a read crossing the advertised end (%llu bytes) failed: %s\n", what,
                  static_cast<unsigned long long>(advertised), e.what());
    }
  }
  return crossed ? 1 : 0;
}

int raw_once(const std::string& host, std::uint16_t port, const std::vector<std::uint8_t>& bytes) {
  rdma::CompletionHub hub;
  rdma::ConnectOptions o;
  o.host = host;
  o.port = port;
  o.private_data = bytes;
  o.wanted_read_depth = 1;
  o.send_queue_depth = 4;
  o.timeout = std::chrono::milliseconds(10000);
  o.hub = &hub;
  try {
    auto ep = rdma::connect(o);
    std::printf("accepted\n");
    return 0;
  } catch (const rdma::ConnectRejected& r) {
    return report_reject(r);
  }
}

// `times` connects at once, each from a thread of its own released together: one process, so a
// flood reaches the server within milliseconds even where starting a process takes a second (TCG).
int raw(const std::string& host, std::uint16_t port, const std::string& hex, unsigned times) {
  std::vector<std::uint8_t> bytes;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) bytes.push_back(static_cast<std::uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  if (times <= 1) return raw_once(host, port, bytes);
  std::latch go(times);
  std::vector<int> results(times, 0);
  std::vector<std::jthread> threads;
  for (unsigned i = 0; i < times; ++i)
    threads.emplace_back([&, i] {
      go.arrive_and_wait();
      try {
        results[i] = raw_once(host, port, bytes);
      } catch (const std::exception& e) {
        std::printf("error: %s\n", e.what());
        results[i] = 1;
      }
      std::fflush(stdout);
    });
  threads.clear();  // joins
  return *std::max_element(results.begin(), results.end());
}

}  // namespace

int main(int argc, char** argv) {
  po::options_description opts("smoke_peer options");
  std::string mode, file, bind, host, name, out, hex, token;
  unsigned port = 0, depth = 16, times = 1;
  std::size_t chunk = 65536;
  opts.add_options()("help,h", "show this help")("mode", po::value(&mode)->required(), "serve | fetch | raw | cross")(
      "file", po::value(&file), "file to serve")("bind", po::value(&bind)->default_value(""), "address to listen on")(
      "port", po::value(&port)->default_value(0), "port (serve: 0 picks one)")("host", po::value(&host), "server address")(
      "name", po::value(&name), "movie name to fetch")("out", po::value(&out), "output file")(
      "chunk", po::value(&chunk)->default_value(65536), "bytes per RDMA Read")(
      "depth", po::value(&depth)->default_value(16), "RDMA Reads in flight")("hex", po::value(&hex), "raw private data, hex")(
      "token", po::value(&token), "cross: an access token (64 hex digits)")("times", po::value(&times)->default_value(1),
                                                                            "raw: connect this many times at once (a thread each)");
  po::positional_options_description pos;
  pos.add("mode", 1);
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(opts).positional(pos).run(), vm);
    if (vm.count("help")) {
      std::cout << opts << "\n";
      return 0;
    }
    po::notify(vm);
    std::signal(SIGTERM, [](int) { g_stop = 1; });
    std::signal(SIGINT, [](int) { g_stop = 1; });
    if (mode == "serve") return serve(file, bind, static_cast<std::uint16_t>(port));
    if (mode == "fetch") return fetch(host, static_cast<std::uint16_t>(port), name, out, chunk, depth);
    if (mode == "raw") return raw(host, static_cast<std::uint16_t>(port), hex, times);
    if (mode == "cross") return cross(host, static_cast<std::uint16_t>(port), name, token);
    std::cerr << "smoke_peer: unknown mode '" << mode << "'\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "smoke_peer: error: " << e.what() << "\n";
    return 1;
  }
}
