// SPDX-License-Identifier: LGPL-2.1-or-later
// Which isolation each device gets with tokens (windows/isolation.hpp), as a table.
#include <gtest/gtest.h>

#include <stdexcept>

#include "windows/isolation.hpp"

namespace vod::server::windows {
namespace {

TEST(Isolation, EachDeviceGetsTheStrongestItCanDoOrWhatWasAskedByName) {
  using R = IsolationRequest;
  using I = Isolation;
  struct Row {
    R request;
    bool tokens, type2, iwarp;
    I want;
  };
  const Row rows[] = {
      {R::automatic, false, true, false, I::none},  // no tokens: nothing to isolate, whatever was asked
      {R::pd, false, false, true, I::none},
      {R::automatic, true, true, false, I::windows},  // rxe, mlx5: windows bound before the accept
      {R::automatic, true, false, true, I::pd},       // siw: no windows at all
      {R::automatic, true, true, true, I::pd},        // an iWARP RNIC with windows: too late to bind first
      {R::automatic, true, false, false, I::pd},      // a RoCE device without type-2 windows
      {R::pd, true, true, false, I::pd},              // pd also on rxe, to compare
      {R::shared, true, true, false, I::shared},      // only by name
      {R::windows, true, true, false, I::windows},
  };
  for (const Row& r : rows) {
    const auto c = choose_isolation(r.request, r.tokens, r.type2, r.iwarp, "dev0");
    EXPECT_EQ(c.mode, r.want) << static_cast<int>(r.request) << r.tokens << r.type2 << r.iwarp;
    EXPECT_NE(c.why.find("dev0"), std::string::npos) << c.why;
  }
  EXPECT_THROW(choose_isolation(R::windows, true, false, true, "siw0"), std::invalid_argument) << "asked by name, never downgraded";
  EXPECT_THROW(choose_isolation(R::windows, true, true, true, "iwarp0"), std::invalid_argument);
}

TEST(Isolation, TheOptionNamesItsChoices) {
  EXPECT_EQ(parse_isolation("auto"), IsolationRequest::automatic);
  EXPECT_EQ(parse_isolation("pd"), IsolationRequest::pd);
  try {
    parse_isolation("strong");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("auto, windows, pd or shared"), std::string::npos);
  }
}

}  // namespace
}  // namespace vod::server::windows
