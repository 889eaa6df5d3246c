// SPDX-License-Identifier: LGPL-2.1-or-later
// Writing a stream to a file or a pipe, for get and play.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace vod::client::cli {

// Writes all n bytes, retrying on EINTR and short writes. Returns false when the reader has gone
// (EPIPE: a player quit); throws std::runtime_error naming `what` on any other error.
bool write_all(int fd, const std::uint8_t* data, std::size_t n, const std::string& what);

// Where get writes a movie: a new file, or standard output for "-". With `direct_io` a regular
// file is opened O_DIRECT where its file system takes it, so that whole, page-aligned buffers go
// from the registered memory Reads landed in to the disk without the page cache's copy; the last,
// unaligned piece (and any write the file system refuses with EINVAL) is written through the cache.
// Never an mmap of the output registered for Reads: a long-term pin of a file-backed shared
// mapping is unsafe, and newer kernels refuse it.
class OutputFile {
 public:
  OutputFile(const std::string& path, bool direct_io);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // False when the reader of a pipe has gone (see write_all).
  bool write(const std::uint8_t* data, std::size_t n);
  void close();  // throws std::runtime_error when the final close fails
  bool direct_io() const noexcept { return direct_; }
  int fd() const noexcept { return fd_; }

 private:
  void drop_direct_io();
  std::string path_;
  int fd_ = -1;
  bool direct_ = false;
};

}  // namespace vod::client::cli
