// SPDX-License-Identifier: LGPL-2.1-or-later
// A read-only mapping of a whole file, for probing and indexing a cached movie without holding it
// in memory: its pages come and go through the page cache. `advice` is madvise's: MADV_RANDOM
// for a probe (only the pages it touches), MADV_SEQUENTIAL for an index that reads it all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace vod::server::cache {

class FileMap {
 public:
  // Throws std::runtime_error naming open or mmap and errno. A size of 0 maps nothing.
  FileMap(const std::string& path, std::size_t size, int advice);
  ~FileMap();
  FileMap(const FileMap&) = delete;
  FileMap& operator=(const FileMap&) = delete;
  std::span<const std::uint8_t> bytes() const noexcept { return {data_, size_}; }

 private:
  const std::uint8_t* data_ = nullptr;
  std::size_t size_;
};

}  // namespace vod::server::cache
