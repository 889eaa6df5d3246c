// SPDX-License-Identifier: LGPL-2.1-or-later
// A LiveSession's one registered buffer, in this order: the staging area (LiveOptions::staging_bytes:
// a batch of ring Reads lands there, and the catalog at connect), the live header's slot, one
// receive slot per credit, the status probe's slot (the server's status words, in a fleet), then
// kSendSlots slots for credit messages.
#pragma once

#include <cstddef>
#include <cstdint>

#include "vod/protocol/live_messages.hpp"

namespace vod::client::live_buffer {

inline constexpr std::size_t kHeaderSlot = sizeof(proto::WireLiveHeader);
inline constexpr std::size_t kRecvSlot = proto::kLiveMessageMax;
inline constexpr std::size_t kSendSlot = 64;
inline constexpr std::uint32_t kSendSlots = 2;
inline constexpr std::size_t kStatusSlot = 64;

}  // namespace vod::client::live_buffer
