#include "host_buffer.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

namespace vod::server {

namespace {
constexpr std::size_t kPage = 4096;
constexpr std::size_t kHuge = 2u << 20;
}  // namespace

HostBuffer::HostBuffer(std::size_t length) : length_(length) {
  const bool huge = length >= kHuge;
  const std::size_t align = huge ? kHuge : kPage;
  mapped_ = std::max<std::size_t>((length + align - 1) / align * align, kPage);
  // Over-reserve by one alignment unit, then trim, so the start is 2 MiB-aligned for THP.
  const std::size_t reserve = mapped_ + (huge ? kHuge : 0);
  void* p = mmap(nullptr, reserve, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::runtime_error("mmap of " + std::to_string(reserve) + " bytes failed: " + std::strerror(errno));
  auto start = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t aligned = (start + align - 1) / align * align;
  if (aligned > start) munmap(p, aligned - start);
  const std::uintptr_t end = start + reserve, used_end = aligned + mapped_;
  if (end > used_end) munmap(reinterpret_cast<void*>(used_end), end - used_end);
  data_ = reinterpret_cast<std::uint8_t*>(aligned);
  huge_ = huge && madvise(data_, mapped_, MADV_HUGEPAGE) == 0;
}

HostBuffer::HostBuffer(HostBuffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), length_(o.length_), mapped_(std::exchange(o.mapped_, 0)), huge_(o.huge_) {}

HostBuffer& HostBuffer::operator=(HostBuffer&& o) noexcept {
  if (this != &o) {
    release();
    data_ = std::exchange(o.data_, nullptr);
    length_ = o.length_;
    mapped_ = std::exchange(o.mapped_, 0);
    huge_ = o.huge_;
  }
  return *this;
}

HostBuffer::~HostBuffer() { release(); }

void HostBuffer::release() noexcept {
  if (data_) munmap(data_, mapped_);
  data_ = nullptr;
}

}  // namespace vod::server
