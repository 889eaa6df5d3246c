// SPDX-License-Identifier: LGPL-2.1-or-later
// A movie's content identity (docs/protocol.md, "Content identity"): the first 16 bytes of SHA-256
// over a domain string, the size and the bytes a client reads. Computed while a pinned movie is
// loaded (it reads every byte anyway; a thread hashes behind the reads) and, for a cached movie, after start by the LazyIndexer.
// SHA-256 from libcrypto: a collision-resistant digest, so two members' identities match only when
// their bytes do, even when someone chose the bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "vod/protocol/catalog_layout.hpp"

typedef struct evp_md_ctx_st EVP_MD_CTX;

namespace vod::server::cache {

class ContentDigest {
 public:
  explicit ContentDigest(std::uint64_t size);  // the size is hashed first: bytes of another length never match
  void update(std::span<const std::uint8_t> bytes);
  proto::ContentId finish();

  struct Free {  // EVP_MD_CTX_free
    void operator()(EVP_MD_CTX* c) const noexcept;
  };

 private:
  std::unique_ptr<EVP_MD_CTX, Free> ctx_;
  std::uint64_t size_ = 0, seen_ = 0;
};

// The identity of a movie at an HTTP origin (kContentOriginTag): its size, name and strong ETag.
proto::ContentId origin_content_id(std::uint64_t size, std::string_view name, std::string_view etag);

// The identity of `bytes`, hashed in steps of 16 MiB; `step` runs between them (a stop check).
template <typename Step>
proto::ContentId content_id(std::span<const std::uint8_t> bytes, Step&& step) {
  ContentDigest d(bytes.size());
  constexpr std::size_t kStep = 16u << 20;
  for (std::size_t at = 0; at < bytes.size(); at += kStep) {
    d.update(bytes.subspan(at, std::min(kStep, bytes.size() - at)));
    step();
  }
  return d.finish();
}
inline proto::ContentId content_id(std::span<const std::uint8_t> bytes) {
  return content_id(bytes, [] {});
}

}  // namespace vod::server::cache
