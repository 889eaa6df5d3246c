// SPDX-License-Identifier: LGPL-2.1-or-later
// The id of one of the read engine's fetches, as a fetcher carries it and hands it back on
// completion: what the fetch is and which one, tagged the way the completion hub tags work requests
// (rdma::WorkId's kind and index). It must fit a WorkId's 24-bit index, where RdmaFetcher carries
// it: the kind in its top 2 bits, the number below.
#pragma once

#include <cstdint>

namespace vod::client::engine {

struct FetchId {
  enum class Kind : std::uint8_t {
    block = 0,        // a whole block, or the part of it after its head: the slot's number
    head = 1,         // the head Read of a block after a start or a seek: the slot's number
    before_head = 2,  // the part of a block before its head: the slot's number
    direct = 3,       // a Read into a reader's registered buffer: the direct fetch's number
  };
  static constexpr unsigned kIndexBits = 22;
  static constexpr std::uint32_t kMaxIndex = (1u << kIndexBits) - 1;

  Kind kind = Kind::block;
  std::uint32_t index = 0;  // <= kMaxIndex

  constexpr std::uint32_t pack() const noexcept { return (static_cast<std::uint32_t>(kind) << kIndexBits) | (index & kMaxIndex); }
  static constexpr FetchId unpack(std::uint32_t id) noexcept { return {static_cast<Kind>((id >> kIndexBits) & 3u), id & kMaxIndex}; }
  bool operator==(const FetchId&) const = default;
};
static_assert(FetchId::unpack(FetchId{FetchId::Kind::direct, 12345}.pack()) == FetchId{FetchId::Kind::direct, 12345});
static_assert(FetchId{FetchId::Kind::direct, FetchId::kMaxIndex}.pack() < (1u << 24), "a fetch id fits rdma::WorkId's index");

}  // namespace vod::client::engine
