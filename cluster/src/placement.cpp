// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/cluster/placement.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace vod::cluster {

namespace {

// The first 8 bytes of SHA-256(a NUL b), big-endian. OpenSSL's digest rather than a hand-written
// hash: placement must be the same in every build and every language that reads docs/operations.md.
std::uint64_t hash64(std::string_view a, std::string_view b) {
  std::string text;
  text.reserve(a.size() + 1 + b.size());
  text.append(a).push_back('\0');
  text.append(b);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr);
  std::uint64_t h = 0;
  for (int i = 0; i < 8; ++i) h = (h << 8) | digest[i];
  return h;
}

}  // namespace

double rendezvous_draw(std::string_view key, std::string_view member_id) {
  return (static_cast<double>(hash64(key, member_id) >> 11) + 0.5) / 9007199254740992.0;  // 2^53
}

double rendezvous_score(std::string_view key, std::string_view member_id, double weight) {
  return -weight / std::log(rendezvous_draw(key, member_id));
}

std::vector<std::size_t> rendezvous_order(std::string_view key, std::span<const Candidate> members) {
  std::vector<double> score(members.size());
  for (std::size_t i = 0; i < members.size(); ++i) score[i] = rendezvous_score(key, members[i].id, members[i].weight);
  std::vector<std::size_t> order(members.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (score[a] != score[b]) return score[a] > score[b];
    return members[a].id < members[b].id;
  });
  return order;
}

std::vector<std::size_t> placement_order(std::string_view movie, std::span<const Candidate> members, unsigned k, std::uint64_t client_id) {
  auto order = rendezvous_order(movie, members);
  const std::size_t top = std::min<std::size_t>(std::max(k, 1u), order.size());
  if (top > 1) {
    const std::size_t first = hash64(movie, std::to_string(client_id)) % top;
    std::rotate(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(first), order.begin() + static_cast<std::ptrdiff_t>(top));
  }
  return order;
}

std::vector<std::size_t> bounded_load_order(std::vector<std::size_t> order, std::span<const MemberLoadView> members, double epsilon) {
  if (epsilon <= 0 || members.empty()) return order;
  double sessions = 0, capacity = 0;
  for (const MemberLoadView& m : members) {
    sessions += std::max(m.sessions, 0.0);
    capacity += std::max(m.capacity, 0.0);
  }
  if (capacity <= 0) return order;
  const auto full = [&](std::size_t i) {
    const MemberLoadView& m = members[i];
    const double bound = std::ceil((1 + epsilon) * (sessions + 1) * std::max(m.capacity, 0.0) / capacity);
    return std::max(m.sessions, 0.0) + 1 > bound;
  };
  std::stable_partition(order.begin(), order.end(), [&](std::size_t i) { return i < members.size() && !full(i); });
  return order;
}

}  // namespace vod::cluster
