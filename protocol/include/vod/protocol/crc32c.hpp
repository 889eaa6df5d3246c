// SPDX-License-Identifier: LGPL-2.1-or-later
// CRC32C (Castagnoli), the checksum of Write-Record datagrams (as iSCSI, SCTP and ext4 use it).
//
// Written here because no Debian 12 package provides it (Google's crc32c library is not in
// bookworm, and zlib and OpenSSL compute only the IEEE CRC32). With SSE4.2 it is one crc32
// instruction per 8 bytes; elsewhere a 256-entry table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace vod::proto {

// Continues `crc` (0 to start) over the bytes: crc32c(crc32c(0, a), b) == crc32c(0, a + b).
std::uint32_t crc32c(std::uint32_t crc, std::span<const std::uint8_t> bytes) noexcept;

}  // namespace vod::proto
