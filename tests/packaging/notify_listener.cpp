// SPDX-License-Identifier: LGPL-2.1-or-later
// notify_listener PATH SECONDS: what a service manager's NOTIFY_SOCKET receives. Binds a datagram
// socket at PATH and prints every message it gets on one line (its newlines as " | "), until
// SECONDS have passed or SIGTERM. For tests of vod-server's sd_notify calls without systemd.
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: notify_listener PATH SECONDS\n");
    return 2;
  }
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (std::strlen(argv[1]) >= sizeof a.sun_path) {
    std::fprintf(stderr, "notify_listener: path too long\n");
    return 2;
  }
  std::strcpy(a.sun_path, argv[1]);
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  unlink(argv[1]);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    std::perror("notify_listener: socket/bind");
    return 1;
  }
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(std::atoi(argv[2]));
  char buf[4096];
  while (std::chrono::steady_clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) continue;
    std::string line(buf, static_cast<std::size_t>(n));
    for (std::size_t i; (i = line.find('\n')) != std::string::npos;) line.replace(i, 1, " | ");
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }
  unlink(argv[1]);
  return 0;
}
