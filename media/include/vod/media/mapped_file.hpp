// A read-only private mapping of a whole file, for tools that index files they have not loaded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace vod::media {

class MappedFile {
 public:
  explicit MappedFile(const std::string& path);  // throws std::runtime_error naming the path and errno
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::uint8_t> bytes() const noexcept { return {data_, size_}; }

 private:
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace vod::media
