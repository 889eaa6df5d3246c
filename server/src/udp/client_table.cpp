// SPDX-License-Identifier: LGPL-2.1-or-later
#include "udp/client_table.hpp"

#include <algorithm>

#include "vod/log.hpp"

namespace vod::server::udp {

double burst_for(double bytes_per_second, std::uint32_t max_payload) {
  return std::max({64e3, bytes_per_second / 100, 2.0 * static_cast<double>(max_payload + sizeof(proto::WireWriteRecordDataHeader))});
}

ClientTable::ClientTable(const Limits& limits, double quantum, UdpStats& stats)
    : limits_(limits), clients_(64, AddressHasher{random_hash_key()}), ready_(quantum), stats_(stats) {}

Client* ClientTable::find(const AddressKey& key) {
  auto it = clients_.find(key);
  return it == clients_.end() ? nullptr : &it->second;
}

Client* ClientTable::client_for(const AddressKey& key, Clock::time_point now) {
  if (Client* c = find(key)) return c;
  if (clients_.size() >= limits_.max_clients) {
    if (idle_.empty()) {
      if (!table_full_)
        log::warn("udp", "the client table is full (" + std::to_string(clients_.size()) +
                             " addresses with ranges queued): new addresses, " + to_string(key) + " first, are refused until one is done");
      table_full_ = true;
      return nullptr;
    }
    forget(clients_.find(idle_.front())->second);  // the one idle longest
  } else {
    table_full_ = false;
  }
  const double rate = limits_.client_rate_bps / 8;
  Client& c = clients_.try_emplace(key).first->second;
  c.key = key;
  c.bucket = TokenBucket(rate, burst_for(rate, limits_.max_payload), now);
  set_idle(c, now);
  return &c;
}

Session* ClientTable::session_for(Client& c, std::uint32_t id, std::uint16_t port, std::uint32_t epoch, Clock::time_point now) {
  for (Session& s : c.sessions)
    if (s.id == id && s.port == port) return &s;
  if (c.sessions.size() >= limits_.max_sessions_per_client) {
    // Forget the session that has waited longest with nothing queued (its epoch with it: a request
    // of its that comes later starts it again).
    auto victim = c.sessions.end();
    for (auto it = c.sessions.begin(); it != c.sessions.end(); ++it)
      if (it->jobs.empty() && (victim == c.sessions.end() || it->last < victim->last)) victim = it;
    if (victim == c.sessions.end()) return nullptr;
    c.sessions.erase(victim);
    --sessions_;
    c.next_session = 0;
  }
  const double rate = limits_.client_rate_bps / 8;
  c.sessions.push_back(Session{id, port, epoch, TokenBucket(rate, burst_for(rate, limits_.max_payload), now), {}, now});
  ++sessions_;
  return &c.sessions.back();
}

void ClientTable::drop_jobs(Client& c, std::size_t n) noexcept {
  c.jobs -= n;
  jobs_ -= n;
}

void ClientTable::supersede(Client& c, Session& s, std::uint32_t epoch, Clock::time_point now) {
  s.epoch = epoch;
  const auto before = s.jobs.size();
  std::erase_if(s.jobs, [](const Job& j) { return j.sent == 0; });
  if (s.jobs.empty()) std::vector<Job>().swap(s.jobs);
  const std::size_t dropped = before - s.jobs.size();
  drop_jobs(c, dropped);
  stats_.superseded += dropped;
  if (c.jobs == 0 && c.where == Client::Where::asleep) set_idle(c, now);
}

void ClientTable::add_job(Client& c, Session& s, Job j, bool urgent) {
  c.earliest_deadline = std::min(c.earliest_deadline, j.deadline);
  // An urgent job goes before the one being sent, which keeps its place (Job::sent) and goes on after.
  if (urgent) s.jobs.insert(s.jobs.begin(), std::move(j));
  else s.jobs.push_back(std::move(j));
  ++c.jobs;
  ++jobs_;
  enqueue(c);
}

void ClientTable::finish_front_job(Client& c, Session& s) {
  s.jobs.erase(s.jobs.begin());
  if (s.jobs.empty()) std::vector<Job>().swap(s.jobs);  // a session's memory goes with its last job
  drop_jobs(c, 1);
}

void ClientTable::expire_jobs(Client& c, Clock::time_point now) {
  std::size_t dropped = 0;
  Clock::time_point earliest = Clock::time_point::max();
  for (Session& s : c.sessions) {
    const std::size_t before = s.jobs.size();
    std::erase_if(s.jobs, [&](const Job& j) { return j.deadline <= now; });
    dropped += before - s.jobs.size();
    for (const Job& j : s.jobs) earliest = std::min(earliest, j.deadline);
    if (s.jobs.empty()) std::vector<Job>().swap(s.jobs);
  }
  c.earliest_deadline = earliest;
  if (!dropped) return;
  drop_jobs(c, dropped);
  stats_.expired += dropped;
  log::debug("udp",
             to_string(c.key) + ": dropped " + std::to_string(dropped) + " range(s) not sent by their deadline (the client asks again)");
}

void ClientTable::enqueue(Client& c) {
  if (c.where == Client::Where::ready) return;
  if (c.where == Client::Where::idle) idle_.erase(c.idle_at);
  ready_.push(&c);
  c.where = Client::Where::ready;
  c.wake = Clock::time_point::max();  // an entry it may have in sleepers_ is stale now
}

void ClientTable::set_idle(Client& c, Clock::time_point now) {
  c.wake = Clock::time_point::max();
  c.earliest_deadline = Clock::time_point::max();
  c.idle_at = idle_.insert(idle_.end(), c.key);
  c.where = Client::Where::idle;
  c.idle_since = now;
}

void ClientTable::front_goes_idle(Clock::time_point now) {
  Client& c = front();
  ready_.pop();
  set_idle(c, now);
}

void ClientTable::front_sleeps(Clock::time_point until) {
  Client& c = front();
  ready_.pop();
  c.where = Client::Where::asleep;
  c.wake = until;
  sleepers_.push({until, c.key});
}

void ClientTable::forget(Client& c) {
  // Entries of it in sleepers_ are stale and found so by key.
  idle_.erase(c.idle_at);
  sessions_ -= c.sessions.size();
  ++stats_.clients_forgotten;
  clients_.erase(c.key);
}

void ClientTable::sweep_idle(Clock::time_point now) {
  while (!idle_.empty()) {
    Client& c = clients_.find(idle_.front())->second;
    if (now - c.idle_since < limits_.idle_client) break;
    forget(c);
  }
}

void ClientTable::wake_sleepers(Clock::time_point now) {
  while (!sleepers_.empty() && sleepers_.top().at <= now) {
    const WakeAt w = sleepers_.top();
    sleepers_.pop();
    Client* c = find(w.key);
    if (!c || c->where != Client::Where::asleep || c->wake != w.at) continue;  // stale
    enqueue(*c);
  }
}

Clock::time_point ClientTable::next_wake() const noexcept { return sleepers_.empty() ? Clock::time_point::max() : sleepers_.top().at; }

Clock::time_point ClientTable::next_forget() const {
  if (idle_.empty()) return Clock::time_point::max();
  return clients_.find(idle_.front())->second.idle_since + std::chrono::duration_cast<Clock::duration>(limits_.idle_client);
}

}  // namespace vod::server::udp
