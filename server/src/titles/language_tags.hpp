// SPDX-License-Identifier: LGPL-2.1-or-later
// Language tags as files give them (an ISO 639-2 "language" tag in MP4 and Matroska, "eng" or "ger";
// a sidecar's "Movie.en.srt", "Movie.pt-br.srt") normalised to BCP 47 (RFC 5646): the shortest
// language subtag ISO 639-1 has ("eng" and "en" are both "en"), the script in title case, the
// region in capitals.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace vod::server::titles {

// The BCP 47 tag for `tag`; "" for the tags that name no language ("und", "mul", "zxx", "mis", "");
// nullopt when `tag` is not a language tag at all ("forced", "sdh", "english").
std::optional<std::string> normalize_language(std::string_view tag);

}  // namespace vod::server::titles
