// SPDX-License-Identifier: LGPL-2.1-or-later
#include "language_tags.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "vod/protocol/catalog_titles.hpp"

namespace vod::server::titles {

namespace {

// ISO 639-2 codes (the terminology code, and the bibliographic one where it differs) of the
// languages ISO 639-1 gives a two-letter code, which BCP 47 requires instead. Written out: no
// library of the project's set maps them (libavformat's table is internal; ICU maps the other way
// and would be a dependency for one table).
constexpr std::array<std::pair<std::string_view, std::string_view>, 112> kTwoLetter{{
    {"afr", "af"}, {"alb", "sq"}, {"amh", "am"}, {"ara", "ar"}, {"arm", "hy"}, {"aze", "az"}, {"baq", "eu"}, {"bel", "be"}, {"ben", "bn"},
    {"bos", "bs"}, {"bre", "br"}, {"bul", "bg"}, {"bur", "my"}, {"cat", "ca"}, {"ces", "cs"}, {"chi", "zh"}, {"cym", "cy"}, {"cze", "cs"},
    {"dan", "da"}, {"deu", "de"}, {"dut", "nl"}, {"ell", "el"}, {"eng", "en"}, {"epo", "eo"}, {"est", "et"}, {"eus", "eu"}, {"fao", "fo"},
    {"fas", "fa"}, {"tgl", "tl"}, {"fin", "fi"}, {"fra", "fr"}, {"fre", "fr"}, {"fry", "fy"}, {"gla", "gd"}, {"gle", "ga"}, {"glg", "gl"},
    {"geo", "ka"}, {"ger", "de"}, {"gre", "el"}, {"guj", "gu"}, {"hat", "ht"}, {"hau", "ha"}, {"heb", "he"}, {"hin", "hi"}, {"hrv", "hr"},
    {"hun", "hu"}, {"hye", "hy"}, {"ibo", "ig"}, {"ice", "is"}, {"ind", "id"}, {"isl", "is"}, {"ita", "it"}, {"jav", "jv"}, {"jpn", "ja"},
    {"kan", "kn"}, {"kat", "ka"}, {"kaz", "kk"}, {"khm", "km"}, {"kin", "rw"}, {"kir", "ky"}, {"kor", "ko"}, {"kur", "ku"}, {"lao", "lo"},
    {"lat", "la"}, {"lav", "lv"}, {"lit", "lt"}, {"ltz", "lb"}, {"mac", "mk"}, {"mal", "ml"}, {"mao", "mi"}, {"mar", "mr"}, {"may", "ms"},
    {"mkd", "mk"}, {"mlt", "mt"}, {"mon", "mn"}, {"mri", "mi"}, {"msa", "ms"}, {"mya", "my"}, {"nep", "ne"}, {"nld", "nl"}, {"nno", "nn"},
    {"nob", "nb"}, {"nor", "no"}, {"pan", "pa"}, {"per", "fa"}, {"pol", "pl"}, {"por", "pt"}, {"pus", "ps"}, {"ron", "ro"}, {"rum", "ro"},
    {"rus", "ru"}, {"sin", "si"}, {"slk", "sk"}, {"slo", "sk"}, {"slv", "sl"}, {"som", "so"}, {"spa", "es"}, {"sqi", "sq"}, {"srp", "sr"},
    {"swa", "sw"}, {"swe", "sv"}, {"tam", "ta"}, {"tel", "te"}, {"tgk", "tg"}, {"tha", "th"}, {"tur", "tr"}, {"ukr", "uk"}, {"urd", "ur"},
    {"uzb", "uz"}, {"vie", "vi"}, {"wel", "cy"}, {"yid", "yi"},
}};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::optional<std::string> normalize_language(std::string_view tag) {
  std::string t = lower(tag);
  std::replace(t.begin(), t.end(), '_', '-');
  if (t.empty() || t == "und" || t == "mul" || t == "zxx" || t == "mis") return std::string();
  if (proto::invalid_language_reason(t)) return std::nullopt;
  const std::size_t dash = std::min(t.find('-'), t.size());
  std::string primary = t.substr(0, dash);
  if (primary.size() == 3) {
    auto it = std::find_if(kTwoLetter.begin(), kTwoLetter.end(), [&](const auto& p) { return p.first == primary; });
    if (it != kTwoLetter.end()) primary = it->second;
  }
  std::string out = primary;
  // Subtags after the language: a 4-letter script in title case, a 2-letter region in capitals,
  // others (a 3-digit region, variants) as they are.
  for (std::size_t at = dash; at < t.size();) {
    const std::size_t end = std::min(t.find('-', at + 1), t.size());
    std::string sub = t.substr(at + 1, end - at - 1);
    if (sub.size() == 4 && std::isalpha(static_cast<unsigned char>(sub[0])))
      sub[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(sub[0])));
    else if (sub.size() == 2)
      for (char& c : sub) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    out += "-" + sub;
    at = end;
  }
  return out;
}

}  // namespace vod::server::titles
