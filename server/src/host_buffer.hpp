// Anonymous memory for a movie or a region the server registers: page-aligned, 2 MiB-aligned when
// large enough for transparent huge pages, and resident (filled) before it is registered.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace vod::server {

class HostBuffer {
 public:
  HostBuffer() = default;
  // At least one page, even for length 0, so that every region can be registered.
  explicit HostBuffer(std::size_t length);
  HostBuffer(HostBuffer&& o) noexcept;
  HostBuffer& operator=(HostBuffer&& o) noexcept;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer();

  std::uint8_t* data() const noexcept { return data_; }
  std::size_t length() const noexcept { return length_; }         // bytes of content
  std::size_t mapped_length() const noexcept { return mapped_; }  // bytes mapped (and registered)
  std::span<const std::uint8_t> bytes() const noexcept { return {data_, length_}; }
  bool huge_pages() const noexcept { return huge_; }

 private:
  void release() noexcept;
  std::uint8_t* data_ = nullptr;
  std::size_t length_ = 0;
  std::size_t mapped_ = 0;
  bool huge_ = false;
};

}  // namespace vod::server
