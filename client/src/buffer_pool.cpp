// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/buffer_pool.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "vod/client/errors.hpp"
#include "vod/log.hpp"

namespace vod::client {

namespace {
constexpr std::size_t kPage = 4096;
constexpr std::uint8_t kPoison = 0xA5;

bool poison_from_env() {
  const char* v = std::getenv("VOD_POISON_BUFFERS");
  return v && *v && std::strcmp(v, "0") != 0;
}
}  // namespace

// ---------------------------------------------------------------- ReadBuffer

ReadBuffer::ReadBuffer(ReadBuffer&& o) noexcept
    : pool_(std::move(o.pool_)), index_(o.index_), data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}

ReadBuffer& ReadBuffer::operator=(ReadBuffer&& o) noexcept {
  if (this != &o) {
    release();
    pool_ = std::move(o.pool_);
    index_ = o.index_;
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

void ReadBuffer::release() noexcept {
  if (!data_) return;
  pool_->give_back(index_);
  pool_.reset();
  data_ = nullptr;
  size_ = 0;
}

// ---------------------------------------------------------------- BufferPool

std::shared_ptr<BufferPool> BufferPool::make(const BufferPoolOptions& options) {
  return std::shared_ptr<BufferPool>(new BufferPool(options));  // private constructor: make_shared cannot reach it
}

BufferPool::BufferPool(const BufferPoolOptions& o)
    : buffer_bytes_((std::max<std::size_t>(o.buffer_bytes, 1) + kPage - 1) / kPage * kPage),
      per_arena_(std::max<std::size_t>(o.buffers_per_arena, 1)),
      max_buffers_(std::max<std::size_t>(o.max_buffers, 1)),
      poison_(o.poison.value_or(poison_from_env())) {}

BufferPool::~BufferPool() {
  if (poison_ && verify_poison() > 0)
    log::error("client", "buffer pool: " + std::to_string(violations_) + " buffer(s) were written after they were handed back");
}

std::optional<ReadBuffer> BufferPool::take() {
  std::lock_guard<std::mutex> guard(lock_);
  if (free_.empty()) {
    const std::size_t have = entries_.size();
    if (have >= max_buffers_) return std::nullopt;
    const std::size_t n = std::min(per_arena_, max_buffers_ - have);
    arenas_.push_back(take_ring(n * buffer_bytes_));
    std::uint8_t* base = arenas_.back().get();
    for (std::size_t i = 0; i < n; ++i) {
      entries_.push_back({base + i * buffer_bytes_, false, 0});
      if (poison_) std::memset(base + i * buffer_bytes_, kPoison, buffer_bytes_);
      free_.push_back(have + i);
    }
    std::reverse(free_.begin(), free_.end());  // the lowest first
  }
  const std::size_t index = free_.back();
  free_.pop_back();
  if (poison_ && !poison_intact(index)) {
    ++violations_;
    log::error("client",
               "buffer pool: buffer " + std::to_string(index) + " was written after it was handed back (a Read outlived its fence)");
    if (poison_from_env()) std::abort();  // a test asked for poisoning: fail where it happened
  }
  entries_[index].out = true;
  return ReadBuffer(shared_from_this(), index, entries_[index].data, buffer_bytes_);
}

void BufferPool::give_back(std::size_t index) noexcept {
  std::lock_guard<std::mutex> guard(lock_);
  entries_[index].out = false;
  if (entries_[index].pins == 0) make_free(index);
}

void BufferPool::make_free(std::size_t index) noexcept {
  if (poison_) std::memset(entries_[index].data, kPoison, buffer_bytes_);
  free_.push_back(index);
}

bool BufferPool::poison_intact(std::size_t index) noexcept {
  const std::uint8_t* p = entries_[index].data;
  return std::all_of(p, p + buffer_bytes_, [](std::uint8_t b) { return b == kPoison; });
}

std::size_t BufferPool::index_of(const std::uint8_t* p) const noexcept {
  for (std::size_t a = 0; a < arenas_.size(); ++a) {
    const std::uint8_t* base = arenas_[a].get();
    const std::size_t count = std::min(per_arena_, entries_.size() - a * per_arena_);
    if (p >= base && p < base + count * buffer_bytes_) return a * per_arena_ + static_cast<std::size_t>(p - base) / buffer_bytes_;
  }
  return entries_.size();
}

bool BufferPool::holds(const std::uint8_t* p, std::size_t n) const noexcept {
  std::lock_guard<std::mutex> guard(lock_);
  const std::size_t i = index_of(p);
  if (i >= entries_.size()) return false;
  return p + n <= entries_[i].data + buffer_bytes_;
}

void BufferPool::pin(const std::uint8_t* p) noexcept {
  std::lock_guard<std::mutex> guard(lock_);
  if (const std::size_t i = index_of(p); i < entries_.size()) ++entries_[i].pins;
}

void BufferPool::unpin(const std::uint8_t* p) noexcept {
  std::lock_guard<std::mutex> guard(lock_);
  const std::size_t i = index_of(p);
  if (i >= entries_.size() || entries_[i].pins == 0) return;
  if (--entries_[i].pins == 0 && !entries_[i].out) make_free(i);  // given back while its Read was in flight
}

bool BufferPool::pinned(const ReadBuffer& b) const noexcept {
  std::lock_guard<std::mutex> guard(lock_);
  return b.index_ < entries_.size() && entries_[b.index_].pins > 0;
}

std::optional<std::size_t> BufferPool::arena_of(const std::uint8_t* p, std::size_t n) const noexcept {
  std::lock_guard<std::mutex> guard(lock_);
  for (std::size_t a = 0; a < arenas_.size(); ++a) {
    const std::uint8_t* base = arenas_[a].get();
    const std::size_t bytes = std::min(per_arena_, entries_.size() - a * per_arena_) * buffer_bytes_;
    if (p >= base && p + n <= base + bytes) return a;
  }
  return std::nullopt;
}

std::span<std::uint8_t> BufferPool::arena(std::size_t index) const noexcept {
  std::lock_guard<std::mutex> guard(lock_);
  if (index >= arenas_.size()) return {};
  return {arenas_[index].get(), std::min(per_arena_, entries_.size() - index * per_arena_) * buffer_bytes_};
}

BufferPool::Figures BufferPool::figures() const {
  std::lock_guard<std::mutex> guard(lock_);
  Figures f;
  f.buffers = entries_.size();
  for (const Entry& e : entries_) {
    f.out += e.out ? 1 : 0;
    f.pinned += e.pins > 0 ? 1 : 0;
  }
  f.poison_violations = violations_;
  return f;
}

std::uint64_t BufferPool::verify_poison() {
  std::lock_guard<std::mutex> guard(lock_);
  if (!poison_) return violations_;
  for (const std::size_t i : free_)
    if (!poison_intact(i)) {
      ++violations_;
      std::memset(entries_[i].data, kPoison, buffer_bytes_);  // re-poisoned: counted once
    }
  return violations_;
}

bool parse_zero_copy(std::string_view value) {
  if (value == "auto") return true;
  if (value == "off") return false;
  throw ClientError(ErrorKind::usage,
                    "--zero-copy must be auto (Reads land straight in registered buffers where the transport can) or off "
                    "(every byte through the ring, copied: for tests and bisecting), not '" +
                        std::string(value) + "'");
}

}  // namespace vod::client
