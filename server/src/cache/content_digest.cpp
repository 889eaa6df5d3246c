// SPDX-License-Identifier: LGPL-2.1-or-later
#include "cache/content_digest.hpp"

#include <openssl/evp.h>

#include <array>
#include <stdexcept>
#include <string>

namespace vod::server::cache {

namespace {
constexpr char kDomain[] = "rvod-content-v1";  // hashed with its NUL

// A size as the identities hash it: 8 bytes, big-endian.
std::array<std::uint8_t, 8> size_be(std::uint64_t size) {
  std::array<std::uint8_t, 8> be{};
  for (int i = 0; i < 8; ++i) be[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(size >> (56 - 8 * i));
  return be;
}
}  // namespace

void ContentDigest::Free::operator()(EVP_MD_CTX* c) const noexcept { EVP_MD_CTX_free(c); }

ContentDigest::ContentDigest(std::uint64_t size) : ctx_(EVP_MD_CTX_new()), size_(size) {
  if (!ctx_ || EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1) throw std::runtime_error("EVP_DigestInit_ex(SHA-256) failed");
  const auto be = size_be(size);
  if (EVP_DigestUpdate(ctx_.get(), kDomain, sizeof kDomain) != 1 || EVP_DigestUpdate(ctx_.get(), be.data(), be.size()) != 1)
    throw std::runtime_error("EVP_DigestUpdate failed");
}

void ContentDigest::update(std::span<const std::uint8_t> bytes) {
  if (bytes.empty()) return;
  if (EVP_DigestUpdate(ctx_.get(), bytes.data(), bytes.size()) != 1) throw std::runtime_error("EVP_DigestUpdate failed");
  seen_ += bytes.size();
}

proto::ContentId ContentDigest::finish() {
  // A digest of fewer or more bytes than announced would name bytes nobody serves.
  if (seen_ != size_)
    throw std::logic_error("content digest of " + std::to_string(seen_) + " bytes for a size of " + std::to_string(size_));
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_DigestFinal_ex(ctx_.get(), md, &n) != 1 || n < 16) throw std::runtime_error("EVP_DigestFinal_ex failed");
  proto::ContentId id;
  id.kind = proto::kContentSha256;
  std::copy(md, md + 16, id.digest.begin());
  return id;
}

proto::ContentId origin_content_id(std::uint64_t size, std::string_view name, std::string_view etag) {
  static constexpr char kOriginDomain[] = "rvod-origin-v1";  // hashed with its NUL
  std::unique_ptr<EVP_MD_CTX, ContentDigest::Free> ctx(EVP_MD_CTX_new());
  const auto be = size_be(size);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), kOriginDomain, sizeof kOriginDomain) != 1 || EVP_DigestUpdate(ctx.get(), be.data(), be.size()) != 1 ||
      EVP_DigestUpdate(ctx.get(), name.data(), name.size()) != 1 || EVP_DigestUpdate(ctx.get(), "", 1) != 1 ||
      EVP_DigestUpdate(ctx.get(), etag.data(), etag.size()) != 1 || EVP_DigestFinal_ex(ctx.get(), md, &n) != 1 || n < 16)
    throw std::runtime_error("SHA-256 of an origin identity failed");
  proto::ContentId id;
  id.kind = proto::kContentOriginTag;
  std::copy(md, md + 16, id.digest.begin());
  return id;
}

}  // namespace vod::server::cache
