// make_pattern SIZE SEED PATH: writes SIZE bytes of the offset pattern (pattern.hpp) to PATH.
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
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) {
    std::perror(tmp.c_str());
    return 1;
  }
  std::vector<std::uint8_t> buf(8u << 20);
  for (std::uint64_t at = 0; at < size;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size - at));
    for (std::size_t i = 0; i < n; ++i) buf[i] = vod::test::pattern_byte(at + i, seed);
    if (std::fwrite(buf.data(), 1, n, f) != n) {
      std::perror(tmp.c_str());
      return 1;
    }
    at += n;
  }
  if (std::fclose(f) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::perror(path.c_str());
    return 1;
  }
  return 0;
}
