// SPDX-License-Identifier: LGPL-2.1-or-later
// One completion queue per device, shared by every connection that one thread drives, with its
// completion channel: the poll group of SPDK's RDMA transport. A thread then sleeps on one fd per
// device instead of one per connection, and one ibv_poll_cq serves them all.
//
// Completions find their owner by a tagged wr_id (WorkId): the owner id, a kind chosen by the
// owner (an RDMA Read slot, a receive, a send) and an index. Owner ids are never reused, so a
// completion that arrives after its owner went away (a flush after a QP was destroyed) is counted
// and dropped, never delivered to a stranger.
//
// Not thread-safe: one hub per thread.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "vod/rdma/handles.hpp"

namespace vod::rdma {

// wr_id = owner (32 bits) | kind (8 bits) | index (24 bits).
struct WorkId {
  std::uint32_t owner = 0;
  std::uint8_t kind = 0;
  std::uint32_t index = 0;  // < 2^24

  static constexpr std::uint32_t kMaxIndex = (1u << 24) - 1;
  constexpr std::uint64_t pack() const noexcept { return (std::uint64_t{owner} << 32) | (std::uint64_t{kind} << 24) | (index & kMaxIndex); }
  static constexpr WorkId unpack(std::uint64_t wr_id) noexcept {
    return {static_cast<std::uint32_t>(wr_id >> 32), static_cast<std::uint8_t>(wr_id >> 24), static_cast<std::uint32_t>(wr_id & kMaxIndex)};
  }
  bool operator==(const WorkId&) const = default;
};
static_assert(WorkId::unpack(WorkId{7, 3, 12345}.pack()) == WorkId{7, 3, 12345});

// A kind from its owner's one enum of kinds (ondemand::VodWork, live::Viewer::Work, FetchWork, ...).
template <class Kind>
requires std::is_enum_v<Kind>
constexpr std::uint8_t work_kind(Kind k) noexcept { return static_cast<std::uint8_t>(k); }

class CompletionHub {
 public:
  // Runs for each completion of an owner's work requests, from poll().
  using Handler = std::function<void(const ibv_wc& wc, WorkId id)>;

  CompletionHub() = default;
  CompletionHub(const CompletionHub&) = delete;
  CompletionHub& operator=(const CompletionHub&) = delete;
  ~CompletionHub();

  // A new owner whose completions go to `handler`. The id is never handed out again.
  std::uint32_t add_owner(Handler handler);
  // From now on completions tagged with `owner` are dropped (counted in dropped()).
  void remove_owner(std::uint32_t owner) noexcept;

  // A CQ of device `ctx` with room for `entries` more outstanding completions (a QP's send plus
  // receive depth), created with the device's completion channel on first use. A full CQ grows with
  // ibv_resize_cq up to the device's max_cqe; where the device cannot resize (siw), or the CQ is at
  // max_cqe, another CQ on the same channel takes the new QPs. Throws RdmaError when the device
  // cannot hold them.
  ibv_cq* reserve(ibv_context* ctx, std::uint32_t entries);
  // A QP that reserved `entries` on `cq` is gone.
  void release(ibv_cq* cq, std::uint32_t entries) noexcept;

  // Polls every CQ and runs the handlers; returns how many completions were handled (at most
  // `max`). Handlers may post work and add or remove owners, their own included (a connection that
  // ends on its completion): a handler runs to its end, and the completions of an owner removed
  // meanwhile are dropped.
  int poll(int max = 4096);

  // For an event loop: arm() asks for an event on fds() at the next completion (poll() again after
  // arming: completions may have raced it); when an fd is readable, consume() takes the events.
  void arm();
  void consume() noexcept;
  bool armed() const noexcept { return armed_; }
  std::vector<int> fds() const;

  std::uint64_t dropped() const noexcept { return dropped_; }
  std::size_t owners() const noexcept { return handlers_.size(); }

 private:
  struct Cq {
    CompletionQueue cq;
    std::uint32_t capacity = 0;
    std::uint32_t reserved = 0;
  };
  struct Device {
    CompletionChannel channel;  // declared first: destroyed after the CQs that use it
    std::vector<Cq> cqs;        // the last takes new QPs; a full one that cannot grow is kept until the end
    std::uint32_t max_cqe = 0;
    bool resizes = true;  // false once the device said it cannot (siw)
  };
  std::map<ibv_context*, Device> devices_;
  std::unordered_map<std::uint32_t, std::shared_ptr<const Handler>> handlers_;  // shared: held while it runs
  std::uint32_t next_owner_ = 1;
  std::uint64_t dropped_ = 0;
  bool armed_ = false;
};

}  // namespace vod::rdma
