// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live/recordings.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "vod/log.hpp"

namespace vod::server::live {

namespace fs = std::filesystem;

namespace {
constexpr std::uint64_t kPacket = 188;
std::string mib(std::uint64_t bytes) {
  return bytes < (10u << 20) ? std::to_string((bytes + 512) >> 10) + " KiB" : std::to_string((bytes + (1u << 19)) >> 20) + " MiB";
}
bool ends_with(const std::string& s, const std::string& tail) { return s.size() >= tail.size() && s.ends_with(tail); }
}  // namespace

Recordings::Recordings(loop::Reactor& reactor, RecordOptions options, std::vector<std::string> channels, std::function<void()> changed)
    : reactor_(reactor), options_(std::move(options)), channels_(std::move(channels)), changed_(std::move(changed)) {
  wake_fd_.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_fd_) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
  wake_in_loop_ = reactor_.add(wake_fd_.get(), [this] { on_wake(); });
  recover();
  enforce_keep();
}

Recorder::Finished Recordings::sink() {
  return [this](const FinishedRecording& f) {
    {
      std::lock_guard lock(mutex_);
      finished_.push_back(f);
    }
    const std::uint64_t one = 1;
    (void)!::write(wake_fd_.get(), &one, sizeof one);
  };
}

std::vector<Recordings::File> Recordings::list() const {
  std::vector<File> out;
  for (const auto& channel : channels_) {
    const std::string stem = recording_stem(channel);
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(options_.media_dir / recording_folder(channel), ec)) {
      std::error_code fec;
      if (!e.is_regular_file(fec)) continue;
      const std::string name = e.path().filename().string();
      const bool hidden = name.starts_with("." + stem + " ");
      if (!(hidden || name.starts_with(stem + " ")) || !ends_with(name, ".ts")) continue;
      File f{e.path(), e.file_size(fec), e.last_write_time(fec), hidden};
      if (!fec) out.push_back(std::move(f));
    }
  }
  std::sort(out.begin(), out.end(), [](const File& a, const File& b) { return a.mtime < b.mtime; });
  return out;
}

void Recordings::recover() {
  for (const auto& f : list()) {
    if (!f.hidden) continue;
    std::error_code ec;
    const std::uint64_t whole = f.bytes - f.bytes % kPacket;
    if (whole == 0) {
      fs::remove(f.path, ec);
      continue;
    }
    if (whole != f.bytes) fs::resize_file(f.path, whole, ec);
    const fs::path to = f.path.parent_path() / f.path.filename().string().substr(1);
    if (!ec && !fs::exists(to, ec)) fs::rename(f.path, to, ec);
    if (ec) log::error("live", "cannot complete the recording " + f.path.string() + " left by an earlier run: " + ec.message());
    else
      log::warn("live",
                "completed the recording " + to.string() + " that an earlier run left unfinished (" + std::to_string(whole) + " bytes)");
  }
}

std::size_t Recordings::enforce_keep() {
  if (options_.keep == 0) return 0;
  auto files = list();
  std::uint64_t total = 0;
  for (const auto& f : files) total += f.bytes;
  std::size_t deleted = 0;
  for (const auto& f : files) {
    if (total <= options_.keep) break;
    if (f.hidden) continue;
    std::error_code ec;
    fs::remove(f.path, ec);
    if (ec) {
      log::error("live", "--live-record-keep: cannot delete " + f.path.string() + ": " + ec.message());
      continue;
    }
    total -= f.bytes;
    ++deleted;
    log::info("live", "--live-record-keep: deleted the oldest recording " + f.path.string() + " (" + mib(f.bytes) +
                          "); recordings now take " + mib(total) + " of " + mib(options_.keep));
  }
  if (total > options_.keep)
    log::warn("live", "--live-record-keep: recordings take " + mib(total) + " of " + mib(options_.keep) +
                          " with nothing left to delete but the files being written");
  return deleted;
}

void Recordings::on_wake() {
  std::uint64_t n = 0;
  (void)!::read(wake_fd_.get(), &n, sizeof n);
  std::vector<FinishedRecording> done;
  {
    std::lock_guard lock(mutex_);
    done.swap(finished_);
  }
  if (done.empty()) return;
  enforce_keep();
  if (changed_) changed_();
}

}  // namespace vod::server::live
