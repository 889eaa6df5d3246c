#include "vod/protocol/private_data.hpp"

#include <algorithm>

#include "decode_support.hpp"

namespace vod::proto {

using detail::fail;
using detail::hex;
using detail::num;

// ------------------------------------------------------------------ connect request

std::vector<std::uint8_t> encode(const ConnectRequest& r) {
  WireConnectRequest w{};
  w.header = make_header(MessageType::connect_request, sizeof w, r.version);
  w.kind = static_cast<std::uint8_t>(r.kind);
  w.selector_type = static_cast<std::uint8_t>(r.selector_type);
  w.flags = r.flags;
  w.auth_type = static_cast<std::uint8_t>(r.auth_type);
  w.catalog_generation = r.catalog_generation;
  w.selector = r.selector;
  std::copy(r.auth_token.begin(), r.auth_token.end(), w.auth_token);
  return to_bytes(w);
}

Decoded<ConnectRequest> decode_connect_request(Bytes buf) {
  auto length = decode_header(buf, MessageType::connect_request, sizeof(WireConnectRequest));
  if (!length) return length.error();
  const auto w = load_wire<WireConnectRequest>(buf.data());

  ConnectRequest r;
  r.version = w.header.version;  // checked by decode_header
  switch (w.kind) {
    case 1:
    case 2:
    case 3:
    case 4: r.kind = static_cast<RequestKind>(w.kind); break;
    default: return fail(DecodeFault::bad_field, "connect request: unknown request kind " + num(w.kind) + " (1..4 are defined)");
  }
  switch (w.selector_type) {
    case 0:
    case 1:
    case 2: r.selector_type = static_cast<SelectorType>(w.selector_type); break;
    default: return fail(DecodeFault::bad_field, "connect request: unknown selector type " + num(w.selector_type) + " (0..2 are defined)");
  }
  if (w.auth_type > 1)
    return fail(DecodeFault::bad_field, "connect request: unknown auth type " + num(w.auth_type) + " (0 none and 1 token are defined)");
  if (w.flags != 0) return fail(DecodeFault::bad_field, "connect request: flags " + hex(w.flags) + " name features v1 does not define");
  r.flags = w.flags;
  r.auth_type = static_cast<AuthType>(w.auth_type);
  r.selector = w.selector.get();
  r.catalog_generation = w.catalog_generation.get();
  std::copy(std::begin(w.auth_token), std::end(w.auth_token), r.auth_token.begin());

  const bool wants_movie = r.kind == RequestKind::movie || r.kind == RequestKind::live;
  if (wants_movie && r.selector_type == SelectorType::none)
    return fail(DecodeFault::inconsistent, "connect request: a movie or live request needs a selector, and selector type is none");
  if (r.kind == RequestKind::catalog_only && (r.selector_type != SelectorType::none || r.selector != 0))
    return fail(DecodeFault::inconsistent, "connect request: a catalog-only request must have selector type none and selector 0");
  if (r.selector_type == SelectorType::catalog_index && r.catalog_generation == 0)
    return fail(DecodeFault::inconsistent, "connect request: a catalog-index selector needs the catalog generation it indexes");
  return r;
}

// ------------------------------------------------------------------ accept

std::vector<std::uint8_t> encode(const AcceptData& a) {
  WireAccept w{};
  const bool v2 = !a.segments.empty();
  w.header = make_header(MessageType::accept, v2 ? sizeof(WireAcceptV2) : sizeof w, v2 ? kSegmentsVersion : kLayoutVersion1);
  w.catalog_generation = a.catalog_generation;
  w.movie_index = a.movie_index;
  w.granted_read_depth = a.granted_read_depth;
  w.max_message_size = a.max_message_size;
  w.movie = to_wire(a.movie);
  w.catalog = to_wire(a.catalog);
  w.index = to_wire(a.index);
  if (!v2) return to_bytes(w);
  WireAcceptV2 w2{};
  w2.v1 = w;
  w2.segments = to_wire(a.segments);
  w2.movie_size = a.movie_size;
  return to_bytes(w2);
}

Decoded<AcceptData> decode_accept(Bytes buf) {
  auto length = decode_header(buf, MessageType::accept, sizeof(WireAccept));
  if (!length) return length.error();
  const auto w = load_wire<WireAccept>(buf.data());

  AcceptData a;
  a.catalog_generation = w.catalog_generation.get();
  a.movie_index = w.movie_index.get();
  a.granted_read_depth = w.granted_read_depth.get();
  a.max_message_size = w.max_message_size.get();
  auto movie = from_wire(w.movie, "accept: movie descriptor");
  if (!movie) return movie.error();
  auto catalog = from_wire(w.catalog, "accept: catalog descriptor");
  if (!catalog) return catalog.error();
  auto index = from_wire(w.index, "accept: index descriptor");
  if (!index) return index.error();
  a.movie = *movie;
  a.catalog = *catalog;
  a.index = *index;
  if (*length >= sizeof(WireAcceptV2)) {
    auto segments = from_wire(load_wire<WireAcceptV2>(buf.data()).segments, "accept: segment table descriptor");
    if (!segments) return segments.error();
    a.segments = *segments;
    a.movie_size = load_wire<WireAcceptV2>(buf.data()).movie_size.get();
    if (!a.segments.empty() && (a.movie_index == kNoMovie || a.segments.length < 64))
      return fail(DecodeFault::inconsistent, "accept: a segment table without a movie, or shorter than its 64-byte header");
    if (a.segments.empty() && a.movie_size != 0) return fail(DecodeFault::inconsistent, "accept: a movie size without a segment table");
  }

  if (a.catalog_generation == 0) return fail(DecodeFault::bad_field, "accept: catalog generation 0 is reserved");
  if (a.granted_read_depth == 0) return fail(DecodeFault::bad_field, "accept: granted read depth 0 would allow no RDMA Read at all");
  if (a.max_message_size == 0) return fail(DecodeFault::bad_field, "accept: max message size 0");
  if (a.catalog.length < 64)
    return fail(DecodeFault::inconsistent, "accept: catalog region of " + num(a.catalog.length) + " bytes cannot hold its 64-byte header");
  if (a.movie_index == kNoMovie && (!a.movie.empty() || !a.index.empty()))
    return fail(DecodeFault::inconsistent, "accept: movie or index descriptor present without a movie index");
  if (!a.index.empty() && a.index.length < 32)
    return fail(DecodeFault::inconsistent, "accept: index region of " + num(a.index.length) + " bytes cannot hold its 32-byte header");
  return a;
}

// ------------------------------------------------------------------ reject

const char* to_string(RejectCode c) noexcept {
  switch (c) {
    case RejectCode::unknown_movie: return "unknown movie";
    case RejectCode::unsupported_version: return "unsupported version";
    case RejectCode::malformed_request: return "malformed request";
    case RejectCode::server_full: return "server full";
    case RejectCode::unauthorized: return "unauthorized";
    case RejectCode::unsupported_kind: return "unsupported request kind";
    case RejectCode::stale_catalog: return "stale catalog";
    case RejectCode::shutting_down: return "shutting down";
    case RejectCode::internal_error: return "internal error";
    case RejectCode::bad_cookie: return "bad cookie";
    case RejectCode::rate_limited: return "rate limited";
    case RejectCode::source_limit: return "source limit";
  }
  return "unknown reject code";
}

std::vector<std::uint8_t> encode(const RejectData& r) {
  const std::size_t reason_len = std::min(r.reason.size(), kRejectReasonMax);
  WireRejectFixed w{};
  w.header = make_header(MessageType::reject, sizeof w + reason_len);
  w.code = static_cast<std::uint16_t>(r.code);
  w.min_version = r.min_version;
  w.max_version = r.max_version;
  std::vector<std::uint8_t> out(sizeof w + reason_len);
  store_wire(out.data(), w);
  std::transform(r.reason.begin(), r.reason.begin() + static_cast<std::ptrdiff_t>(reason_len), out.begin() + sizeof w, [](char ch) {
    auto c = static_cast<unsigned char>(ch);
    return static_cast<std::uint8_t>(c >= 0x20 && c <= 0x7e ? c : '?');
  });
  return out;
}

Decoded<RejectData> decode_reject(Bytes buf) {
  auto length = decode_header(buf, MessageType::reject, sizeof(WireRejectFixed));
  if (!length) return length.error();
  const auto w = load_wire<WireRejectFixed>(buf.data());
  const std::size_t reason_len = *length - sizeof w;
  if (reason_len > kRejectReasonMax)
    return fail(DecodeFault::bad_length, "reject: reason of " + num(reason_len) + " bytes exceeds " + num(kRejectReasonMax));

  RejectData r;
  const auto code = w.code.get();
  if (code < 1 || code > kMaxRejectCode) return fail(DecodeFault::bad_field, "reject: unknown reject code " + num(code));
  r.code = static_cast<RejectCode>(code);
  r.min_version = w.min_version;
  r.max_version = w.max_version;
  if (r.min_version == 0 || r.min_version > r.max_version)
    return fail(DecodeFault::inconsistent,
                "reject: supported version range " + num(r.min_version) + ".." + num(r.max_version) + " is empty");
  for (std::size_t i = 0; i < reason_len; ++i) {
    const auto c = buf[sizeof w + i];
    if (c < 0x20 || c > 0x7e)
      return fail(DecodeFault::bad_field, "reject: reason byte " + num(i) + " is " + hex(c) + ", not printable ASCII");
    r.reason.push_back(static_cast<char>(c));
  }
  return r;
}

RejectCode reject_code_for(const DecodeError& e) noexcept {
  return e.fault == DecodeFault::unsupported_version ? RejectCode::unsupported_version : RejectCode::malformed_request;
}

std::vector<std::uint8_t> encode_reject(RejectCode code, std::string reason) {
  return encode(RejectData{code, kMinProtocolVersion, kProtocolVersion, std::move(reason)});
}

}  // namespace vod::proto
