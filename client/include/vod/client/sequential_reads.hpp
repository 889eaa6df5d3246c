// SPDX-License-Identifier: LGPL-2.1-or-later
// Reading a byte range in order through registered buffers advertised ahead (docs/client.md, "Zero
// copy"): `ahead` buffers of the session's pool are kept queued as reads of the next bytes, so the
// RDMA Reads land straight in them and they are the reader's read-ahead; next() hands over the
// oldest once all its bytes are in place. What vod-client get writes to its file, with no copy in
// user space. Over UDP, or with SessionOptions::engine.direct off, the same buffers fill through
// the ring instead (Stats::bytes_copied says which).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>

#include "vod/client/buffer_pool.hpp"
#include "vod/client/session.hpp"

namespace vod::client {

class SequentialReads {
 public:
  // [from, to) of the session's movie. `buffer_bytes` each (the pool's, made now if the session has
  // none); `ahead` buffers queued at most.
  SequentialReads(Session& session, std::uint64_t from, std::uint64_t to, std::size_t buffer_bytes, std::size_t ahead);
  ~SequentialReads();  // cancels what is queued; buffers still being written go back when they land
  SequentialReads(const SequentialReads&) = delete;
  SequentialReads& operator=(const SequentialReads&) = delete;

  struct Piece {
    ReadBuffer buffer;
    std::size_t bytes = 0;  // the buffer's first `bytes` hold the movie from `offset`
    std::uint64_t offset = 0;
  };
  // The next piece in order, waiting for it (reconnecting underneath like pread). When no buffer
  // is free it waits for those that Reads still pin (a cancelled predecessor's). Nothing at the end,
  // or when the reader holds every buffer (at_end() tells which). Throws ClientError when the
  // session gives up.
  std::optional<Piece> next();
  bool at_end() const noexcept { return queued_.empty() && next_ >= to_; }

  // The buffers a reader of `chunk`-byte blocks with `depth` Reads in flight advertises to keep the
  // depth full while it holds one: enough to cover depth × chunk, and two more.
  static std::size_t buffers_for(std::size_t buffer_bytes, std::size_t chunk, unsigned depth) noexcept;

 private:
  struct Queued {
    ReadBuffer buffer;
    std::uint64_t offset = 0;
    std::uint64_t id = 0;
    bool done = false;
    std::size_t bytes = 0;
  };
  void advertise();

  Session& session_;
  std::uint64_t next_ = 0;
  const std::uint64_t to_;
  const std::size_t ahead_;
  std::deque<std::unique_ptr<Queued>> queued_;
};

}  // namespace vod::client
