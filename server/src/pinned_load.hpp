// SPDX-License-Identifier: LGPL-2.1-or-later
// Loading a pinned movie: every byte of its file read into a HostBuffer with pread (which makes the
// pages resident before they are registered), and its content identity (cache/content_digest.hpp)
// computed on a second thread that follows the reads, so that a load takes about the longer of
// reading and hashing rather than their sum.
#pragma once

#include <cstdint>
#include <string>

#include "host_buffer.hpp"
#include "vod/protocol/catalog_layout.hpp"

namespace vod::server {

// Reads `size` bytes of `path` and sets `content` to their identity. Throws std::runtime_error with
// the failing call and errno (or "the file shrank") when the file cannot be read whole. Logs
// progress for large files.
HostBuffer load_pinned(const std::string& path, std::uint64_t size, proto::ContentId& content);

}  // namespace vod::server
