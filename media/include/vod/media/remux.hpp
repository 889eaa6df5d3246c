// Remux to MPEG-TS without re-encoding (vod-server --remux ts): every keyframe of the result is a
// byte offset a decoder can start at, which `vod-client play --start` and the live path rely on.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace vod::media {

// Throws std::runtime_error with libavformat's reason when the input cannot be remuxed.
std::vector<std::uint8_t> remux_to_mpegts(std::span<const std::uint8_t> bytes, const std::string& name);

}  // namespace vod::media
