// SPDX-License-Identifier: LGPL-2.1-or-later
#include "cache/disk_reader.hpp"

#include <sys/eventfd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace vod::server::cache {

DiskReader::DiskReader(unsigned depth) : depth_(depth) {
  if (int err = io_uring_queue_init(depth, &ring_, 0); err < 0)
    throw std::runtime_error(std::string("io_uring_queue_init: ") + std::strerror(-err) +
                             " (the segment cache reads from disk with io_uring; a container may forbid it)");
  event_fd_ = UniqueFd(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!event_fd_) {
    const int err = errno;
    io_uring_queue_exit(&ring_);
    throw std::runtime_error(std::string("eventfd: ") + std::strerror(err));
  }
  if (int err = io_uring_register_eventfd(&ring_, event_fd_.get()); err < 0) {
    io_uring_queue_exit(&ring_);
    throw std::runtime_error(std::string("io_uring_register_eventfd: ") + std::strerror(-err));
  }
}

DiskReader::~DiskReader() {
  // Reads still in flight write into slots the arena owns: wait for them before the ring goes.
  while (!active_.empty()) {
    io_uring_cqe* cqe = nullptr;
    if (io_uring_wait_cqe(&ring_, &cqe) < 0) break;
    active_.erase(cqe->user_data);
    io_uring_cqe_seen(&ring_, cqe);
  }
  io_uring_queue_exit(&ring_);
}

void DiskReader::read(int fd, std::uint8_t* dest, std::size_t length, std::uint64_t offset, Done done) {
  waiting_.push_back(Read{fd, dest, length, offset, 0, std::move(done)});
  start_waiting();
}

void DiskReader::start_waiting() {
  bool any = false;
  while (!waiting_.empty() && active_.size() < depth_) {
    const std::uint64_t id = next_id_++;
    active_.emplace(id, std::move(waiting_.front()));
    waiting_.pop_front();
    submit(id);
    any = true;
  }
  if (any) io_uring_submit(&ring_);
}

void DiskReader::submit(std::uint64_t id) {
  Read& r = active_.at(id);
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (!sqe) {  // cannot happen with at most depth_ active; submit what is queued and retry once
    io_uring_submit(&ring_);
    sqe = io_uring_get_sqe(&ring_);
    if (!sqe) throw std::logic_error("DiskReader: no submission queue entry with fewer reads than its depth in flight");
  }
  io_uring_prep_read(sqe, r.fd, r.dest + r.done_bytes, static_cast<unsigned>(r.length - r.done_bytes), r.offset + r.done_bytes);
  io_uring_sqe_set_data64(sqe, id);
}

void DiskReader::reap() {
  eventfd_t ignored;
  (void)eventfd_read(event_fd_.get(), &ignored);
  std::vector<std::pair<Done, std::int64_t>> finished;
  bool resubmitted = false;
  io_uring_cqe* cqe = nullptr;
  while (io_uring_peek_cqe(&ring_, &cqe) == 0 && cqe) {
    const std::uint64_t id = cqe->user_data;
    const int res = cqe->res;
    io_uring_cqe_seen(&ring_, cqe);
    auto it = active_.find(id);
    if (it == active_.end()) continue;
    Read& r = it->second;
    if (res == -EINTR || res == -EAGAIN) {  // try again as it was
      submit(id);
      resubmitted = true;
      continue;
    }
    if (res > 0) r.done_bytes += static_cast<std::size_t>(res);
    if (res > 0 && r.done_bytes < r.length) {  // a short read: continue where it stopped
      submit(id);
      resubmitted = true;
      continue;
    }
    finished.emplace_back(std::move(r.done), res < 0 ? std::int64_t{res} : static_cast<std::int64_t>(r.done_bytes));
    active_.erase(it);
  }
  if (resubmitted) io_uring_submit(&ring_);
  start_waiting();
  // Callbacks last: they may queue more reads.
  for (auto& [done, result] : finished) done(result);
}

}  // namespace vod::server::cache
