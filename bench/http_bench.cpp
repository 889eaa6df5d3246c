// http-bench: the HTTP peer of 'vod-client bench', for comparing with nginx (sendfile) in the same
// run. N viewers, one thread and one keep-alive connection each, ask for CHUNK-byte Range requests
// paced at RATE, sequentially or jumping to a random position every S seconds, exactly as the RDMA
// viewers do: a chunk is late when it arrives after the moment its player needs it, and the time
// from a start or jump to the first byte is the seek latency. Prints a BENCH line like vod-client's.
//
//   http-bench --host 192.0.2.1 --port 8081 --path /movie.ts --clients N --duration S
//              --pattern sequential|jump:S --rate MBPS [--chunk-kib 256] [--startup 1] [--lead 0.5]
//   --path repeated, with --zipf S: each viewer picks a movie by Zipf's law (the first the most
//   popular), as vod-client bench --zipf does; without --zipf they take the paths in turn.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "vod/client/stats.hpp"
#include "vod/zipf.hpp"

namespace po = boost::program_options;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string host = "127.0.0.1";
  std::vector<std::string> paths;
  double zipf = 0;
  unsigned port = 80, clients = 1;
  double duration = 10, rate_mbps = 8.7, startup = 1.0, lead = 0.5, jump = 0;
  std::size_t chunk = 256 * 1024;
  std::size_t first = 16 * 1024;  // a seek or start is timed to this many body bytes (vod-client's first Read)
};

Clock::duration secs(double s) { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); }

int connect_to(const Options& o) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(o.port));
  inet_pton(AF_INET, o.host.c_str(), &sa.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    close(fd);
    return -1;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

// One request on a keep-alive connection. Returns the body length (or -1), and the moment the
// first o.first body bytes (or the whole body, if shorter) had arrived in `first_byte`.
long long request(int fd, const Options& o, const std::string& path, const char* method, std::uint64_t from, std::uint64_t to,
                  std::vector<char>& buf, Clock::time_point& first_byte, std::uint64_t* total_size) {
  char req[512];
  const int n = from == UINT64_MAX
                    ? std::snprintf(req, sizeof req, "%s %s HTTP/1.1\r\nHost: %s\r\n\r\n", method, path.c_str(), o.host.c_str())
                    : std::snprintf(req, sizeof req, "%s %s HTTP/1.1\r\nHost: %s\r\nRange: bytes=%llu-%llu\r\n\r\n", method, path.c_str(),
                                    o.host.c_str(), static_cast<unsigned long long>(from), static_cast<unsigned long long>(to));
  if (write(fd, req, static_cast<std::size_t>(n)) != n) return -1;
  std::string head;
  char c;
  while (head.size() < 8192 && head.find("\r\n\r\n") == std::string::npos) {
    if (read(fd, &c, 1) != 1) return -1;
    head += c;
  }
  // Only a 200 or 206 carries the movie: an error page must not count as data.
  if (head.compare(0, 9, "HTTP/1.1 ") != 0 || (head.compare(9, 3, "200") != 0 && head.compare(9, 3, "206") != 0)) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true)) std::fprintf(stderr, "http-bench: %s answered: %s\n", path.c_str(), head.substr(0, head.find('\r')).c_str());
    return -1;
  }
  const auto cl = head.find("Content-Length: ");
  if (cl == std::string::npos) return -1;
  const long long length = std::atoll(head.c_str() + cl + 16);
  if (total_size) *total_size = static_cast<std::uint64_t>(length);
  if (std::strcmp(method, "HEAD") == 0) return length;
  long long got = 0;
  const long long mark = std::min<long long>(std::max<std::size_t>(o.first, 1), length);
  while (got < length) {
    const ssize_t r = read(fd, buf.data(), std::min<std::size_t>(buf.size(), static_cast<std::size_t>(length - got)));
    if (r <= 0) return -1;
    if (got < mark && got + r >= mark) first_byte = Clock::now();
    got += r;
  }
  return length;
}

// What all viewers found, filled in by their threads.
struct Totals {
  std::mutex lock;
  vod::client::LatencySamples seek_latency, startup_latency, after_connect_latency;  // exact, as vod-client bench's; under lock
  std::atomic<std::uint64_t> in_time{0}, late{0}, bytes{0}, viewers_late{0}, errors{0};
};

// Viewer `i` of movie `path` (`size` bytes), on its own thread and connection, from `start` to `end`.
void run_viewer(const Options& o, unsigned i, const std::string& path, std::uint64_t size, Clock::time_point start, Clock::time_point end,
                Totals& t) {
  std::mt19937_64 random(1000 + i);
  std::vector<char> buf(o.chunk);
  const auto connect_start = Clock::now();
  int fd = connect_to(o);
  const auto connected = Clock::now();
  if (fd < 0) {
    ++t.errors;
    return;
  }
  std::uint64_t pos = 0, since = 0, my_late = 0;
  auto origin = connect_start + secs(o.startup), seek_started = connect_start, next_jump = start + secs(o.jump);
  bool awaiting_first = true, first_ever = true;
  while (Clock::now() < end) {
    const auto now = Clock::now();
    if (o.jump > 0 && now >= next_jump) {
      pos = (random() % std::max<std::uint64_t>(size / o.chunk, 1)) * o.chunk;
      since = 0;
      origin = now + secs(o.startup);
      seek_started = now;
      awaiting_first = true;
      next_jump = now + secs(o.jump);
    }
    const auto due = origin + secs(static_cast<double>(since) * 8 / (o.rate_mbps * 1e6));
    const auto ask_at = due - secs(o.lead);
    if (now < ask_at && !awaiting_first) {  // the first chunk after a start or jump goes at once
      std::this_thread::sleep_until(std::min(ask_at, end));
      continue;
    }
    if (pos >= size) pos = 0;
    if (awaiting_first) seek_started = now;  // latency runs from the request
    Clock::time_point first_byte;
    const long long n = request(fd, o, path, "GET", pos, std::min(pos + o.chunk, size) - 1, buf, first_byte, nullptr);
    if (n < 0) {
      ++t.errors;
      close(fd);
      fd = connect_to(o);
      if (fd < 0) return;
      continue;
    }
    const auto done = Clock::now();
    if (awaiting_first) {
      const auto us = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(first_byte - seek_started).count());
      std::lock_guard<std::mutex> g(t.lock);
      // Startup counts the TCP connect too, as the RDMA side counts its rdma_cm connect.
      const auto connect_us =
          static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(connected - connect_start).count());
      if (first_ever) {
        t.startup_latency.record(us + connect_us);
        t.after_connect_latency.record(us);
      } else {
        t.seek_latency.record(us);
      }
      awaiting_first = first_ever = false;
    }
    if (done <= due) ++t.in_time;
    else ++t.late, ++my_late;
    pos += static_cast<std::uint64_t>(n);
    since += static_cast<std::uint64_t>(n);
    t.bytes += static_cast<std::uint64_t>(n);
  }
  if (my_late) ++t.viewers_late;
  close(fd);
}

// The movies' sizes, by HEAD; empty when one cannot be had (said on stderr).
std::vector<std::uint64_t> movie_sizes(const Options& o) {
  std::vector<std::uint64_t> sizes;
  for (const std::string& path : o.paths) {
    const int fd = connect_to(o);
    std::vector<char> buf(1);
    Clock::time_point t;
    std::uint64_t size = 0;
    if (fd < 0 || request(fd, o, path, "HEAD", UINT64_MAX, 0, buf, t, &size) < 0 || size == 0) {
      std::fprintf(stderr, "http-bench: cannot HEAD http://%s:%u%s\n", o.host.c_str(), o.port, path.c_str());
      if (fd >= 0) close(fd);
      return {};
    }
    close(fd);
    sizes.push_back(size);
  }
  return sizes;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string pattern = "sequential";
  std::size_t chunk_kib = 256, first_kib = 16;
  po::options_description d("http-bench: paced HTTP viewers with Range requests (the nginx peer of vod-client bench)");
  d.add_options()("help,h", "show this help")("host", po::value(&o.host)->default_value(o.host), "server IPv4 address")(
      "port", po::value(&o.port)->default_value(o.port), "server port")("path", po::value(&o.paths)->required()->composing(),
                                                                        "movie path, e.g. /movie.ts (repeatable)")(
      "zipf", po::value(&o.zipf)->default_value(o.zipf),
      "with several --path: each viewer picks one by Zipf's law with this exponent; 0: in turn")(
      "clients", po::value(&o.clients)->default_value(o.clients), "viewers, one connection and thread each")(
      "duration", po::value(&o.duration)->default_value(o.duration), "seconds")("pattern", po::value(&pattern)->default_value(pattern),
                                                                                "sequential or jump:SECONDS")(
      "rate", po::value(&o.rate_mbps)->default_value(o.rate_mbps), "Mbit/s per viewer")(
      "chunk-kib", po::value(&chunk_kib)->default_value(chunk_kib), "bytes per Range request, in KiB")(
      "startup", po::value(&o.startup)->default_value(o.startup), "seconds before the first chunk is due after a start or jump")(
      "lead", po::value(&o.lead)->default_value(o.lead), "seconds ahead of need a chunk is asked for")(
      "first-kib", po::value(&first_kib)->default_value(first_kib),
      "a seek or start is timed to this many body bytes, in KiB (as vod-client's --first-read-kib)");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, d), vm);
    if (vm.count("help")) {
      std::printf("%s\n",
                  [&] {
                    std::ostringstream s;
                    s << d;
                    return s.str();
                  }()
                      .c_str());
      return 0;
    }
    po::notify(vm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "http-bench: %s\n", e.what());
    return 2;
  }
  o.first = first_kib * 1024;
  o.chunk = chunk_kib * 1024;
  if (pattern.rfind("jump:", 0) == 0) o.jump = std::atof(pattern.c_str() + 5);

  const std::vector<std::uint64_t> sizes = movie_sizes(o);
  if (sizes.empty()) return 1;
  // Which movie each viewer watches, drawn before the threads start (one generator, as vod-client's).
  std::vector<std::size_t> watch(o.clients);
  std::mt19937_64 chooser(1);
  for (unsigned i = 0; i < o.clients; ++i)
    watch[i] =
        o.zipf > 0 ? vod::zipf_rank(o.paths.size(), o.zipf, std::uniform_real_distribution<double>(0, 1)(chooser)) : i % o.paths.size();
  Totals t;
  const auto start = Clock::now(), end = start + secs(o.duration);
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < o.clients; ++i)
    threads.emplace_back([&, i] { run_viewer(o, i, o.paths[watch[i]], sizes[watch[i]], start, end, t); });
  for (auto& thread : threads) thread.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf(
      "BENCH clients=%u seconds=%.3f in_time=%llu late=%llu viewers_late=%llu goodput_mbps=%.3f seek_p50_us=%llu seek_p99_us=%llu "
      "startup_p50_us=%llu startup_p99_us=%llu after_connect_p50_us=%llu after_connect_p99_us=%llu errors=%llu seeks=%llu\n",
      o.clients, elapsed, static_cast<unsigned long long>(t.in_time.load()), static_cast<unsigned long long>(t.late.load()),
      static_cast<unsigned long long>(t.viewers_late.load()), static_cast<double>(t.bytes.load()) * 8 / elapsed / 1e6,
      static_cast<unsigned long long>(t.seek_latency.percentile(0.5)), static_cast<unsigned long long>(t.seek_latency.percentile(0.99)),
      static_cast<unsigned long long>(t.startup_latency.percentile(0.5)),
      static_cast<unsigned long long>(t.startup_latency.percentile(0.99)),
      static_cast<unsigned long long>(t.after_connect_latency.percentile(0.5)),
      static_cast<unsigned long long>(t.after_connect_latency.percentile(0.99)), static_cast<unsigned long long>(t.errors.load()),
      static_cast<unsigned long long>(t.seek_latency.count()));
  return t.errors.load() > 0 && t.in_time.load() == 0 ? 1 : 0;
}
