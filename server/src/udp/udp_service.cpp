// SPDX-License-Identifier: LGPL-2.1-or-later
#include "udp/udp_service.hpp"

#include <algorithm>
#include <stdexcept>

#include "vod/log.hpp"

namespace vod::server::udp {

namespace {

// A catalog request this small is a status probe, sent before the range being sent (on_request).
constexpr std::uint64_t kUrgentCatalogBytes = 64;

constexpr double kQuantum = 2.0 * kGsoBytes;  // bytes an address may send per turn: two full GSO trains

ClientTable::Limits table_limits(const UdpOptions& o) {
  return {o.max_clients, o.max_sessions_per_client, o.max_jobs_per_client, o.max_jobs, o.idle_client, o.client_rate_bps, o.max_payload};
}

}  // namespace

std::optional<std::string> max_payload_problem(std::uint32_t max_payload) {
  if (max_payload >= defaults::kUdpPayloadMin && max_payload <= defaults::kUdpPayloadMax) return std::nullopt;
  return "--udp-max-payload " + std::to_string(max_payload) + ": must be " + std::to_string(defaults::kUdpPayloadMin) + ".." +
         std::to_string(defaults::kUdpPayloadMax) + " bytes of payload (" + std::to_string(defaults::kUdpPayloadMax) +
         ": the largest UDP datagram over IPv4, 65507 bytes, less the " + std::to_string(sizeof(proto::WireWriteRecordDataHeader)) +
         "-byte Write-Record header)";
}

UdpOptions validated(const UdpOptions& o) {
  if (auto why = max_payload_problem(o.max_payload)) throw std::invalid_argument(*why);
  if (!(o.max_rate_bps > 0) || !(o.client_rate_bps > 0))
    throw std::invalid_argument("--udp-max-rate and --udp-client-rate must be positive");
  if (!(o.min_rate_bps > 0) || o.min_rate_bps > o.client_rate_bps)
    throw std::invalid_argument("the UDP rate floor (" + rate_text(o.min_rate_bps) + ") must be positive and at most --udp-client-rate (" +
                                rate_text(o.client_rate_bps) + "), or no request could be served");
  if (!o.max_jobs_per_client || !o.max_sessions_per_client || !o.max_clients || !o.max_jobs || !o.pre_cookie_slots)
    throw std::invalid_argument("UDP table sizes (jobs, sessions, clients, pre-cookie slots) must be at least 1");
  if (o.job_life.max_life <= std::chrono::milliseconds(0) || o.idle_client < std::chrono::milliseconds(0))
    throw std::invalid_argument("UDP job lifetime must be positive and the idle time at least 0");
  return o;
}

UdpService::UdpService(const UdpOptions& o, cache::SegmentCache* cache)
    : options_(validated(o)),
      socket_(o.bind, o.port, o.zero_copy),
      pre_cookie_(o.pre_cookie_slots, random_hash_key(), o.pre_cookie, Clock::now()),
      hellos_total_(20000, 20000, Clock::now()),
      drops_(o.test_drop),
      table_(table_limits(o), kQuantum, stats_),
      sender_(options_, socket_, table_, cache, drops_, stats_,
              [this](const Endpoint& to, const AddressKey& key, std::size_t size, proto::WriteRecordError e) {
                send_error(to, key, size, std::move(e), Clock::now());
              }) {
  log::info("udp", "Write-Record on " + o.bind + ":" + std::to_string(port()) + ", at most " + rate_text(o.max_rate_bps) + " in all and " +
                       rate_text(o.client_rate_bps) + " per client address (IPv6: /64), requests for less than " +
                       rate_text(o.min_rate_bps) + " refused" + (socket_.gso() ? ", UDP GSO" : ", no UDP GSO in this kernel") +
                       (zero_copy_stats() ? ", MSG_ZEROCOPY sends of loaded movies" : ""));
}

std::uint64_t UdpService::now_seconds(Clock::time_point now) const {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(now - started_).count()) + 1'000'000;
}

void UdpService::on_readable() {
  sender_.reap_zero_copy();                   // the error queue makes the socket ready too
  for (int round = 0; round < 16; ++round) {  // bounded: other fds get their turn
    const std::size_t n = socket_.receive();
    const auto now = Clock::now();
    for (std::size_t i = 0; i < n; ++i) {
      const UdpSocket::Datagram d = socket_.received(i);
      if (d.truncated) ++stats_.dropped;  // larger than any request
      else handle(d.bytes, d.from, now);
    }
    if (n < UdpSocket::kBatch) break;
  }
  sender_.pump(Clock::now());
}

void UdpService::handle(std::span<const std::uint8_t> datagram, const Endpoint& from, Clock::time_point now) {
  const proto::Bytes b(datagram.data(), datagram.size());
  if (b.size() < sizeof(proto::WireHeader)) {
    ++stats_.dropped;
    return;
  }
  const auto h = proto::load_wire<proto::WireHeader>(b.data());
  if (h.magic.get() != proto::kMagic) {
    ++stats_.dropped;  // not ours: no answer (an answer to garbage is a reflector)
    return;
  }
  // Nothing is allocated for the sender here: until its cookie verifies it has only its slot of
  // the pre-cookie table.
  const AddressKey key = address_key(from.addr);
  switch (static_cast<proto::MessageType>(h.type)) {
    case proto::MessageType::write_record_hello: return on_hello(b, from, key, now);
    case proto::MessageType::write_record_request: return on_request(b, from, key, now);
    default: ++stats_.dropped;
  }
}

void UdpService::on_hello(proto::Bytes b, const Endpoint& from, const AddressKey& key, Clock::time_point now) {
  auto hello = proto::decode_write_record_hello(b);
  if (!hello) {
    ++stats_.dropped;
    return;
  }
  ++stats_.hellos;
  // A flood of hellos (possibly with forged sources) gets cookies only as fast as the budgets allow.
  if (hellos_total_.available(now) < 1 || !pre_cookie_.take_hello(key, now)) {
    ++stats_.dropped;
    return;
  }
  hellos_total_.take(1);
  proto::WriteRecordCookie cookie{hello->nonce, cookies_.make(from.addr, now_seconds(now)), CookieJar::kWindowSeconds,
                                  options_.max_payload};
  socket_.send_small(from, proto::encode(cookie));  // 48 bytes in answer to 64
}

void UdpService::on_request(proto::Bytes b, const Endpoint& from, const AddressKey& key, Clock::time_point now) {
  auto r = proto::decode_write_record_request(b);
  if (!r) {
    // Echo what identifies the request (session, epoch, record), as far as it arrived.
    const proto::WriteRecordIds ids = proto::peek_write_record_ids(b);
    return send_error(from, key, b.size(),
                      {ids.session_id, ids.epoch, ids.record_seq, proto::reject_code_for(r.error()), r.error().message}, now);
  }
  ++stats_.requests;
  auto refuse = [&](proto::RejectCode code, std::string reason) {
    send_error(from, key, b.size(), {r->session_id, r->epoch, r->record_seq, code, std::move(reason)}, now);
  };
  if (!cookies_.valid(r->cookie, from.addr, now_seconds(now))) {
    ++stats_.bad_cookies;
    return refuse(proto::RejectCode::bad_cookie, "no valid cookie: say hello again");
  }
  if (!regions_) return refuse(proto::RejectCode::shutting_down, "not serving yet");
  // The address proved it receives: from here it may have state, within bounds.
  Client* c = table_.client_for(key, now);
  if (!c) {
    ++stats_.rate_limited;
    return refuse(proto::RejectCode::rate_limited, "server busy: too many clients; ask later");
  }
  Session* s = table_.session_for(*c, r->session_id, port_of(from.addr), r->epoch, now);
  if (!s) {
    ++stats_.rate_limited;
    return refuse(proto::RejectCode::rate_limited, "too many sessions of your address at once");
  }
  s->last = now;
  // A newer epoch of a session supersedes what its older epochs still had queued (a seek).
  if (static_cast<std::int32_t>(r->epoch - s->epoch) < 0) {
    ++stats_.superseded;  // a request from before the client's last seek: nobody wants it any more
    return;
  }
  if (r->epoch != s->epoch) table_.supersede(*c, *s, r->epoch, now);
  if (!table_.room_for_job(*c)) {
    ++stats_.rate_limited;
    return refuse(proto::RejectCode::rate_limited, "too many ranges queued; ask again when these arrived");
  }
  UdpDecision d =
      admit_udp(*r, regions_, {defaults::kUdpMaxRecord, options_.max_payload, static_cast<std::uint64_t>(options_.min_rate_bps)});
  if (auto* e = std::get_if<proto::WriteRecordError>(&d)) return send_error(from, key, b.size(), std::move(*e), now);
  const double rate = std::min<double>(static_cast<double>(r->rate_bps), options_.client_rate_bps) / 8;
  s->pace.set_rate(rate, burst_for(rate, options_.max_payload));
  // A session (an address) with nothing queued starts its record with a full burst, not in slices
  // paced by timer wake-ups.
  if (s->jobs.empty()) s->pace.fill();
  if (c->jobs == 0) c->bucket.fill();
  Job j;
  j.epoch = r->epoch;
  j.record_seq = r->record_seq;
  j.buffer_offset = r->buffer_offset;
  j.data = std::get<UdpJob>(std::move(d));
  j.to = from;
  j.deadline = job_deadline(now, r->length, rate * 8, options_.job_life);
  j.mark = drops_.admit(r->session_id, r->record_seq);
  j.request_size = b.size();
  // A few bytes of the catalog (a fleet client's probe of the server's status words) go before the
  // range being sent: queued behind a megabyte paced at a few Mbit/s, the status would come seconds
  // late, and a draining server would be noticed only when it stopped.
  const bool urgent = r->region == proto::WriteRecordRegion::catalog && r->length <= kUrgentCatalogBytes;
  table_.add_job(*c, *s, std::move(j), urgent);
}

void UdpService::send_error(const Endpoint& to, const AddressKey& key, std::size_t request_size, proto::WriteRecordError e,
                            Clock::time_point now) {
  // The reason is shortened to fit, and a datagram too small to hold an error gets none.
  if (request_size < sizeof(proto::WireWriteRecordErrorFixed) || !pre_cookie_.take_error(key, now)) {
    ++stats_.dropped;
    return;
  }
  auto bytes = proto::encode(e);
  if (bytes.size() > request_size) {
    e.reason.resize(request_size - sizeof(proto::WireWriteRecordErrorFixed));
    bytes = proto::encode(e);
  }
  ++stats_.errors_sent;
  socket_.send_small(to, bytes);
}

}  // namespace vod::server::udp
