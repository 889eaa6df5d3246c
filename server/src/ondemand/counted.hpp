// SPDX-License-Identifier: LGPL-2.1-or-later
// One count held while it exists (e.g. the connections binding windows at once). Move-only.
#pragma once

#include <cstddef>
#include <utility>

namespace vod::server::ondemand {

class Counted {
 public:
  Counted() noexcept = default;
  explicit Counted(std::size_t& n) noexcept : n_(&n) { ++n; }
  Counted(Counted&& o) noexcept : n_(std::exchange(o.n_, nullptr)) {}
  Counted& operator=(Counted&& o) noexcept {
    if (this != &o) {
      reset();
      n_ = std::exchange(o.n_, nullptr);
    }
    return *this;
  }
  Counted(const Counted&) = delete;
  Counted& operator=(const Counted&) = delete;
  ~Counted() { reset(); }
  void reset() noexcept {
    if (n_) --*std::exchange(n_, nullptr);
  }

 private:
  std::size_t* n_ = nullptr;
};

}  // namespace vod::server::ondemand
