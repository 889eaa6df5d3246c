// make_pattern SIZE SEED PATH: writes SIZE bytes of the offset pattern (pattern.hpp) to PATH, or to
// standard output when PATH is "-" (so a test can compare a stream against the pattern without reading
// a large file back over the guest's 9p root, which once ended a read early).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "pattern.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: make_pattern SIZE SEED PATH\n");
    return 2;
  }
  const std::uint64_t size = std::strtoull(argv[1], nullptr, 10), seed = std::strtoull(argv[2], nullptr, 10);
  const std::string path = argv[3], tmp = path + ".tmp";
  const bool to_stdout = path == "-";
  FILE* f = to_stdout ? stdout : std::fopen(tmp.c_str(), "wb");
  if (!f) {
    std::perror(tmp.c_str());
    return 1;
  }
  std::vector<std::uint8_t> buf(8u << 20);
  for (std::uint64_t at = 0; at < size;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size - at));
    // Whole words at a time where aligned (the pattern is one 64-bit word per 8 bytes): the guest
    // runs this under TCG, beside the test that reads it.
    std::size_t i = 0;
    for (; i < n && (at + i) % 8 != 0; ++i) buf[i] = vod::test::pattern_byte(at + i, seed);
    for (; i + 8 <= n; i += 8) {
      const std::uint64_t word = vod::test::pattern_word((at + i) / 8, seed);
      for (unsigned k = 0; k < 8; ++k) buf[i + k] = static_cast<std::uint8_t>(word >> (8 * k));
    }
    for (; i < n; ++i) buf[i] = vod::test::pattern_byte(at + i, seed);
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
