// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live/recorder.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "live/record_split.hpp"
#include "vod/log.hpp"

namespace vod::server::live {

namespace fs = std::filesystem;

namespace {
constexpr std::size_t kWriteChunk = 64 * 1024;
constexpr std::size_t kHoldMax = 16u << 20;
constexpr std::uint64_t kIdleWriteUs = 500'000;
constexpr std::size_t kPacket = 188;

std::string mib(std::uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }
}  // namespace

fs::path recording_folder(const std::string& channel) { return fs::path("Live") / channel; }

std::string recording_stem(const std::string& channel) { return fs::path(channel).filename().string(); }

std::string recording_name(const std::string& stem, std::uint64_t time_us) {
  const std::time_t t = static_cast<std::time_t>(time_us / 1'000'000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H.%M.%S", &tm);
  return stem + " " + text + ".ts";
}

Recorder::Recorder(std::string channel, RecordOptions options, Finished finished)
    : channel_(std::move(channel)),
      options_(std::move(options)),
      finished_(std::move(finished)),
      folder_(options_.media_dir / recording_folder(channel_)),
      stem_(recording_stem(channel_)) {
  held_.reserve(2 * kWriteChunk);
}

Recorder::~Recorder() {
  // The server stops: the access unit it was cut in is left out, so the file ends on a whole frame.
  if (fd_ && write_out(unit_.value_or(held_.size()), last_us_)) complete();
}

void Recorder::packet(std::span<const std::uint8_t> packet, const RecordCutter::PacketNote& note, std::uint64_t now_us) {
  last_us_ = now_us;
  if (now_us < paused_until_us_) {
    stats_.lost += packet.size();
    return;
  }
  if (!fd_ && waiting_since_us_ == 0) waiting_since_us_ = now_us;
  SplitInput in;
  in.recording = static_cast<bool>(fd_);
  in.age = std::chrono::milliseconds((now_us - (fd_ ? file_first_us_ : waiting_since_us_)) / 1000);
  in.split = options_.split;
  in.pending = held_.size();
  in.tables = tables_;
  in.keyframe = note.keyframe;
  const SplitDecision d = decide_split(in);
  if (d.action == SplitDecision::Action::begin) {
    stats_.skipped += d.at;
    held_.erase(held_.begin(), held_.begin() + static_cast<std::ptrdiff_t>(d.at));
    if (tables_) tables_ = *tables_ - d.at;
    unit_.reset();
    if (!open(now_us)) return;
  } else if (d.action == SplitDecision::Action::cut && (written_ > 0 || d.at > 0)) {
    const std::vector<std::uint8_t> next(held_.begin() + static_cast<std::ptrdiff_t>(d.at), held_.end());
    const std::optional<std::size_t> next_tables = tables_ ? std::optional(*tables_ - d.at) : std::nullopt;
    if (!write_out(d.at, now_us)) return;
    complete();
    held_ = next;
    tables_ = next_tables;
    unit_.reset();
    if (!open(now_us)) return;
  }
  if (!fd_ && !note.table) {  // waiting for a keyframe: only the tables that may lead into it are held
    stats_.skipped += held_.size() + packet.size();
    held_.clear();
    tables_.reset();
    return;
  }
  if (note.unit_start) unit_ = tables_.value_or(held_.size());
  if (!note.table) tables_.reset();
  else if (!tables_) tables_ = held_.size();
  if (held_.empty()) held_since_us_ = now_us;
  held_.insert(held_.end(), packet.begin(), packet.end());
  if (fd_ && held_.size() >= kWriteChunk) {
    std::size_t n = complete_bytes();
    if (n == 0 && held_.size() >= kHoldMax) n = held_.size();  // an access unit larger than any frame: not held back
    if (n > 0) (void)write_out(n, now_us);
  }
}

std::size_t Recorder::complete_bytes() const noexcept { return std::min(tables_.value_or(held_.size()), unit_.value_or(held_.size())); }

void Recorder::idle(std::uint64_t now_us) {
  if (!fd_ || held_.empty() || now_us - held_since_us_ < kIdleWriteUs) return;
  if (const std::size_t n = complete_bytes()) (void)write_out(n, now_us);
}

void Recorder::end_stream(std::uint64_t now_us) {
  if (fd_ && write_out(held_.size(), now_us)) complete();  // the source sent all it had
  held_.clear();
  tables_.reset();
  unit_.reset();
  waiting_since_us_ = 0;
}

bool Recorder::open(std::uint64_t now_us) {
  std::error_code ec;
  fs::create_directories(folder_, ec);
  if (ec) {
    failed("mkdir", ec.value(), now_us);
    return false;
  }
  hidden_ = folder_ / ("." + recording_name(stem_, now_us));
  fd_.reset(::open(hidden_->c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd_) {
    failed("open", errno, now_us);
    return false;
  }
  written_ = 0;
  file_first_us_ = now_us;
  waiting_since_us_ = 0;
  log::info("live", channel_ + ": recording to " + hidden_->string());
  return true;
}

bool Recorder::write_out(std::size_t n, std::uint64_t now_us) {
  std::size_t done = 0;
  while (done < n) {
    const ssize_t w = ::write(fd_.get(), held_.data() + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int error = w < 0 ? errno : ENOSPC;
      written_ += done;
      stats_.bytes += done;
      stats_.lost += n - done;
      failed("write", error, now_us);
      return false;
    }
    done += static_cast<std::size_t>(w);
  }
  written_ += n;
  stats_.bytes += n;
  held_.erase(held_.begin(), held_.begin() + static_cast<std::ptrdiff_t>(n));
  const auto shift = [n](std::optional<std::size_t>& at) { at = at && *at >= n ? std::optional(*at - n) : std::nullopt; };
  shift(tables_);
  shift(unit_);
  held_since_us_ = now_us;
  return true;
}

// The hidden file becomes a movie: its data reaches the disk before the name does, so a crash of
// the machine leaves either the hidden file or the whole movie.
void Recorder::complete() {
  const fs::path hidden = *hidden_;
  hidden_.reset();
  if (written_ % kPacket != 0 && ::ftruncate(fd_.get(), static_cast<off_t>(written_ - written_ % kPacket)) == 0)
    written_ -= written_ % kPacket;  // a write cut short inside a packet
  if (::fdatasync(fd_.get()) != 0) log::warn("live", channel_ + ": fdatasync " + hidden.string() + ": " + std::strerror(errno));
  fd_.reset();
  std::error_code ec;
  if (written_ == 0) {
    fs::remove(hidden, ec);
    return;
  }
  const std::string name = hidden.filename().string().substr(1);
  fs::path final_path = hidden.parent_path() / name;
  for (int n = 2; fs::exists(final_path, ec) && n < 100; ++n)  // a second file begun within the same second
    final_path = hidden.parent_path() / (name.substr(0, name.size() - 3) + " (" + std::to_string(n) + ").ts");
  fs::rename(hidden, final_path, ec);
  if (ec) {
    log::error("live", channel_ + ": rename " + hidden.string() + " to " + final_path.string() + ": " + ec.message() + "; it stays hidden");
    return;
  }
  ++stats_.files;
  log::info("live", channel_ + ": recorded " + final_path.string() + " (" + std::to_string(written_) + " bytes, " +
                        std::to_string((last_us_ - file_first_us_) / 1'000'000) + " s)");
  if (finished_) finished_({channel_, final_path, written_, file_first_us_, last_us_});
}

void Recorder::failed(const char* call, int error, std::uint64_t now_us) {
  ++stats_.write_errors;
  log::error("live", channel_ + ": recording: " + call + " in " + folder_.string() + ": " + std::strerror(error) +
                         "; what was written is kept, recording pauses for " + std::to_string(kRetryPause.count()) +
                         " s and resumes at a keyframe (the channel goes on); " + mib(stats_.lost) + " lost so far");
  if (fd_) complete();
  hidden_.reset();
  stats_.lost += held_.size();
  held_.clear();
  tables_.reset();
  unit_.reset();
  waiting_since_us_ = 0;
  paused_until_us_ = now_us + std::chrono::microseconds(kRetryPause).count();
}

}  // namespace vod::server::live
