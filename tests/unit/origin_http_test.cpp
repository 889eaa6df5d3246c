// SPDX-License-Identifier: LGPL-2.1-or-later
// The deciders and decoders of vod-server --origin (server/src/origin/origin_http.hpp), as tables.
#include "origin/origin_http.hpp"

#include <gtest/gtest.h>

namespace vod::server::origin {
namespace {

using namespace std::chrono_literals;

TEST(OriginHttp, NormalisesTheOriginOrRefusesIt) {
  EXPECT_EQ(normalise_origin("http://h:8080/lib"), "http://h:8080/lib/");
  EXPECT_EQ(normalise_origin("https://h/"), "https://h/");
  EXPECT_EQ(normalise_origin("http://h"), "http://h/");
  for (const char* bad : {"ftp://h/", "h/lib", "http:///lib", "http://u:p@h/", "http://h/?q=1", "http://h/#f", "http://h/a b"})
    EXPECT_THROW(normalise_origin(bad), OriginError) << bad;
}

TEST(OriginHttp, ObjectUrlsEncodeEverythingButUnreservedAndSlash) {
  EXPECT_EQ(object_url("http://h/", "Films/A b (2024).mkv"), "http://h/Films/A%20b%20%282024%29.mkv");
  EXPECT_EQ(object_url("http://h/", "x?y#z%"), "http://h/x%3Fy%23z%25");
  EXPECT_EQ(object_url("http://h/", "\xc3\xa9"), "http://h/%C3%A9");
}

TEST(OriginHttp, ReadsNginxJsonListings) {
  const auto l = parse_autoindex(R"([{ "name":"Films", "type":"directory", "mtime":"M" },
    { "name":"a.mp4", "type":"file", "mtime":"Sun, 29 Nov 2026 12:15:43 GMT", "size":7472330 },
    { "name":"link", "type":"other" }])");
  ASSERT_EQ(l.size(), 2u);
  EXPECT_TRUE(l[0].directory);
  EXPECT_EQ(l[0].name, "Films");
  EXPECT_FALSE(l[1].directory);
  EXPECT_EQ(l[1].size, 7472330u);
  EXPECT_EQ(l[1].mtime, "Sun, 29 Nov 2026 12:15:43 GMT");
  EXPECT_TRUE(parse_autoindex("[]").empty());
}

TEST(OriginHttp, RefusesListingsItCannotTrust) {
  for (const char* bad :
       {"<html>", "{}", "[1]", R"([{"type":"file","size":1}])", R"([{"name":"a","type":"file"}])",
        R"([{"name":"a","type":"file","size":-1}])", R"([{"name":"..","type":"directory"}])", R"([{"name":"a/b","type":"file","size":1}])",
        R"([{"name":"","type":"file","size":1}])", "[{\"name\":\"a\\nb\",\"type\":\"file\",\"size\":1}]"})
    EXPECT_THROW(parse_autoindex(bad), OriginError) << bad;
  EXPECT_THROW(parse_autoindex(R"([{"name":"a","type":"other"},{"name":"b","type":"other"}])", 1), OriginError);
}

TEST(OriginHttp, OnlyStrongEntityTags) {
  EXPECT_EQ(strong_etag(" \"6b0c-72\"\r\n"), "\"6b0c-72\"");
  EXPECT_EQ(strong_etag("W/\"6b0c-72\""), std::nullopt);
  EXPECT_EQ(strong_etag("6b0c-72"), std::nullopt);
  EXPECT_EQ(strong_etag("\"a\"b\""), std::nullopt);
  EXPECT_EQ(strong_etag("\"a b\""), std::nullopt);
  EXPECT_EQ(strong_etag("\""), std::nullopt);
}

TEST(OriginHttp, ContentRanges) {
  EXPECT_EQ(parse_content_range("bytes 0-9/100"), (ContentRange{0, 9, 100}));
  EXPECT_EQ(parse_content_range("bytes 5-5/*"), (ContentRange{5, 5, std::nullopt}));
  for (const char* bad : {"bytes 9-0/100", "bytes 0-100/100", "bytes */100", "items 0-1/2", "bytes 0-1", "bytes -1-2/3", "bytes 0-1/x",
                          "bytes 0-99999999999999999999/1"})
    EXPECT_EQ(parse_content_range(bad), std::nullopt) << bad;
}

ResponseHeaders headers(std::initializer_list<const char*> lines) {
  ResponseHeaders h;
  for (const char* l : lines) h.feed(l);
  return h;
}

TEST(OriginHttp, HeadersOfTheLastResponseCount) {
  const auto h = headers({"HTTP/1.1 301 Moved\r\n", "ETag: \"old\"\r\n", "\r\n", "HTTP/1.1 206 Partial Content\r\n",
                          "content-range: bytes 0-1/4\r\n", "Content-Length: 2\r\n", "etag: W/\"w\"\r\n"});
  EXPECT_EQ(h.status, 206);
  EXPECT_EQ(h.etag, std::nullopt);
  EXPECT_TRUE(h.weak_etag);
  EXPECT_EQ(h.content_range, (ContentRange{0, 1, 4}));
  EXPECT_EQ(h.content_length, 2u);
}

TEST(OriginHttp, JudgesAFill) {
  const std::string tag = "\"t\"";
  struct Row {
    std::initializer_list<const char*> lines;
    FillVerdict verdict;
  };
  const Row rows[] = {
      {{"HTTP/1.1 206 P", "ETag: \"t\"", "Content-Range: bytes 4-7/10"}, FillVerdict::ok},
      {{"HTTP/1.1 206 P", "Content-Range: bytes 4-7/10"}, FillVerdict::ok},  // no tag sent: the total still checks
      {{"HTTP/1.1 206 P", "Content-Range: bytes 4-7/*"}, FillVerdict::ok},
      {{"HTTP/1.1 412 Precondition Failed"}, FillVerdict::changed},
      {{"HTTP/1.1 206 P", "ETag: \"u\"", "Content-Range: bytes 4-7/10"}, FillVerdict::changed},
      {{"HTTP/1.1 206 P", "ETag: \"t\"", "Content-Range: bytes 4-7/11"}, FillVerdict::changed},
      {{"HTTP/1.1 206 P", "ETag: \"t\"", "Content-Range: bytes 4-6/10"}, FillVerdict::failed},
      {{"HTTP/1.1 206 P", "ETag: \"t\"", "Content-Range: bytes 0-3/10"}, FillVerdict::failed},
      {{"HTTP/1.1 206 P", "ETag: \"t\""}, FillVerdict::failed},
      {{"HTTP/1.1 200 OK", "ETag: \"t\""}, FillVerdict::failed},  // the whole object to a range: never written
      {{"HTTP/1.1 503 Busy"}, FillVerdict::failed},
      {{"HTTP/1.1 404 Not Found"}, FillVerdict::failed},
  };
  for (const Row& r : rows) EXPECT_EQ(judge_fill(headers(r.lines), 4, 4, 10, tag), r.verdict) << *r.lines.begin() << " " << r.lines.size();
}

TEST(OriginHttp, RetriesBackOffWithinTheBudget) {
  EXPECT_EQ(retry_after(0, 0ms, 12s), std::nullopt);
  EXPECT_EQ(retry_after(1, 0ms, 12s), 250ms);
  EXPECT_EQ(retry_after(2, 300ms, 12s), 500ms);
  EXPECT_EQ(retry_after(3, 900ms, 12s), 1000ms);
  EXPECT_EQ(retry_after(4, 2s, 12s), std::nullopt);       // four attempts made
  EXPECT_EQ(retry_after(5, 0ms, 12s, 10), 2000ms);        // doubling stops at 2 s
  EXPECT_EQ(retry_after(1, 11900ms, 12s), std::nullopt);  // the wait would pass the budget
  EXPECT_EQ(retry_after(1, 11750ms, 12s), 250ms);         // and ends exactly at it
}

}  // namespace
}  // namespace vod::server::origin
