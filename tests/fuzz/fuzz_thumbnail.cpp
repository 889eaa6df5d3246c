// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-proxy decodes pictures from bytes a vod-server sends: whatever they are, make_thumbnail
// either returns a JPEG or throws ThumbnailError; it never crashes, leaks or reads out of bounds.
// The first input byte chooses the position (even: none; odd: a time, and a byte offset for TS).
//
// And it never opens anything the bytes name: while a picture is being made, any socket() or open()
// that reaches libc from libavformat is a failure (abort), so an input that is a playlist, a
// manifest or a concat script that got past the demuxer's confinement is found as a crash. The
// harness also runs this target with no network (run-fuzzer.sh: its own network namespace).
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "vod/media/thumbnail.hpp"

namespace {
thread_local bool decoding = false;

[[noreturn]] void nested_open(const char* call, const char* what) {
  std::fprintf(stderr, "fuzz_thumbnail: %s(%s) while making a picture: the movie's bytes made libavformat open something\n", call, what);
  std::abort();
}
}  // namespace

// These executable's definitions come before libc's (and the sanitizer's) for every library that
// calls them, libavformat's protocols included.
extern "C" int socket(int domain, int type, int protocol) {
  if (decoding) nested_open("socket", "a network socket");
  return static_cast<int>(syscall(SYS_socket, domain, type, protocol));
}
namespace {
// open() and open64() alike: abort while decoding, else open with the mode the caller passed.
int guarded_open(const char* call, const char* path, int flags, va_list ap) {
  const mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? static_cast<mode_t>(va_arg(ap, int)) : 0;
  if (decoding) nested_open(call, path);
  return static_cast<int>(syscall(SYS_openat, AT_FDCWD, path, flags, mode));
}
}  // namespace

extern "C" int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const int fd = guarded_open("open", path, flags, ap);
  va_end(ap);
  return fd;
}
extern "C" int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const int fd = guarded_open("open64", path, flags, ap);
  va_end(ap);
  return fd;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vod::media;
  if (size < 1) return 0;
  const std::span<const std::uint8_t> movie(data + 1, size - 1);
  std::optional<FramePosition> at;
  if (data[0] & 1) at = FramePosition{std::uint64_t{data[0]} * 20'000, std::uint64_t{data[0]} * 188 % (movie.size() + 1)};
  ThumbnailOptions options;
  options.width = 64;
  options.max_packets = 50;  // bounded work per input
  decoding = true;
  try {
    const Thumbnail t = make_thumbnail(movie, at, options);
    decoding = false;
    if (t.jpeg.size() < 4 || t.jpeg[0] != 0xff || t.jpeg[1] != 0xd8 || t.width == 0 || t.height == 0) std::abort();
  } catch (const ThumbnailError&) {}
  decoding = false;
  return 0;
}
