// SPDX-License-Identifier: LGPL-2.1-or-later
// What an HTTP origin sends a vod-server --origin (server/src/origin/origin_http.hpp): its JSON
// directory listing, and the header lines of a Range response. The first byte picks the decoder.
// A listing that decodes holds only safe names; a Content-Range that decodes is ordered; a strong
// ETag keeps its quotes.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "origin/origin_http.hpp"

using namespace vod::server::origin;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      try {
        for (const auto& e : parse_autoindex(input, 1000))
          if (e.name.empty() || e.name == "." || e.name == ".." || e.name.find('/') != std::string::npos) std::abort();
      } catch (const OriginError&) {}
      break;
    case 1: {
      ResponseHeaders h;
      std::size_t at = 0;
      while (at < input.size()) {  // lines as libcurl delivers them
        const std::size_t nl = input.find('\n', at);
        const std::size_t end = nl == std::string_view::npos ? input.size() : nl + 1;
        h.feed(input.substr(at, end - at));
        at = end;
      }
      if (h.content_range &&
          (h.content_range->last < h.content_range->first || (h.content_range->total && *h.content_range->total <= h.content_range->last)))
        std::abort();
      if (h.etag && (h.etag->size() < 2 || h.etag->front() != '"' || h.etag->back() != '"')) std::abort();
      (void)judge_fill(h, 0, 1, 2, "\"x\"");
      break;
    }
    default:
      try {
        const std::string base = normalise_origin(input);
        if (!base.ends_with('/')) std::abort();
        (void)object_url(base, input);
      } catch (const OriginError&) {}
  }
  return 0;
}
