// SPDX-License-Identifier: LGPL-2.1-or-later
// The log line formats: text, text for the journal (sd-daemon priority prefix), and JSON lines that a
// JSON parser reads back as one object with the four fields, whatever bytes the message holds.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "vod/log.hpp"

namespace {
using vod::log::Format;
using vod::log::format_line;
using vod::log::Level;

constexpr const char* kStamp = "2026-11-23T09:27:10.311Z";

TEST(LogFormat, TextIsTimeLevelComponentMessageOnOneLine) {
  EXPECT_EQ(format_line(Format::text, false, kStamp, Level::warn, "server", "a\nb\rc"), "2026-11-23T09:27:10.311Z WARN server: a b c");
}

TEST(LogFormat, JournalTextCarriesTheSyslogPriorityAndNoTime) {
  EXPECT_EQ(format_line(Format::text, true, kStamp, Level::debug, "udp", "x"), "<7>DEBUG udp: x");
  EXPECT_EQ(format_line(Format::text, true, kStamp, Level::info, "udp", "x"), "<6>INFO udp: x");
  EXPECT_EQ(format_line(Format::text, true, kStamp, Level::warn, "udp", "x"), "<4>WARN udp: x");
  EXPECT_EQ(format_line(Format::text, true, kStamp, Level::error, "udp", "x"), "<3>ERROR udp: x");
}

TEST(LogFormat, JsonIsOneObjectWithEscapedStrings) {
  const std::string line = format_line(Format::json, true, kStamp, Level::error, "proxy", "bad \"Range\"\\\n\t\x01\x7f é");
  EXPECT_EQ(line,
            "{\"time\":\"2026-11-23T09:27:10.311Z\",\"level\":\"error\",\"component\":\"proxy\","
            "\"message\":\"bad \\\"Range\\\"\\\\\\n\\t\\u0001\\u007f é\"}");
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(LogFormat, NamesParseAndUnknownOnesSayWhatIsAllowed) {
  EXPECT_EQ(vod::log::parse_format("json"), Format::json);
  EXPECT_EQ(vod::log::parse_format("text"), Format::text);
  try {
    vod::log::parse_format("xml");
    FAIL() << "xml was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown log format 'xml' (text, json)");
  }
}

}  // namespace
