// SPDX-License-Identifier: LGPL-2.1-or-later
// segment_prober: a raw client of a vod-server with a segment cache (tests/rdma/vod_cache_test.sh).
// It speaks the segment messages with verbs of its own, not through libvodclient, so the server's
// answers to hostile messages, and what the device lets it read, are seen as they are on the wire:
//
//   segment_prober --host H --port P --name MOVIE --file F
//
//   garbage       24 bytes that are no message: no answer, and the connection still works
//   ahead         a request whose read-ahead is beyond the protocol's 64: no answer (dropped)
//   unknown       a request for catalog entry 999999: answered "not a cached movie"
//   range         a request for segment 2^24: answered "no such segment"
//   valid         a request for segment 0: answered with its entry and an rkey; 4 KiB Read from the
//                 slot it names with that rkey are the movie's first 4 KiB
//
// With tokens (a server run with --auth-secret: memory windows over the slots a connection asked for):
//
//   segment_prober --host H --port P --name A --file FA --token TA --other B --other-file FB
//                  --other-token TB --mr-rkey HEX
//
//   no-arena-rkey the accept gives the arena no rkey
//   own           A's segment 0 through the window its answer names: byte-exact
//   other-movie   a request on A's connection for B's segment 0: answered "refused"
//   stolen        B's window rkey for its slot, used on A's connection: refused by the device, and
//                 B's connection reads on
//   refilled      A's window over the slot its segment 0 was in, kept while B's segments are faulted
//                 in until one lands in that slot: refused, never B's bytes
//   elsewhere     A's window rkey at the address of B's slot: refused
//   mr-rkey       the arena's own key (--mr-rkey, as if leaked from the server's log): refused
//   beyond        4 KiB from 100 bytes before the end of a segment's window: refused
// Abuse by a client that speaks the protocol (--attack):
//
//   segment_prober --host H --port P --name MOVIE --file F --attack flood
//                 more requests than the table's credits, none waited for and no answer taken:
//                 the server cuts the connection off (a protocol violation) instead of queueing
//                 answers without bound or dropping them
//   segment_prober --host H --port P --name MOVIE --file F --attack pin --seconds S
//                 within its credits, asks for as many of MOVIE's segments as the cache has slots,
//                 again and again for S seconds, so its grace would cover every slot; prints
//                 "pinning" after the first round (other viewers' faults must still find slots)
// Exit 0 when every probe behaved as expected, 1 otherwise.
#include <endian.h>
#include <boost/program_options.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <thread>
#include <vector>

#include "vod/protocol/access_token.hpp"
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
  std::uint32_t sends_done = 0;
  std::string failure;

  std::uint8_t* recv_at(std::uint32_t i) { return memory.data() + i * kSlot; }
  std::uint8_t* send_at() { return memory.data() + kRecvs * kSlot; }
  std::uint8_t* read_at() { return memory.data() + (kRecvs + 1) * kSlot; }

  void connect(const std::string& host, std::uint16_t port, const std::string& name, const std::string& token = {}) {
    proto::ConnectRequest r;
    r.kind = proto::RequestKind::movie;
    r.selector_type = proto::SelectorType::name_hash;
    r.selector = proto::name_hash(name);
    if (!token.empty()) {
      const auto parsed = proto::parse_token_text(token);
      if (!parsed) throw std::runtime_error("a token is not 64 hex digits");
      r.auth_type = proto::AuthType::token_v1;
      r.auth_token = *parsed;
    }
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
      if (id.kind == kSend) ++sends_done;
      if (wc.status != IBV_WC_SUCCESS && failure.empty()) failure = ibv_wc_status_str(wc.status);
    });
    for (std::uint32_t i = 0; i < kRecvs; ++i)
      if (rdma::post_recv(ep->qp.get(), rdma::WorkId{owner, kRecv, i}.pack(), recv_at(i), kSlot, mr->lkey))
        throw std::runtime_error("ibv_post_recv");
  }

  void send(const std::vector<std::uint8_t>& bytes) {
    std::memcpy(send_at(), bytes.data(), bytes.size());
    if (int err = rdma::post_send(ep->qp.get(), rdma::WorkId{owner, kSend, 0}.pack(), send_at(), static_cast<std::uint32_t>(bytes.size()),
                                  mr->lkey))
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

std::vector<std::uint8_t> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<std::uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A request's answer within 5 s, or a decode error saying there was none.
proto::Decoded<proto::SegmentNotify> ask(Prober& p, const proto::SegmentRequest& r) {
  p.send(proto::encode(r));
  for (;;) {
    auto m = p.next(std::chrono::milliseconds(5000));
    if (!m) return proto::DecodeError{proto::DecodeFault::truncated, "no answer"};
    auto n = proto::decode_segment_notify(*m);
    if (!n || n->request_id == r.request_id) return n;  // an older request's answer is skipped
  }
}

proto::SegmentTableHeader read_header(Prober& p) {
  if (p.read(p.accept.segments.addr, p.accept.segments.rkey, 64) != IBV_WC_SUCCESS)
    throw std::runtime_error("the table's header did not read");
  auto header = proto::decode_segment_table_header(std::span(p.read_at(), 64), p.accept.segments.length);
  if (!header) throw std::runtime_error("segment table: " + header.error().message);
  return *header;
}

void probe_messages(const std::string& host, std::uint16_t port, const std::string& name, const std::vector<std::uint8_t>& movie) {
  Prober p;
  p.connect(host, port, name);
  const auto header = read_header(p);
  p.send(std::vector<std::uint8_t>(24, 0xee));
  report(!p.next(std::chrono::milliseconds(1000)), "garbage: no answer");
  auto ahead = proto::encode(proto::SegmentRequest{p.accept.movie_index, 0, 0, 1});
  ahead[16] = 0;
  ahead[17] = 65;
  p.send(ahead);
  report(!p.next(std::chrono::milliseconds(1000)), "read-ahead of 65: dropped, no answer");
  auto expect_status = [&](proto::SegmentRequest r, proto::SegmentStatus want, const std::string& what) {
    auto n = ask(p, r);
    report(n && n->status == want && n->request_id == r.request_id, what + ": " + (n ? proto::to_string(n->status) : n.error().message));
    return n;
  };
  (void)expect_status({999999, 0, 0, 2}, proto::SegmentStatus::unknown_movie, "catalog entry 999999");
  (void)expect_status({p.accept.movie_index, 1u << 24, 0, 3}, proto::SegmentStatus::out_of_range, "segment 2^24");
  auto ok = expect_status({p.accept.movie_index, 0, 0, 4}, proto::SegmentStatus::ok, "segment 0");
  if (ok && ok->status == proto::SegmentStatus::ok) {
    const std::uint64_t slot = ok->entry & proto::kMaxSlot;
    const std::uint32_t n = static_cast<std::uint32_t>(std::min<std::size_t>(4096, movie.size()));
    const bool read = p.read(p.accept.movie.addr + slot * header.segment_size, ok->rkey, n) == IBV_WC_SUCCESS;
    report(read && std::memcmp(p.read_at(), movie.data(), n) == 0,
           "the slot segment 0 is in holds the movie's first " + std::to_string(n) + " bytes");
  }
  if (!p.failure.empty()) report(false, "a work request failed: " + p.failure);
}

struct Movie {
  std::string name, token;
  std::vector<std::uint8_t> bytes;
};

// A connection for `m` that asked for `segment`: its answer (ok, or the probe fails and throws).
proto::SegmentNotify granted(Prober& p, const std::string& host, std::uint16_t port, const Movie& m, std::uint32_t segment,
                             std::uint32_t id) {
  if (!p.ep) p.connect(host, port, m.name, m.token);
  auto n = ask(p, {p.accept.movie_index, segment, 0, id});
  if (!n || n->status != proto::SegmentStatus::ok)
    throw std::runtime_error(m.name + " segment " + std::to_string(segment) + ": " + (n ? proto::to_string(n->status) : n.error().message));
  return *n;
}

// Reads `length` bytes at `offset` of the slot `n` names, with `rkey`: the device's verdict, and
// whether the bytes are `expect`'s at `at`.
std::pair<bool, bool> read_slot(Prober& p, const proto::SegmentTableHeader& h, const proto::SegmentNotify& n, std::uint32_t rkey,
                                std::uint64_t offset, std::uint32_t length, const std::vector<std::uint8_t>& expect, std::uint64_t at) {
  const std::uint64_t slot = n.entry & proto::kMaxSlot;
  const bool read = p.read(p.accept.movie.addr + slot * h.segment_size + offset, rkey, length) == IBV_WC_SUCCESS;
  const bool same = read && at + length <= expect.size() && std::memcmp(p.read_at(), expect.data() + at, length) == 0;
  return {read, same};
}

void probe_windows(const std::string& host, std::uint16_t port, const Movie& a, const Movie& b, std::uint32_t mr_rkey) {
  Prober pa, pb;
  const auto na = granted(pa, host, port, a, 0, 1);
  const auto h = read_header(pa);
  report(pa.accept.movie.rkey == 0 && pa.accept.movie.length == h.arena_length, "the accept gives the arena no rkey");
  report(read_slot(pa, h, na, na.rkey, 0, 4096, a.bytes, 0).second, "own: A's segment 0 through its window, byte-exact");
  const auto nb = granted(pb, host, port, b, 0, 1);
  auto other = ask(pa, {pb.accept.movie_index, 0, 0, 2});
  report(other && other->status == proto::SegmentStatus::refused,
         std::string("other-movie: B's segment on A's connection: ") + (other ? proto::to_string(other->status) : other.error().message));
  report(read_slot(pb, h, nb, nb.rkey, 0, 4096, b.bytes, 0).second, "B's segment 0 through B's window, byte-exact");
  report(!read_slot(pa, h, nb, nb.rkey, 0, 4096, b.bytes, 0).first, "stolen: B's window rkey on A's connection: refused");
  report(read_slot(pb, h, nb, nb.rkey, 0, 4096, b.bytes, 0).second, "stolen: B's connection reads on");

  // refilled: a window over a slot outlives nothing that slot held.
  Prober pa2;
  const auto kept = granted(pa2, host, port, a, 0, 1);
  const std::uint32_t slot = kept.entry & proto::kMaxSlot;
  report(read_slot(pa2, h, kept, kept.rkey, 0, 4096, a.bytes, 0).second, "refilled: A's segment 0 read in slot " + std::to_string(slot));
  const std::uint32_t segments = static_cast<std::uint32_t>((b.bytes.size() + h.segment_size - 1) / h.segment_size);
  std::optional<proto::SegmentNotify> landed;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (std::uint32_t i = 1, id = 10; !landed && std::chrono::steady_clock::now() < until; ++i, ++id) {
    const auto n = granted(pb, host, port, b, i % segments, id);
    if ((n.entry & proto::kMaxSlot) == slot && n.segment != 0) landed = n;
  }
  if (!landed) return report(false, "refilled: none of B's segments landed in slot " + std::to_string(slot) + " within 60 s");
  const std::uint64_t at = std::uint64_t{landed->segment} * h.segment_size;
  const auto [read, bs] = read_slot(pa2, h, kept, kept.rkey, 0, 4096, b.bytes, at);
  report(!read, "refilled: slot " + std::to_string(slot) + " now holds B's segment " + std::to_string(landed->segment) +
                    "; A's old window rkey on A's connection: " + (read ? (bs ? "read B's bytes" : "read") : "refused"));
  report(read_slot(pb, h, *landed, landed->rkey, 0, 4096, b.bytes, at).second, "refilled: B reads its segment there");

  // elsewhere: its own window's rkey, at the address of B's slot (the window covers A's slot alone).
  Prober pa5;
  const auto n5 = granted(pa5, host, port, a, 0, 1);
  const auto nb5 = granted(pb, host, port, b, 0, 99);
  if ((nb5.entry & proto::kMaxSlot) == (n5.entry & proto::kMaxSlot)) return report(false, "elsewhere: A and B in one slot");
  proto::SegmentNotify at_b = nb5;
  report(!read_slot(pa5, h, at_b, n5.rkey, 0, 4096, b.bytes, 0).first, "elsewhere: A's window rkey at B's slot: refused");

  Prober pa3;
  const auto n3 = granted(pa3, host, port, a, 0, 1);
  report(!read_slot(pa3, h, n3, mr_rkey, 0, 4096, a.bytes, 0).first, "mr-rkey: the arena's own key: refused");
  Prober pa4;
  const auto n4 = granted(pa4, host, port, a, 0, 1);
  report(!read_slot(pa4, h, n4, n4.rkey, h.segment_size - 100, 4096, a.bytes, h.segment_size - 100).first,
         "beyond: 4 KiB across the end of the segment's window: refused");
}

void attack_flood(const std::string& host, std::uint16_t port, const std::string& name) {
  Prober p;
  p.connect(host, port, name);
  const auto header = read_header(p);
  // It takes none of the answers either (its receives stay full), so the server's notifications
  // stall and its answers queue: past 2 × credits posted and credits queued, a request is one too many.
  const std::uint32_t credits = header.request_credits, total = 4 * credits;
  bool cut_off = false;
  std::uint32_t sent = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  // One request at a time on the wire (one send buffer), none waited for: its answers pile up.
  while (!cut_off && std::chrono::steady_clock::now() < until) {
    if (sent < total && p.sends_done == sent && p.failure.empty()) {
      p.send(proto::encode(proto::SegmentRequest{p.accept.movie_index, sent % 2, 0, sent + 1}));
      ++sent;
    }
    p.hub.poll();
    if (auto e = p.ep->events.next(std::chrono::milliseconds(1))) cut_off = e->type() == RDMA_CM_EVENT_DISCONNECTED;
  }
  report(cut_off && sent > credits, "flood: " + std::to_string(sent) + " requests sent without waiting (credits " +
                                        std::to_string(credits) +
                                        "): " + (cut_off ? "the server cut the connection off" : "still connected after 20 s"));
}

void attack_pin(const std::string& host, std::uint16_t port, const std::string& name, unsigned seconds) {
  Prober p;
  p.connect(host, port, name);
  const auto header = read_header(p);
  const std::uint32_t slots = static_cast<std::uint32_t>(header.arena_length / header.segment_size);
  const std::uint32_t count = std::min(slots, header.segment_count);
  std::uint32_t id = 1, rounds = 0, answered = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < until && p.failure.empty()) {
    for (std::uint32_t s = 0; s < count && std::chrono::steady_clock::now() < until; ++s) {
      auto n = ask(p, {p.accept.movie_index, s, 0, id++});  // within its credits: one at a time
      answered += n && n->status == proto::SegmentStatus::ok;
    }
    if (rounds++ == 0) {
      std::printf("pinning %u segments of %u slots\n", count, slots);
      std::fflush(stdout);
    }
  }
  report(p.failure.empty(), "pin: " + std::to_string(rounds) + " rounds over " + std::to_string(count) + " segments, " +
                                std::to_string(answered) + " answered ok; its connection " +
                                (p.failure.empty() ? "stayed up (it kept its credits)" : "failed: " + p.failure));
}

}  // namespace

int main(int argc, char** argv) {
  std::string host, name, file, token, other, other_file, other_token, mr_rkey = "0", attack;
  unsigned port = 0, seconds = 10;
  po::options_description opts("segment_prober");
  opts.add_options()("host", po::value(&host)->required(), "server address")("port", po::value(&port)->required(), "rdma_cm port")(
      "name", po::value(&name)->required(), "a cached movie")("file", po::value(&file)->required(), "its bytes, to compare reads with")(
      "token", po::value(&token), "with tokens: a token for --name")("other", po::value(&other), "with tokens: another cached movie")(
      "other-file", po::value(&other_file), "its bytes")("other-token", po::value(&other_token), "a token for it alone")(
      "mr-rkey", po::value(&mr_rkey), "the arena's key, hex, as the server logs it")("attack", po::value(&attack), "flood or pin")(
      "seconds", po::value(&seconds), "pin: for how long");
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, opts), vm);
  po::notify(vm);
  try {
    if (attack == "flood") {
      attack_flood(host, static_cast<std::uint16_t>(port), name);
    } else if (attack == "pin") {
      attack_pin(host, static_cast<std::uint16_t>(port), name, seconds);
    } else if (!attack.empty()) {
      throw std::runtime_error("--attack is flood or pin");
    } else if (token.empty()) {
      probe_messages(host, static_cast<std::uint16_t>(port), name, slurp(file));
    } else {
      if (other.empty() || other_token.empty() || other_file.empty())
        throw std::runtime_error("--token needs --other, --other-file and --other-token");
      probe_windows(host, static_cast<std::uint16_t>(port), {name, token, slurp(file)}, {other, other_token, slurp(other_file)},
                    static_cast<std::uint32_t>(std::stoul(mr_rkey, nullptr, 16)));
    }
  } catch (const std::exception& e) {
    std::printf("FAILED: %s\n", e.what());
    return 1;
  }
  return failures ? 1 : 0;
}
