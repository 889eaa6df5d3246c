// SPDX-License-Identifier: LGPL-2.1-or-later
// A live viewer's credits: the Sends the server may still post to it. A credit message adds the
// receives the client posted; whatever a (hostile) client claims, the sum is capped, never wrapped.
#pragma once

#include <algorithm>
#include <cstdint>

namespace vod::server::live {

inline constexpr std::uint32_t kMaxCredits = 1u << 16;

// `held` plus `granted`, capped at kMaxCredits; summed in 64 bits, so a grant near 2^32 cannot wrap
// to a small number below the cap.
constexpr std::uint32_t add_credits(std::uint32_t held, std::uint32_t granted) noexcept {
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(std::uint64_t{held} + granted, kMaxCredits));
}

}  // namespace vod::server::live
