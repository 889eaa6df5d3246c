// SPDX-License-Identifier: LGPL-2.1-or-later
#include "fresh_open.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "vod/client/session.hpp"
#include "vod/client/stats.hpp"
#include "vod/protocol/name_hash.hpp"
#include "vod/protocol/private_data.hpp"
#include "vod/rdma/startup_trace.hpp"

extern char** environ;

namespace vod::bench {

namespace {

using Clock = std::chrono::steady_clock;
namespace trace = rdma::startup_trace;

std::uint64_t micros_since(Clock::time_point start) {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count());
}

[[noreturn]] void fail(const std::string& call, int err) { throw std::runtime_error(call + ": " + std::strerror(err)); }

// ---------------------------------------------------------------- the bare path

// Every object of the bare path, released in reverse order of creation; safe when half built.
struct BarePath {
  rdma_event_channel* channel = nullptr;
  rdma_cm_id* id = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  bool qp = false;
  std::vector<std::uint8_t> buffer = std::vector<std::uint8_t>(64 * 1024);
  ibv_mr* mr = nullptr;
  bool connected = false;

  BarePath() = default;
  BarePath(const BarePath&) = delete;
  BarePath& operator=(const BarePath&) = delete;
  ~BarePath() {
    if (connected) rdma_disconnect(id);
    if (qp) rdma_destroy_qp(id);
    if (mr) ibv_dereg_mr(mr);
    if (cq) ibv_destroy_cq(cq);
    if (pd) ibv_dealloc_pd(pd);
    if (id) rdma_destroy_id(id);
    if (channel) rdma_destroy_event_channel(channel);
  }
};

// Takes the next event of a blocking channel, which must be `want`; returns its private data.
std::vector<std::uint8_t> expect_event(rdma_event_channel* channel, rdma_cm_event_type want) {
  rdma_cm_event* e = nullptr;
  if (rdma_get_cm_event(channel, &e) != 0) fail("rdma_get_cm_event", errno);
  const rdma_cm_event_type got = e->event;
  const int status = e->status;
  std::vector<std::uint8_t> data;
  if (e->param.conn.private_data && e->param.conn.private_data_len)
    data.assign(static_cast<const std::uint8_t*>(e->param.conn.private_data),
                static_cast<const std::uint8_t*>(e->param.conn.private_data) + e->param.conn.private_data_len);
  rdma_ack_cm_event(e);
  if (got != want)
    throw std::runtime_error(std::string("waiting for ") + rdma_event_str(want) + ": got " + rdma_event_str(got) + " (status " +
                             std::to_string(status) + ")");
  return data;
}

sockaddr_storage server_address(const FreshOptions& o) {
  sockaddr_storage ss{};
  auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (inet_pton(AF_INET, o.host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(o.port);
  } else if (inet_pton(AF_INET6, o.host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(o.port);
  } else {
    throw std::runtime_error("--fresh's bare path takes a numeric --host, not '" + o.host + "'");
  }
  return ss;
}

std::uint64_t open_bare(const FreshOptions& o) {
  constexpr int kTimeoutMs = 5000;
  sockaddr_storage to = server_address(o);
  const auto request =
      proto::encode(proto::ConnectRequest{proto::RequestKind::movie, proto::SelectorType::name_hash, proto::name_hash(o.name)});
  trace::mark("open called (bare)");
  const auto start = Clock::now();
  BarePath b;
  b.channel = rdma_create_event_channel();
  if (!b.channel) fail("rdma_create_event_channel", errno);
  trace::mark("rdma_create_event_channel (librdmacm's init: the device list)");
  if (rdma_create_id(b.channel, &b.id, nullptr, RDMA_PS_TCP) != 0) fail("rdma_create_id", errno);
  trace::mark("rdma_create_id");
  if (rdma_resolve_addr(b.id, nullptr, reinterpret_cast<sockaddr*>(&to), kTimeoutMs) != 0) fail("rdma_resolve_addr", errno);
  trace::mark("rdma_resolve_addr returned");
  expect_event(b.channel, RDMA_CM_EVENT_ADDR_RESOLVED);
  trace::mark("event RDMA_CM_EVENT_ADDR_RESOLVED taken");
  if (rdma_resolve_route(b.id, kTimeoutMs) != 0) fail("rdma_resolve_route", errno);
  trace::mark("rdma_resolve_route returned");
  expect_event(b.channel, RDMA_CM_EVENT_ROUTE_RESOLVED);
  trace::mark("event RDMA_CM_EVENT_ROUTE_RESOLVED taken");
  b.pd = ibv_alloc_pd(b.id->verbs);
  if (!b.pd) fail("ibv_alloc_pd", errno);
  trace::mark("PD");
  b.cq = ibv_create_cq(b.id->verbs, 16, nullptr, nullptr, 0);
  if (!b.cq) fail("ibv_create_cq", errno);
  trace::mark("CQ");
  ibv_qp_init_attr attr{};
  attr.send_cq = b.cq;
  attr.recv_cq = b.cq;
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_wr = 4;
  attr.cap.max_recv_wr = 1;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  if (rdma_create_qp(b.id, b.pd, &attr) != 0) fail("rdma_create_qp", errno);
  b.qp = true;
  trace::mark("QP");
  b.mr = ibv_reg_mr(b.pd, b.buffer.data(), b.buffer.size(), IBV_ACCESS_LOCAL_WRITE);
  if (!b.mr) fail("ibv_reg_mr", errno);
  trace::mark("MR of 64 KiB");
  rdma_conn_param param{};
  param.private_data = request.data();
  param.private_data_len = static_cast<std::uint8_t>(request.size());
  param.initiator_depth = 1;
  param.retry_count = 7;
  param.rnr_retry_count = 7;
  if (rdma_connect(b.id, &param) != 0) fail("rdma_connect", errno);
  trace::mark("rdma_connect returned");
  const auto accept_data = expect_event(b.channel, RDMA_CM_EVENT_ESTABLISHED);
  trace::mark("event RDMA_CM_EVENT_ESTABLISHED taken");
  b.connected = true;
  const auto accept = proto::decode_accept(accept_data);
  if (!accept) throw std::runtime_error("the accept private data does not decode: " + accept.error().message);
  if (accept->movie.length < o.size || o.size > b.buffer.size())
    throw std::runtime_error("--size is larger than the movie or the 64 KiB buffer");
  ibv_sge sge{reinterpret_cast<std::uint64_t>(b.buffer.data()), o.size, b.mr->lkey};
  ibv_send_wr wr{};
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = accept->movie.addr;
  wr.wr.rdma.rkey = accept->movie.rkey;
  ibv_send_wr* bad = nullptr;
  if (int err = ibv_post_send(b.id->qp, &wr, &bad)) fail("ibv_post_send", err);
  trace::mark("the Read posted (ibv_post_send returned)");
  ibv_wc wc{};
  for (;;) {
    const int n = ibv_poll_cq(b.cq, 1, &wc);
    if (n < 0) fail("ibv_poll_cq", -n);
    if (n == 1) break;
    if (Clock::now() - start > std::chrono::seconds(10)) throw std::runtime_error("the Read did not complete within 10 s");
  }
  if (wc.status != IBV_WC_SUCCESS) throw std::runtime_error(std::string("the Read completed with ") + ibv_wc_status_str(wc.status));
  const std::uint64_t us = micros_since(start);
  trace::finish("the Read landed");
  return us;
}

// ---------------------------------------------------------------- the vod path

std::uint64_t open_vod(const FreshOptions& o) {
  client::Uri uri;
  uri.host = o.host;
  uri.port = o.port;
  uri.movie = o.name;
  std::vector<std::uint8_t> dest(o.size);
  trace::mark("open called (client::Session)");
  const auto start = Clock::now();
  client::Session session(uri);
  if (session.pread(0, dest) != dest.size()) throw std::runtime_error("pread returned short");
  const std::uint64_t us = micros_since(start);
  trace::mark("pread returned");
  return us;
}

// ---------------------------------------------------------------- the parent

struct ChildResult {
  std::uint64_t open_us = 0;  // what the child timed
  std::uint64_t exec_us = 0;  // from spawning it to its answer
};

ChildResult spawn_child(const FreshOptions& o, const std::string& path) {
  std::vector<std::string> args = {
      "read-latency", "--fresh-child",       path, "--host", o.host, "--port", std::to_string(o.port), "--name", o.name,
      "--size",       std::to_string(o.size)};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) fail("pipe2", errno);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  pid_t pid = 0;
  const auto start = Clock::now();
  const int err = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (err != 0) {
    close(out[0]);
    fail("posix_spawn /proc/self/exe", err);
  }
  std::string text;
  ChildResult r;
  char buf[512];
  for (;;) {
    const ssize_t n = read(out[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (r.exec_us == 0 && text.find('\n') != std::string::npos) r.exec_us = micros_since(start);
  }
  close(out[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) fail("waitpid", errno);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("the " + path + " child failed (wait status " + std::to_string(status) + "; its error is above)");
  const auto at = text.find("open_us=");
  if (at == std::string::npos) throw std::runtime_error("the " + path + " child printed no open_us: '" + text + "'");
  r.open_us = std::stoull(text.substr(at + 8));
  return r;
}

std::string ratio(std::uint64_t a, std::uint64_t b) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", b ? static_cast<double>(a) / static_cast<double>(b) : 0.0);
  return text;
}

}  // namespace

int run_fresh_child(const FreshOptions& o, const std::string& path) {
  std::uint64_t us = 0;
  if (path == "bare") us = open_bare(o);
  else if (path == "vod") us = open_vod(o);
  else throw std::invalid_argument("--fresh-child takes bare or vod, not '" + path + "'");
  std::printf("FRESH_CHILD path=%s open_us=%llu\n", path.c_str(), static_cast<unsigned long long>(us));
  std::fflush(stdout);
  return 0;
}

int run_fresh(const FreshOptions& o) {
  client::LatencySamples bare, vod, bare_exec, vod_exec;
  for (unsigned i = 0; i < o.count; ++i) {
    for (int k = 0; k < 2; ++k) {
      const bool bare_turn = (i % 2 == 0) == (k == 0);  // bare first in even pairs, vod first in odd ones
      if (o.gap_ms) std::this_thread::sleep_for(std::chrono::milliseconds(o.gap_ms));
      const ChildResult r = spawn_child(o, bare_turn ? "bare" : "vod");
      (bare_turn ? bare : vod).record(r.open_us);
      (bare_turn ? bare_exec : vod_exec).record(r.exec_us);
    }
  }
  const auto p = [](const client::LatencySamples& s, double q) { return static_cast<unsigned long long>(s.percentile(q)); };
  std::printf(
      "READLAT_FRESH size=%u count=%u bare_p50_us=%llu vod_p50_us=%llu ratio=%s bare_p90_us=%llu vod_p90_us=%llu "
      "bare_exec_p50_us=%llu vod_exec_p50_us=%llu\n",
      o.size, o.count, p(bare, 0.5), p(vod, 0.5), ratio(vod.percentile(0.5), bare.percentile(0.5)).c_str(), p(bare, 0.9), p(vod, 0.9),
      p(bare_exec, 0.5), p(vod_exec, 0.5));
  return 0;
}

}  // namespace vod::bench
