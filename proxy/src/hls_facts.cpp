// SPDX-License-Identifier: LGPL-2.1-or-later
#include "hls_facts.hpp"

#include <algorithm>

#include "vod/client/errors.hpp"
#include "vod/log.hpp"
#include "vod/media/stream_codecs.hpp"

namespace vod::proxy {

namespace {

constexpr std::size_t kTsHeadBytes = 64 * 1024;  // a TS file's leading tables are in its first packets
constexpr std::size_t kMaxCached = 4096;          // movies; older generations go first

std::string codecs_of(const media::StreamCodecs& c) {
  std::vector<std::string> parts;
  if (c.avc) {
    if (auto s = hls::avc_codec(c.avc->profile_idc, c.avc->constraint_flags, c.avc->level_idc)) parts.push_back(*s);
  }
  if (c.aac_object_type) {
    if (auto s = hls::aac_codec(*c.aac_object_type)) parts.push_back(*s);
  }
  // A stream whose codec string is not known makes the attribute wrong: then none is given.
  const std::size_t streams = (c.video_codec.empty() ? 0 : 1) + (c.audio_codec.empty() ? 0 : 1);
  if (parts.size() != streams) return "";
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ",") + p;
  return out;
}

}  // namespace

HlsFacts::HlsFacts(boost::asio::io_context& io, HlsSettings settings) : io_(io), settings_(std::move(settings)) {
  worker_ = std::thread([this] { work(); });
}

HlsFacts::~HlsFacts() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

void HlsFacts::get(const std::string& name, std::uint32_t generation, Done done) {
  const Key key{name, generation};
  if (const auto it = cache_.find(key); it != cache_.end()) {
    boost::asio::post(io_, [done = std::move(done), facts = it->second] { done(facts); });
    return;
  }
  auto& waiters = waiting_[key];
  waiters.push_back(std::move(done));
  if (waiters.size() > 1) return;  // queued already
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(key);
  }
  wake_.notify_one();
}

void HlsFacts::work() {
  for (;;) {
    Key key;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      key = queue_.front();
      queue_.pop_front();
    }
    const auto started = std::chrono::steady_clock::now();
    hls::MovieFacts facts;
    try {
      facts = make(key);
    } catch (const std::exception& e) {
      session_.reset();  // the server or the connection: a new one for the next job
      facts.error = e.what();
      facts.retry = true;
    }
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
    if (facts.error.empty())
      log::info("hls", "'" + key.first + "': " + std::to_string(facts.segments.size()) + " segments, codecs \"" + facts.codecs + "\" in " +
                           std::to_string(ms) + " ms");
    else
      log::warn("hls", "'" + key.first + "': no playlist: " + facts.error);
    boost::asio::post(io_, [this, key, facts = std::move(facts)]() mutable { finish(key, std::move(facts)); });
  }
}

hls::MovieFacts HlsFacts::make(const Key& key) {
  const auto& [name, generation] = key;
  if (session_ && session_->catalog().generation != generation) session_.reset();  // a new catalog: a new connection
  if (!session_) {
    client::Uri uri = settings_.server;
    uri.movie = name;
    session_ = std::make_unique<client::Session>(uri, settings_.session);
  } else if (!session_->movie() || session_->movie()->name != name) {
    session_->switch_movie(name);
  }
  client::Session& s = *session_;
  const proto::CatalogEntry movie = *s.movie();
  hls::MovieFacts facts;
  const proto::KeyframeIndex& index = s.index();
  if (index.entries.empty()) {
    facts.retry = (movie.flags & proto::kEntryHasIndex) != 0;
    facts.error = facts.retry ? "the server is still building the keyframe index of '" + name + "'; try again in a few seconds"
                              : "'" + name + "' has no keyframe index (no video stream the server could index), so it cannot be cut into HLS segments";
    return facts;
  }
  facts.segments = hls::cut_segments(index, movie.size, movie.duration_us, settings_.target_us);
  auto read_at = [&s](std::uint64_t offset, std::span<std::uint8_t> dest) { return s.pread(offset, dest); };
  if (movie.container == "mpegts") {
    std::vector<std::uint8_t> head(static_cast<std::size_t>(std::min<std::uint64_t>(movie.size, kTsHeadBytes)));
    head.resize(s.pread(0, head));
    facts.ts_init = hls::ts_init_range(head);
    if (!facts.ts_init) log::warn("hls", "'" + name + "': no PAT and PMT ahead of the media in its first packets; its playlist has no EXT-X-MAP");
  }
  const media::StreamCodecs codecs = media::stream_codecs(movie.size, read_at);
  facts.codecs = codecs_of(codecs);
  if (facts.codecs.empty()) log::warn("hls", "'" + name + "': codecs not known, the multivariant playlist names none: " + codecs.note);
  return facts;
}

void HlsFacts::finish(const Key& key, hls::MovieFacts facts) {
  auto shared = std::make_shared<const hls::MovieFacts>(std::move(facts));
  if (!shared->retry) {
    for (auto it = cache_.begin(); it != cache_.end();) it = it->first.second < key.second ? cache_.erase(it) : std::next(it);
    if (cache_.size() >= kMaxCached) cache_.clear();
    cache_[key] = shared;
  }
  auto waiters = std::move(waiting_[key]);
  waiting_.erase(key);
  for (auto& done : waiters) done(shared);
}

}  // namespace vod::proxy
