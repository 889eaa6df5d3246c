// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pinned_load.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "cache/content_digest.hpp"
#include "open_resolved.hpp"
#include "vod/log.hpp"
#include "vod/unique_fd.hpp"

namespace vod::server {

HostBuffer load_pinned(const std::string& path, std::uint64_t file_size, proto::ContentId& content) {
  const UniqueFd fd(open_resolved(path, O_RDONLY | O_CLOEXEC));
  if (!fd) throw std::runtime_error(std::string("open: ") + std::strerror(errno));
  const auto size = static_cast<std::size_t>(file_size);
  HostBuffer buffer(size);
  struct Progress {  // what the reader has loaded, and whether the hasher should stop
    std::mutex mutex;
    std::condition_variable changed;
    std::size_t loaded = 0;
    bool abandoned = false;
    void set(std::size_t n, bool abandon) {
      {
        std::lock_guard lock(mutex);
        loaded = n;
        abandoned = abandoned || abandon;
      }
      changed.notify_one();
    }
  } progress;
  std::exception_ptr hash_error;
  std::thread hasher([&] {
    try {
      cache::ContentDigest digest(size);
      for (std::size_t hashed = 0; hashed < size;) {
        std::size_t upto;
        {
          std::unique_lock lock(progress.mutex);
          progress.changed.wait(lock, [&] { return progress.abandoned || progress.loaded > hashed; });
          if (progress.abandoned) return;
          upto = progress.loaded;
        }
        digest.update({buffer.data() + hashed, upto - hashed});
        hashed = upto;
      }
      content = digest.finish();
    } catch (...) {
      hash_error = std::current_exception();
    }
  });
  struct Join {  // the hasher never outlives the buffer: it finishes, or is stopped when a read throws
    std::thread& t;
    Progress& p;
    bool read_all = false;
    ~Join() {
      if (!read_all) p.set(p.loaded, true);
      t.join();
    }
  };
  {
    Join join{hasher, progress};
    constexpr std::size_t kStep = 16u << 20;
    const bool report = size >= (256u << 20);
    std::size_t next_report = size / 4;
    for (std::size_t done = 0; done < size;) {
      const ssize_t n = pread(fd.get(), buffer.data() + done, std::min(kStep, size - done), static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = n < 0 ? errno : EIO;
        throw std::runtime_error(n < 0 ? std::string("read: ") + std::strerror(err) : "the file shrank while being read");
      }
      done += static_cast<std::size_t>(n);
      progress.set(done, false);
      if (report && done >= next_report && done < size) {
        log::info("library", "loading " + path + ": " + std::to_string(done * 100 / size) + "% of " + std::to_string(size >> 20) + " MiB");
        next_report += size / 4;
      }
    }
    join.read_all = true;  // the hasher finishes the last bytes before the join returns
  }
  if (hash_error) std::rethrow_exception(hash_error);
  return buffer;
}

}  // namespace vod::server
