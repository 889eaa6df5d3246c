// rdma_cm private data: the connect request (client -> server), the accept (server -> client) and
// the reject (server -> client). docs/protocol.md, "Connection private data".
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "vod/protocol/message_header.hpp"
#include "vod/protocol/region_descriptor.hpp"

namespace vod::proto {

// Limits of the transports, in bytes of private data the consumer may pass. IB and RoCE with
// RDMA_PS_TCP: 56 on connect, 196 on accept, 148 on reject (the CM REJ message). iWARP allows more
// (MPA); every message below fits the smallest.
inline constexpr std::size_t kConnectPrivateDataMax = 56;
inline constexpr std::size_t kAcceptPrivateDataMax = 196;
inline constexpr std::size_t kRejectPrivateDataMax = 148;

// ------------------------------------------------------------------ connect request

enum class RequestKind : std::uint8_t {
  movie = 1,         // a movie by selector, with the catalog and the movie's keyframe index
  catalog_only = 2,  // the catalog alone (vod-client list, or a client that browses first)
  live = 3,          // a live stream by selector (notifications over Send; later issue)
  write_record = 4,  // reserved for Write-Record session setup; v1 servers reject it
};

enum class SelectorType : std::uint8_t {
  none = 0,           // required for catalog_only
  name_hash = 1,      // selector = FNV-1a 64 of the movie's name (vod/protocol/name_hash.hpp)
  catalog_index = 2,  // selector = entry index in catalog generation `catalog_generation`
};

enum class AuthType : std::uint8_t {
  none = 0,      // no token; auth_token is ignored
  token_v1 = 1,  // auth_token is an AccessToken (vod/protocol/access_token.hpp)
};

inline constexpr std::size_t kAuthTokenSize = 32;

struct ConnectRequest {
  RequestKind kind = RequestKind::catalog_only;
  SelectorType selector_type = SelectorType::none;
  std::uint64_t selector = 0;
  std::uint32_t catalog_generation = 0;  // 0 = any; must match for catalog_index selectors
  std::uint8_t flags = 0;                // none defined in v1: a set bit is a feature the server lacks
  AuthType auth_type = AuthType::none;
  std::array<std::uint8_t, kAuthTokenSize> auth_token{};
  // The highest protocol version the client speaks (its header's version): a server answers a
  // version-1 client only with what version 1 defines.
  std::uint8_t version = kProtocolVersion;

  bool operator==(const ConnectRequest&) const = default;
};

struct WireConnectRequest {
  WireHeader header;  // type connect_request, length 56
  std::uint8_t kind;
  std::uint8_t selector_type;
  std::uint8_t flags;
  std::uint8_t auth_type;
  be32 catalog_generation;
  be64 selector;
  std::uint8_t auth_token[kAuthTokenSize];
};
static_assert(sizeof(WireConnectRequest) == kConnectPrivateDataMax);

std::vector<std::uint8_t> encode(const ConnectRequest& r);
Decoded<ConnectRequest> decode_connect_request(Bytes buf);

// ------------------------------------------------------------------ accept

inline constexpr std::uint32_t kNoMovie = 0xffffffffu;

struct AcceptData {
  std::uint32_t catalog_generation = 0;
  std::uint32_t movie_index = kNoMovie;  // catalog entry of the movie, kNoMovie for catalog_only
  std::uint16_t granted_read_depth = 0;  // the responder_resources the server accepted with
  std::uint32_t max_message_size = 0;    // the server port's max_msg_sz: no single Read may exceed it
  RegionDescriptor movie;                // empty for catalog_only
  RegionDescriptor catalog;
  RegionDescriptor index;  // the movie's keyframe index; empty for catalog_only
  // Version 2: the movie's segment table, when it is served from the segment cache (then `movie`
  // is the arena). Empty otherwise, and then the accept is laid out as in version 1.
  RegionDescriptor segments;
  std::uint64_t movie_size = 0;  // version 2, with a segment table: the movie's bytes (`movie` is the arena)

  // The movie's bytes: its region's length, or with a segment table movie_size.
  std::uint64_t size() const noexcept { return segments.empty() ? movie.length : movie_size; }
  bool operator==(const AcceptData&) const = default;
};

struct WireAccept {
  WireHeader header;  // type accept, length 96
  be32 catalog_generation;
  be32 movie_index;
  be16 granted_read_depth;
  be16 reserved0;
  be32 max_message_size;
  WireRegionDescriptor movie;
  WireRegionDescriptor catalog;
  WireRegionDescriptor index;
};
static_assert(sizeof(WireAccept) == 96 && sizeof(WireAccept) <= kAcceptPrivateDataMax);

struct WireAcceptV2 {
  WireAccept v1;  // header version 2, length 128
  WireRegionDescriptor segments;
  be64 movie_size;
};
static_assert(sizeof(WireAcceptV2) == 128 && sizeof(WireAcceptV2) <= kAcceptPrivateDataMax);

std::vector<std::uint8_t> encode(const AcceptData& a);
Decoded<AcceptData> decode_accept(Bytes buf);

// ------------------------------------------------------------------ reject

enum class RejectCode : std::uint16_t {
  unknown_movie = 1,
  unsupported_version = 2,
  malformed_request = 3,
  server_full = 4,
  unauthorized = 5,
  unsupported_kind = 6,  // a request kind this server does not serve (live, write_record)
  stale_catalog = 7,     // a catalog_index selector for a generation the server no longer has
  shutting_down = 8,     // the server is draining after SIGTERM
  internal_error = 9,    // the server could not set up the connection (e.g. QP creation failed)
  bad_cookie = 10,       // Write-Record: the request's cookie is missing, forged or expired: say hello again
  rate_limited = 11,     // too many requests: Write-Record's rate limits, or RDMA connects from one address per second
  source_limit = 12,     // the client's address already has the most connections the server allows one address
};
inline constexpr std::uint16_t kMaxRejectCode = 12;

const char* to_string(RejectCode c) noexcept;

inline constexpr std::size_t kRejectReasonMax = 120;

struct RejectData {
  RejectCode code = RejectCode::malformed_request;
  std::uint8_t min_version = kMinProtocolVersion;  // the versions the server speaks
  std::uint8_t max_version = kProtocolVersion;
  std::string reason;  // printable ASCII, at most kRejectReasonMax bytes

  bool operator==(const RejectData&) const = default;
};

struct WireRejectFixed {
  WireHeader header;  // type reject, length 12 + reason bytes
  be16 code;
  std::uint8_t min_version;
  std::uint8_t max_version;
  // followed by the reason: (length - 12) bytes of printable ASCII, no terminator
};
static_assert(sizeof(WireRejectFixed) == 12 && 12 + kRejectReasonMax <= kRejectPrivateDataMax);

// The reason is cut to kRejectReasonMax bytes and any byte outside printable ASCII becomes '?'.
std::vector<std::uint8_t> encode(const RejectData& r);
// A server's reject: `code` and `reason`, with the protocol versions this build speaks.
std::vector<std::uint8_t> encode_reject(RejectCode code, std::string reason);
Decoded<RejectData> decode_reject(Bytes buf);

// The reject code a server answers a connect request that failed to decode with.
RejectCode reject_code_for(const DecodeError& e) noexcept;

}  // namespace vod::proto
