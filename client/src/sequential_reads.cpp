// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/sequential_reads.hpp"

#include <algorithm>
#include <chrono>

namespace vod::client {

SequentialReads::SequentialReads(Session& session, std::uint64_t from, std::uint64_t to, std::size_t buffer_bytes, std::size_t ahead)
    : session_(session), next_(from), to_(to), ahead_(std::max<std::size_t>(ahead, 1)) {
  BufferPoolOptions o;
  o.buffer_bytes = buffer_bytes;
  o.buffers_per_arena = ahead_ + 1;
  o.max_buffers = ahead_ + 1;  // the ones queued, and the one the reader holds
  session_.buffers(o);
}

SequentialReads::~SequentialReads() {
  for (const auto& q : queued_) session_.cancel(q->id);
}

std::size_t SequentialReads::buffers_for(std::size_t buffer_bytes, std::size_t chunk, unsigned depth) noexcept {
  const std::size_t bytes = std::max<std::size_t>(buffer_bytes, 1);
  return (std::size_t{depth} * chunk + bytes - 1) / bytes + 2;
}

void SequentialReads::advertise() {
  while (queued_.size() < ahead_ && next_ < to_) {
    auto buffer = session_.buffers()->take();
    if (!buffer) return;  // the reader holds the rest (or they are still landing)
    auto q = std::make_unique<Queued>();
    q->buffer = std::move(*buffer);
    q->offset = next_;
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(q->buffer.size(), to_ - next_));
    Queued* entry = q.get();
    q->id = session_.pread_async(next_, q->buffer.bytes().first(n), [entry](std::size_t got) {
      entry->done = true;
      entry->bytes = got;
    });
    next_ += n;
    queued_.push_back(std::move(q));
  }
}

std::optional<SequentialReads::Piece> SequentialReads::next() {
  advertise();
  while (queued_.empty() && next_ < to_) {
    // No buffer to advertise: a cancelled predecessor's Reads still pin them (they cannot be
    // recalled), or the reader holds them all.
    if (session_.buffers()->figures().pinned == 0) return std::nullopt;  // the reader holds them: not at_end()
    session_.progress(std::chrono::milliseconds(100));
    advertise();
  }
  if (queued_.empty()) return std::nullopt;  // read up to `to`
  // What was just advertised goes out now, even when the oldest piece has landed already: else the
  // reader would drain every landed piece before anything new was posted, and the depth would run
  // dry in between (seen: rdmasrc at 7.7 MB/s against 12.3 through the ring).
  session_.progress(std::chrono::milliseconds(0));
  while (!queued_.front()->done) {
    session_.progress(std::chrono::milliseconds(1000));
    advertise();  // a buffer the reader gave back since
  }
  std::unique_ptr<Queued> q = std::move(queued_.front());
  queued_.pop_front();
  if (q->bytes == 0) return std::nullopt;  // the movie ended before `to`
  return Piece{std::move(q->buffer), q->bytes, q->offset};
}

}  // namespace vod::client
