// SPDX-License-Identifier: LGPL-2.1-or-later
// The window-binding state machine (windows/window_binding.hpp) against stubbed verbs: a failure at
// each step (bring-up, each window, the post, an error completion, a flush) leaves it failed with
// no window left and the QP moved to the error state exactly when it had reached RTS; a success
// takes fresh rkeys; invalidate() frees everything; late completions change nothing.
#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "windows/window_binding.hpp"

namespace vod::server::windows {
namespace {

using State = WindowBinding::State;

// Counts live windows; fails at the step it is told to.
class StubWindowVerbs final : public WindowVerbs {
 public:
  enum class Step { none, bring_up, window1, window2, window3, post };
  explicit StubWindowVerbs(Step fail_at = Step::none) : fail_at_(fail_at) {}

  void bring_up(std::uint8_t responder_resources, std::uint8_t rnr_retry) override {
    if (fail_at_ == Step::bring_up) throw std::runtime_error("ibv_modify_qp: Invalid argument (RTR)");
    in_rts = true;
    depth = responder_resources;
    rnr = rnr_retry;
  }
  std::uint32_t alloc_window() override {
    ++allocs;
    if ((fail_at_ == Step::window1 && allocs == 1) || (fail_at_ == Step::window2 && allocs == 2) ||
        (fail_at_ == Step::window3 && allocs == 3))
      throw std::runtime_error("ibv_alloc_mw: Cannot allocate memory");
    live.insert(next_);
    return next_++;
  }
  std::uint32_t window_rkey(std::uint32_t window) const override { return window << 8; }  // key byte 0, as a fresh window has
  void free_window(std::uint32_t window) noexcept override { live.erase(window); }
  void post_binds(std::span<const BindRequest> binds, std::uint64_t wr_id) override {
    if (fail_at_ == Step::post) throw std::runtime_error("ibv_post_send: Cannot allocate memory");
    posted.assign(binds.begin(), binds.end());
    posted_wr_id = wr_id;
  }
  void to_error() noexcept override { ++errors; }

  std::set<std::uint32_t> live;
  std::vector<BindRequest> posted;
  std::uint64_t posted_wr_id = 0;
  bool in_rts = false;
  int errors = 0, allocs = 0;
  std::uint8_t depth = 0, rnr = 0;

 private:
  Step fail_at_;
  std::uint32_t next_ = 1;
};

ibv_mr* fake_mr() {
  static ibv_mr mr{};
  return &mr;
}

// Catalog, movie and index, as a movie client gets them.
std::vector<WindowSpan> three_spans() {
  return {{fake_mr(), {0x1000, 4096, 0}}, {fake_mr(), {0x10000, 300000, 0}}, {fake_mr(), {0x90000, 512, 0}}};
}

TEST(WindowBinding, BindsEveryRegionWithFreshRkeysAndWaitsForTheCompletion) {
  StubWindowVerbs verbs;
  RkeyHistory rkeys;
  const std::uint32_t handed_out = rkeys.next(1u << 8);  // window 1's rkey, handed out to someone before
  WindowBinding b(verbs, rkeys);
  const auto spans = three_spans();
  const auto regions = b.start(spans, 16, 7, 0xabcd);
  EXPECT_EQ(b.state(), State::binding);
  EXPECT_EQ(verbs.depth, 16);
  EXPECT_EQ(verbs.rnr, 7);
  ASSERT_EQ(regions.size(), 3u);
  ASSERT_EQ(verbs.posted.size(), 3u);
  EXPECT_EQ(verbs.posted_wr_id, 0xabcdu);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(regions[i].addr, spans[i].region.addr);
    EXPECT_EQ(regions[i].length, spans[i].region.length) << "exactly the region, not its MR";
    EXPECT_EQ(regions[i].rkey, verbs.posted[i].rkey);
    EXPECT_EQ(verbs.posted[i].region.length, spans[i].region.length);
  }
  EXPECT_NE(regions[0].rkey, handed_out) << "an rkey handed out lately is never handed out again";
  EXPECT_EQ(verbs.live.size(), 3u);
  EXPECT_EQ(b.on_completion(IBV_WC_SUCCESS), State::bound);
  EXPECT_EQ(verbs.errors, 0);
  EXPECT_EQ(b.on_completion(IBV_WC_WR_FLUSH_ERR), State::bound) << "a late completion changes nothing";
  b.invalidate();
  EXPECT_EQ(b.state(), State::invalidated);
  EXPECT_TRUE(verbs.live.empty()) << "invalidated: every window freed";
  EXPECT_EQ(verbs.errors, 0) << "the QP is its owner's to disconnect";
}

TEST(WindowBinding, AnEmptyRegionGetsNoWindow) {
  StubWindowVerbs verbs;
  RkeyHistory rkeys;
  WindowBinding b(verbs, rkeys);
  std::vector<WindowSpan> spans{{fake_mr(), {0x1000, 4096, 0}}, {fake_mr(), {}}, {fake_mr(), {}}};  // a catalog client
  const auto regions = b.start(spans, 4, 7, 1);
  EXPECT_EQ(verbs.posted.size(), 1u);
  EXPECT_TRUE(regions[1].empty());
  EXPECT_EQ(regions[1].rkey, 0u);
  EXPECT_EQ(verbs.live.size(), 1u);
}

TEST(WindowBinding, AFailureAtEachStepLeavesNothingBehind) {
  using Step = StubWindowVerbs::Step;
  struct Row {
    const char* what;
    Step fail_at;                         // a step of start() that throws
    std::optional<ibv_wc_status> status;  // else: the signalled bind's completion
    bool reached_rts;
  };
  const Row rows[] = {
      {"bring-up", Step::bring_up, std::nullopt, false},
      {"window 1", Step::window1, std::nullopt, true},
      {"window 2", Step::window2, std::nullopt, true},
      {"window 3", Step::window3, std::nullopt, true},
      {"post", Step::post, std::nullopt, true},
      {"error completion", Step::none, IBV_WC_MW_BIND_ERR, true},
      {"flush completion", Step::none, IBV_WC_WR_FLUSH_ERR, true},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.what);
    StubWindowVerbs verbs(row.fail_at);
    RkeyHistory rkeys;
    WindowBinding b(verbs, rkeys);
    const auto spans = three_spans();
    if (!row.status) {
      EXPECT_THROW(b.start(spans, 16, 7, 1), std::runtime_error);
    } else {
      b.start(spans, 16, 7, 1);
      EXPECT_EQ(b.on_completion(*row.status), State::failed);
    }
    EXPECT_EQ(b.state(), State::failed);
    EXPECT_FALSE(b.failure().empty());
    EXPECT_TRUE(verbs.live.empty()) << verbs.live.size() << " windows left";
    EXPECT_EQ(b.windows(), 0u);
    EXPECT_EQ(verbs.errors, row.reached_rts ? 1 : 0) << "the QP goes to error exactly when it reached RTS";
    EXPECT_EQ(b.on_completion(IBV_WC_SUCCESS), State::failed) << "a late completion changes nothing";
    b.invalidate();
    EXPECT_EQ(b.state(), State::failed);
    EXPECT_EQ(verbs.errors, row.reached_rts ? 1 : 0) << "moved to error once";
  }
}

TEST(WindowBinding, CutOffWhileBindingFails) {
  StubWindowVerbs verbs;
  RkeyHistory rkeys;
  WindowBinding b(verbs, rkeys);
  const auto spans = three_spans();
  b.start(spans, 16, 7, 1);
  b.invalidate();  // a token expired, or a revocation, before the accept
  EXPECT_EQ(b.state(), State::failed);
  EXPECT_TRUE(verbs.live.empty());
  EXPECT_EQ(verbs.errors, 1);
  EXPECT_THROW(b.start(spans, 16, 7, 1), std::logic_error) << "started once only";
}

TEST(WindowBinding, TheWindowsGoWithTheBinding) {
  StubWindowVerbs verbs;
  RkeyHistory rkeys;
  {
    WindowBinding b(verbs, rkeys);
    const auto spans = three_spans();
    b.start(spans, 16, 7, 1);
    EXPECT_EQ(verbs.live.size(), 3u);
  }
  EXPECT_TRUE(verbs.live.empty());
}

}  // namespace
}  // namespace vod::server::windows
