// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/window_reader.hpp"

#include <algorithm>

#include "vod/log.hpp"

namespace vod::client {

namespace {

// Reads `bytes` of the window's index region from `offset`. A read of the window that its oldest
// edge overtook (read ahead, or begun before a pause) is reported at the session's next call, which
// may be this one: it loses nothing, and is read again.
std::vector<std::uint8_t> read_region(Session& window, std::uint64_t offset, std::size_t bytes, const std::string& channel) {
  for (int attempt = 0;; ++attempt) {
    try {
      return window.read_window_index(offset, bytes);
    } catch (const ClientError& e) {
      if (e.kind() != ErrorKind::out_of_range || attempt >= 8) throw;
      log::debug("client", "live/" + channel + ": " + e.what());
    }
  }
}

}  // namespace

Uri window_uri(const Uri& channel) {
  Uri u = channel;
  u.live = false;
  u.movie = proto::window_entry_name(channel.movie.value_or(""));
  return u;
}

proto::WindowHeader read_window_header(Session& window, const std::string& channel) {
  for (int attempt = 0;; ++attempt) {
    const auto bytes = read_region(window, 0, sizeof(proto::WireWindowHeader), channel);
    auto decoded = proto::decode_window_header(bytes);
    if (decoded) return *decoded;
    if (attempt >= 8 || decoded.error().fault != proto::DecodeFault::inconsistent ||
        decoded.error().message.find("torn") == std::string::npos)
      throw ClientError(ErrorKind::protocol_error, "the window index of live/" + channel + " does not decode: " + decoded.error().message);
  }
}

const proto::WindowIndex& WindowReader::refresh(Session& window) {
  const proto::WindowHeader h = read_window_header(window, channel_);
  return update(h, [&](std::uint64_t offset, std::size_t bytes) { return read_region(window, offset, bytes, channel_); });
}

const proto::WindowIndex& WindowReader::update(const proto::WindowHeader& h, const RegionRead& read) {
  ++reads_;
  auto& marks = index_.marks;
  if (h.keyframe_capacity != index_.header.keyframe_capacity || h.keyframes_next < next_) {
    marks.clear();  // another window (the server restarted): read its marks afresh
    next_ = 0;
  }
  const std::uint64_t cap = h.keyframe_capacity;
  std::uint64_t k = std::max(next_, h.keyframes_next > cap ? h.keyframes_next - cap : 0);
  bool later = false;  // a mark published after the header was read: it, and those after it, at the next refresh
  while (k < h.keyframes_next && !later) {
    // The ring's slots from k's to its end or the newest mark: one Read, a second after a wrap.
    const std::uint64_t count = std::min(h.keyframes_next - k, cap - k % cap);
    const auto slots = read(proto::window_mark_offset(k, h.keyframe_capacity), count * sizeof(proto::WireWindowMark));
    mark_bytes_ += slots.size();
    for (std::uint64_t i = 0; i < count && !later; ++i) {
      const auto mark = proto::decode_window_mark(std::span(slots).subspan(i * sizeof(proto::WireWindowMark)), k);
      later = mark && mark->offset >= h.end_offset;
      if (later) break;
      ++k;
      if (!mark || mark->offset < h.oldest_offset) continue;  // rewritten since, or already behind the oldest edge: gone
      if (!marks.empty() && (mark->offset <= marks.back().offset || mark->publish_time_us < marks.back().publish_time_us))
        throw ClientError(ErrorKind::protocol_error,
                          "the window index of live/" + channel_ + ": mark " + std::to_string(k - 1) + " is not after the one before it");
      marks.push_back(*mark);
    }
  }
  next_ = k;
  index_.header = h;
  // Marks the oldest edge passed since (a few each refresh: one move of the rest).
  marks.erase(marks.begin(), std::lower_bound(marks.begin(), marks.end(), h.oldest_offset,
                                              [](const proto::WindowMark& m, std::uint64_t o) { return m.offset < o; }));
  return index_;
}

}  // namespace vod::client
