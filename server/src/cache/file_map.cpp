// SPDX-License-Identifier: LGPL-2.1-or-later
#include "cache/file_map.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "open_resolved.hpp"
#include "vod/unique_fd.hpp"

namespace vod::server::cache {

FileMap::FileMap(const std::string& path, std::size_t size, int advice) : size_(size) {
  if (size == 0) return;
  const UniqueFd fd(open_resolved(path, O_RDONLY | O_CLOEXEC));
  if (!fd) throw std::runtime_error(std::string("open: ") + std::strerror(errno));
  // Mapping past the end would raise SIGBUS on the first access there: a file shorter than listed
  // (rewritten since the scan) is an error instead.
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) throw std::runtime_error(std::string("fstat: ") + std::strerror(errno));
  if (static_cast<std::uint64_t>(st.st_size) < size)
    throw std::runtime_error("the file is " + std::to_string(st.st_size) + " bytes now, not the " + std::to_string(size) + " listed");
  void* p = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd.get(), 0);
  if (p == MAP_FAILED) throw std::runtime_error(std::string("mmap: ") + std::strerror(errno));
  data_ = static_cast<const std::uint8_t*>(p);
  madvise(p, size, advice);
}

FileMap::~FileMap() {
  if (data_) munmap(const_cast<std::uint8_t*>(data_), size_);
}

}  // namespace vod::server::cache
