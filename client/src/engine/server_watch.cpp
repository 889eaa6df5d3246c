// SPDX-License-Identifier: LGPL-2.1-or-later
// The read engine's watch of its server, for a session in a fleet (ReadEngine::watch_server): the
// probes of the server's status words, what they saw, and the decider's verdict (engine/liveness.hpp)
// thrown as a lost connection. The third part of ReadEngine::Impl, beside the driver
// (read_engine.cpp) and the direct transfers (engine/direct_transfers.cpp).
#include "engine/read_engine_impl.hpp"
#include "vod/log.hpp"

namespace vod::client {

void ReadEngine::Impl::post_probe(Clock::time_point now) {
  // The status words are the catalog header's bytes 44-51: one small Read (or Write-Record range)
  // every probe_every, whatever the reader does; the server's CPU does nothing for it over RDMA.
  const auto& catalog = regions[static_cast<std::size_t>(Region::catalog)];
  if (probe_in_flight || now < next_probe || catalog.length < proto::kServerStatusOffset + proto::kServerStatusLength) return;
  if (in_flight == 0) last_progress = now;  // the stuck clock starts with the first fetch after idle (see issue())
  fetcher->fetch(driver::kProbeId, Region::catalog, catalog, proto::kServerStatusOffset, proto::kServerStatusLength, probe_dest());
  probe_in_flight = true;
  probe_posted = now;
  next_probe = now + liveness->probe_every;
}

void ReadEngine::Impl::on_probe_done(bool ok, const std::string& why) {
  if (!probe_in_flight) return;
  probe_in_flight = false;
  last_progress = Clock::now();
  if (!ok) {
    if (failure.empty()) failure = why;
    return;
  }
  if (auto bad = heartbeat.observe_probe({probe_dest(), proto::kServerStatusLength}, probe_posted, last_progress)) {
    log::warn("client", "cannot read the server's status words (" + *bad + "); not watching them any more");
    liveness.reset();
  }
}

void ReadEngine::Impl::check_alive(Clock::time_point now) {
  using engine::Verdict;
  const auto j = engine::judge(
      heartbeat, {now, in_flight > 0 || probe_in_flight, last_sign_of_life(), deadline_latency(), fetcher->waits_on_server()}, *liveness);
  if (j.verdict != Verdict::alive) throw ConnectionLost(j.why);
  if (!hung_logged && heartbeat.still_for() >= liveness->hung_after) {
    hung_logged = true;
    log::warn("client", "the server's heartbeat stood still for " + std::to_string(heartbeat.still_for().count()) +
                            " ms; its Reads still complete, so reading goes on until something needs its process");
  }
}

}  // namespace vod::client
