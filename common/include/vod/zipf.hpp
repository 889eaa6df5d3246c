// SPDX-License-Identifier: LGPL-2.1-or-later
// Zipf's law for benchmarks that choose among movies as audiences do: rank k (from 0) of n is chosen
// with probability proportional to 1 / (k + 1)^s. vod-client bench and http-bench share it, so the
// RDMA viewers and the nginx peer's viewers choose alike. (Written here rather than taken from a
// library: std::discrete_distribution would do, but the two tools must map one uniform draw to a
// rank identically, and the whole of it is the loop below.)
#pragma once

#include <cmath>
#include <cstddef>

namespace vod {

// The rank that uniform draw `u` in [0, 1) picks among `n` (n > 0) with exponent `s` (0: uniform).
inline std::size_t zipf_rank(std::size_t n, double s, double u) {
  double total = 0;
  for (std::size_t k = 0; k < n; ++k) total += 1.0 / std::pow(static_cast<double>(k + 1), s);
  double acc = 0;
  for (std::size_t k = 0; k < n; ++k) {
    acc += 1.0 / std::pow(static_cast<double>(k + 1), s) / total;
    if (u < acc) return k;
  }
  return n - 1;
}

}  // namespace vod
