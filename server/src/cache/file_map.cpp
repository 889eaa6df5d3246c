// SPDX-License-Identifier: LGPL-2.1-or-later
#include "cache/file_map.hpp"

#include <fcntl.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "vod/unique_fd.hpp"

namespace vod::server::cache {

FileMap::FileMap(const std::string& path, std::size_t size, int advice) : size_(size) {
  if (size == 0) return;
  const UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) throw std::runtime_error(std::string("open: ") + std::strerror(errno));
  void* p = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd.get(), 0);
  if (p == MAP_FAILED) throw std::runtime_error(std::string("mmap: ") + std::strerror(errno));
  data_ = static_cast<const std::uint8_t*>(p);
  madvise(p, size, advice);
}

FileMap::~FileMap() {
  if (data_) munmap(const_cast<std::uint8_t*>(data_), size_);
}

}  // namespace vod::server::cache
