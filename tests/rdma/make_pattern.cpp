// SPDX-License-Identifier: LGPL-2.1-or-later
// make_pattern SIZE SEED PATH: writes SIZE bytes of the offset pattern (pattern.hpp) to PATH, or to
// standard output when PATH is "-".
// make_pattern SIZE SEED --check [FROM]: reads standard input and exits 0 only when it is exactly
// those SIZE bytes (from byte FROM of the pattern on: a range of it), else says where it first
// differs. A test compares a stream against the pattern this way,
// made again as it reads, without reading a large file back over the guest's 9p root (which once
// ended a read early), and without a second pipe and cmp, which under TCG cost as much again.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "pattern.hpp"

namespace {

// Fills buf with the pattern's bytes at [at, at + n): whole words where aligned (the pattern is one
// 64-bit word per 8 bytes), since the guest runs this under TCG beside the test that reads it.
void fill(std::uint8_t* buf, std::size_t n, std::uint64_t at, std::uint64_t seed) {
  std::size_t i = 0;
  for (; i < n && (at + i) % 8 != 0; ++i) buf[i] = vod::test::pattern_byte(at + i, seed);
  for (; i + 8 <= n; i += 8) {
    const std::uint64_t word = vod::test::pattern_word((at + i) / 8, seed);
    for (unsigned k = 0; k < 8; ++k) buf[i + k] = static_cast<std::uint8_t>(word >> (8 * k));
  }
  for (; i < n; ++i) buf[i] = vod::test::pattern_byte(at + i, seed);
}

int check(std::uint64_t size, std::uint64_t seed, std::uint64_t from) {
  std::vector<std::uint8_t> got(4u << 20), want(4u << 20);
  std::uint64_t at = 0;
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, got.data(), got.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      std::fprintf(stderr, "make_pattern --check: reading standard input: %s\n", std::strerror(errno));
      return 1;
    }
    if (n == 0) break;
    const auto len = static_cast<std::size_t>(n);
    if (at + len > size) {
      std::fprintf(stderr, "make_pattern --check: more than the %llu bytes of the pattern\n", static_cast<unsigned long long>(size));
      return 1;
    }
    fill(want.data(), len, from + at, seed);
    if (std::memcmp(got.data(), want.data(), len) != 0) {
      const long long off = vod::test::first_mismatch(got.data(), len, from + at, seed);
      std::fprintf(stderr, "make_pattern --check: differs from the pattern at byte %lld\n", off);
      return 1;
    }
    at += len;
  }
  if (at != size) {
    std::fprintf(stderr, "make_pattern --check: the input ended after %llu of %llu bytes\n", static_cast<unsigned long long>(at),
                 static_cast<unsigned long long>(size));
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool checking = argc >= 4 && std::string(argv[3]) == "--check";
  if (argc != 4 && !(checking && argc == 5)) {
    std::fprintf(stderr, "usage: make_pattern SIZE SEED PATH|-|--check [FROM]\n");
    return 2;
  }
  const std::uint64_t size = std::strtoull(argv[1], nullptr, 10), seed = std::strtoull(argv[2], nullptr, 10);
  const std::string path = argv[3], tmp = path + ".tmp";
  if (checking) return check(size, seed, argc == 5 ? std::strtoull(argv[4], nullptr, 10) : 0);
  const bool to_stdout = path == "-";
  FILE* f = to_stdout ? stdout : std::fopen(tmp.c_str(), "wb");
  if (!f) {
    std::perror(tmp.c_str());
    return 1;
  }
  std::vector<std::uint8_t> buf(8u << 20);
  for (std::uint64_t at = 0; at < size;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size - at));
    fill(buf.data(), n, at, seed);
    if (std::fwrite(buf.data(), 1, n, f) != n) {
      std::perror(tmp.c_str());
      return 1;
    }
    at += n;
  }
  if (to_stdout) {
    if (std::fflush(f) != 0) {
      std::perror("stdout");
      return 1;
    }
    return 0;
  }
  if (std::fclose(f) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::perror(path.c_str());
    return 1;
  }
  return 0;
}
