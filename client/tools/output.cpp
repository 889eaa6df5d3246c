#include "output.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace vod::client::cli {

bool write_all(int fd, const std::uint8_t* data, std::size_t n, const std::string& what) {
  for (std::size_t done = 0; done < n;) {
    const ssize_t w = ::write(fd, data + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EPIPE) return false;
    if (w < 0) throw std::runtime_error("writing " + what + ": " + std::strerror(errno));
    done += static_cast<std::size_t>(w);
  }
  return true;
}

}  // namespace vod::client::cli
