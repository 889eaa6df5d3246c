// Writing a stream to a file or a pipe, for get and play.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace vod::client::cli {

// Writes all n bytes, retrying on EINTR and short writes. Returns false when the reader has gone
// (EPIPE: a player quit); throws std::runtime_error naming `what` on any other error.
bool write_all(int fd, const std::uint8_t* data, std::size_t n, const std::string& what);

}  // namespace vod::client::cli
