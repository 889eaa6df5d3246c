// SPDX-License-Identifier: LGPL-2.1-or-later
// segment_prober: a raw client of a vod-server with a segment cache (tests/rdma/vod_cache_test.sh).
// It speaks the segment messages with verbs of its own, not through libvodclient, so the server's
// answers to hostile messages are seen as they are on the wire:
//
//   segment_prober --host H --port P --name MOVIE --file F
//
//   garbage       24 bytes that are no message: no answer, and the connection still works
//   ahead         a request whose read-ahead is beyond the protocol's 64: no answer (dropped)
//   unknown       a request for catalog entry 999999: answered "not a cached movie"
//   range         a request for segment 2^24: answered "no such segment"
//   valid         a request for segment 0: answered with its entry and an rkey; 4 KiB Read from the
//                 slot it names with that rkey are the movie's first 4 KiB
// Exit 0 when every probe behaved as expected, 1 otherwise.
#include <boost/program_options.hpp>
#include <endian.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <thread>
#include <vector>

#include "vod/protocol/name_hash.hpp"
#include "vod/protocol/private_data.hpp"
#include "vod/protocol/segment_table.hpp"
#include "vod/rdma/completion_hub.hpp"
#include "vod/rdma/connection.hpp"
#include "vod/rdma/post.hpp"

namespace po = boost::program_options;
using namespace vod;

namespace {

constexpr std::uint32_t kRecvs = 4;
constexpr std::size_t kSlot = proto::kSegmentMessageMax;
constexpr std::uint8_t kRecv = 1, kSend = 2, kRead = 3;

struct Prober {
  rdma::CompletionHub hub;
  std::unique_ptr<rdma::ClientEndpoint> ep;
  proto::AcceptData accept;
  std::vector<std::uint8_t> memory = std::vector<std::uint8_t>(kRecvs * kSlot + kSlot + 8192);
  ibv_mr* mr = nullptr;
  std::uint32_t owner = 0;
  std::vector<std::uint32_t> arrived;  // receive slots with a message
  std::optional<ibv_wc_status> read_status;
  std::string failure;

  std::uint8_t* recv_at(std::uint32_t i) { return memory.data() + i * kSlot; }
  std::uint8_t* send_at() { return memory.data() + kRecvs * kSlot; }
  std::uint8_t* read_at() { return memory.data() + (kRecvs + 1) * kSlot; }

  void connect(const std::string& host, std::uint16_t port, const std::string& name) {
    proto::ConnectRequest r;
    r.kind = proto::RequestKind::movie;
    r.selector_type = proto::SelectorType::name_hash;
    r.selector = proto::name_hash(name);
    rdma::ConnectOptions o;
    o.host = host;
    o.port = port;
    o.private_data = proto::encode(r);
    o.wanted_read_depth = 1;
    o.send_queue_depth = 8;
    o.recv_queue_depth = kRecvs;
    o.timeout = std::chrono::milliseconds(10000);
    o.hub = &hub;
    ep = rdma::connect(o);
    auto a = proto::decode_accept(ep->accept_data);
    if (!a) throw std::runtime_error("accept: " + a.error().message);
    if (a->segments.empty()) throw std::runtime_error("the accept describes no segment table: is the server run with --cache-size?");
    accept = *a;
    ep->memory.push_back(rdma::register_memory(ep->pd.get(), memory.data(), memory.size(), rdma::read_sink_access(ep->limits), "prober"));
    mr = ep->memory.back().get();
    owner = hub.add_owner([this](const ibv_wc& wc, rdma::WorkId id) {
      if (id.kind == kRecv && wc.status == IBV_WC_SUCCESS) arrived.push_back(id.index);
      if (id.kind == kRead) read_status = wc.status;
      if (wc.status != IBV_WC_SUCCESS && failure.empty()) failure = ibv_wc_status_str(wc.status);
    });
    for (std::uint32_t i = 0; i < kRecvs; ++i)
      if (rdma::post_recv(ep->qp.get(), rdma::WorkId{owner, kRecv, i}.pack(), recv_at(i), kSlot, mr->lkey)) throw std::runtime_error("ibv_post_recv");
  }

  void send(const std::vector<std::uint8_t>& bytes) {
    std::memcpy(send_at(), bytes.data(), bytes.size());
    if (int err = rdma::post_send(ep->qp.get(), rdma::WorkId{owner, kSend, 0}.pack(), send_at(), static_cast<std::uint32_t>(bytes.size()), mr->lkey))
      throw std::runtime_error(std::string("ibv_post_send: ") + std::strerror(err));
  }

  // The next message within `wait`, or nullopt.
  std::optional<std::vector<std::uint8_t>> next(std::chrono::milliseconds wait) {
    const auto until = std::chrono::steady_clock::now() + wait;
    while (arrived.empty() && std::chrono::steady_clock::now() < until) {
      hub.poll();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (arrived.empty()) return std::nullopt;
    const std::uint32_t i = arrived.front();
    arrived.erase(arrived.begin());
    std::vector<std::uint8_t> out(recv_at(i), recv_at(i) + kSlot);
    rdma::post_recv(ep->qp.get(), rdma::WorkId{owner, kRecv, i}.pack(), recv_at(i), kSlot, mr->lkey);
    return out;
  }

  // Reads `length` bytes at addr/rkey into the read area; the completion's status.
  ibv_wc_status read(std::uint64_t addr, std::uint32_t rkey, std::uint32_t length) {
    read_status.reset();
    if (rdma::post_read(ep->qp.get(), rdma::WorkId{owner, kRead, 0}.pack(), read_at(), length, mr->lkey, addr, rkey))
      throw std::runtime_error("ibv_post_send of a Read");
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!read_status && std::chrono::steady_clock::now() < until) hub.poll();
    return read_status.value_or(IBV_WC_GENERAL_ERR);
  }
};

int failures = 0;
void report(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what.c_str());
  failures += !ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::string host, name, file;
  unsigned port = 0;
  po::options_description opts("segment_prober");
  opts.add_options()("host", po::value(&host)->required(), "server address")("port", po::value(&port)->required(), "rdma_cm port")(
      "name", po::value(&name)->required(), "a cached movie")("file", po::value(&file)->required(), "its bytes, to compare reads with");
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, opts), vm);
  po::notify(vm);
  std::ifstream in(file, std::ios::binary);
  const std::vector<std::uint8_t> movie((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  try {
    Prober p;
    p.connect(host, static_cast<std::uint16_t>(port), name);
    if (p.read(p.accept.segments.addr, p.accept.segments.rkey, 64) != IBV_WC_SUCCESS) throw std::runtime_error("the table's header did not read");
    auto header = proto::decode_segment_table_header(std::span(p.read_at(), 64), p.accept.segments.length);
    if (!header) throw std::runtime_error("segment table: " + header.error().message);

    p.send(std::vector<std::uint8_t>(24, 0xee));
    report(!p.next(std::chrono::milliseconds(1000)), "garbage: no answer");
    auto ahead = proto::encode(proto::SegmentRequest{p.accept.movie_index, 0, 0, 1});
    ahead[16] = 0;
    ahead[17] = 65;
    p.send(ahead);
    report(!p.next(std::chrono::milliseconds(1000)), "read-ahead of 65: dropped, no answer");
    auto expect_status = [&](proto::SegmentRequest r, proto::SegmentStatus want, const std::string& what) {
      p.send(proto::encode(r));
      auto m = p.next(std::chrono::milliseconds(5000));
      auto n = m ? proto::decode_segment_notify(*m) : proto::Decoded<proto::SegmentNotify>(proto::DecodeError{proto::DecodeFault::truncated, "no answer"});
      report(n && n->status == want && n->request_id == r.request_id,
             what + ": " + (n ? proto::to_string(n->status) : n.error().message));
      return n;
    };
    (void)expect_status({999999, 0, 0, 2}, proto::SegmentStatus::unknown_movie, "catalog entry 999999");
    (void)expect_status({p.accept.movie_index, 1u << 24, 0, 3}, proto::SegmentStatus::out_of_range, "segment 2^24");
    auto ok = expect_status({p.accept.movie_index, 0, 0, 4}, proto::SegmentStatus::ok, "segment 0");
    if (ok && ok->status == proto::SegmentStatus::ok) {
      const std::uint64_t slot = ok->entry & proto::kMaxSlot;
      const std::uint32_t n = static_cast<std::uint32_t>(std::min<std::size_t>(4096, movie.size()));
      const bool read = p.read(p.accept.movie.addr + slot * header->segment_size, ok->rkey, n) == IBV_WC_SUCCESS;
      report(read && std::memcmp(p.read_at(), movie.data(), n) == 0, "the slot segment 0 is in holds the movie's first " + std::to_string(n) + " bytes");
    }
    if (!p.failure.empty()) report(false, "a work request failed: " + p.failure);
  } catch (const std::exception& e) {
    std::printf("FAILED: %s\n", e.what());
    return 1;
  }
  return failures ? 1 : 0;
}
