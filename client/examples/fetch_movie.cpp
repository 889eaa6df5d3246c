// SPDX-License-Identifier: LGPL-2.1-or-later
// fetch_movie: the smallest program on libvodclient, built against the installed library with
//   g++ -std=c++20 fetch_movie.cpp $(pkg-config --cflags --libs vodclient)
// It copies one movie to a file with blocking reads: over one-sided RDMA Read by default, or over UDP
// Write-Record (no RDMA device needed) when given the server's UDP port.
//   fetch_movie rdma://HOST[:PORT]/MOVIE OUTPUT [UDP_PORT]
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include "vod/client/session.hpp"
#include "vod/client/uri.hpp"

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: %s rdma://HOST[:PORT]/MOVIE OUTPUT [UDP_PORT]\n", argv[0]);
    return 2;
  }
  try {
    vod::client::Uri uri = vod::client::parse_uri(argv[1]);
    if (!uri.movie) throw std::invalid_argument("the URI names no movie: rdma://HOST[:PORT]/MOVIE");
    vod::client::SessionOptions options;
    if (argc == 4) {
      options.transport = vod::client::Transport::udp;
      options.udp.port = static_cast<std::uint16_t>(std::stoul(argv[3]));
    }
    vod::client::Session session(uri, options);
    const vod::proto::CatalogEntry& movie = *session.movie();
    std::ofstream out(argv[2], std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(std::string("cannot write ") + argv[2]);
    std::vector<std::uint8_t> buffer(1 << 20);
    for (std::uint64_t offset = 0; offset < movie.size;) {
      const std::size_t got = session.pread(offset, buffer);
      if (got == 0) throw std::runtime_error("the server's movie ended early");
      out.write(reinterpret_cast<const char*>(buffer.data()), static_cast<std::streamsize>(got));
      offset += got;
    }
    out.close();
    if (!out) throw std::runtime_error(std::string("writing ") + argv[2] + " failed");
    std::printf("%s: %llu bytes, %zu keyframes in its index, %zu movies in the catalog\n", movie.name.c_str(),
                static_cast<unsigned long long>(movie.size), session.index().entries.size(), session.catalog().entries.size());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fetch_movie: %s\n", e.what());
    return 1;
  }
}
