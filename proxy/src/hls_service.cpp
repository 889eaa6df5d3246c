// SPDX-License-Identifier: LGPL-2.1-or-later
#include "hls_service.hpp"

#include <algorithm>

#include "vod/log.hpp"
#include "vod/media/fmp4_remux.hpp"
#include "vod/media/stream_codecs.hpp"
#include "vod/media/subtitles.hpp"
#include "vod/protocol/live_window.hpp"

namespace vod::proxy {

namespace {

constexpr std::size_t kTsHeadBytes = 64 * 1024;  // a TS file's leading tables are in its first packets
constexpr std::size_t kMaxFacts = 4096;          // movies; older generations go first

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

std::string piece_name(long segment) { return segment < 0 ? std::string("init.mp4") : "seg-" + std::to_string(segment) + ".m4s"; }

}  // namespace

HlsService::HlsService(boost::asio::io_context& io, HlsSettings settings) : io_(io), settings_(std::move(settings)) {
  worker_ = std::thread([this] { work(); });
}

HlsService::~HlsService() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

void HlsService::run(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(task));
  }
  wake_.notify_one();
}

void HlsService::work() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

// ---------------------------------------------------------------- facts

void HlsService::facts(const std::string& name, std::uint32_t generation, FactsDone done) {
  const FactsKey key{name, generation};
  if (const auto it = facts_.find(key); it != facts_.end()) {
    boost::asio::post(io_, [done = std::move(done), f = it->second] { done(f); });
    return;
  }
  auto& waiters = facts_waiting_[key];
  waiters.push_back(std::move(done));
  if (waiters.size() > 1) return;  // under way
  run([this, key] {
    const auto started = std::chrono::steady_clock::now();
    hls::MovieFacts f;
    try {
      f = make_facts(key);
    } catch (const std::exception& e) {
      session_.reset();  // the server or the connection: a new one for the next job
      f.error = e.what();
      f.retry = true;
    }
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
    if (f.error.empty())
      log::info("hls", "'" + key.first + "': " + std::to_string(f.segments.size()) + " segments, codecs \"" + f.codecs + "\" in " +
                           std::to_string(ms) + " ms");
    else log::warn("hls", "'" + key.first + "': no playlist: " + f.error);
    boost::asio::post(io_, [this, key, f = std::move(f)]() mutable { facts_made(key, std::move(f)); });
  });
}

void HlsService::dvr(const std::string& window, std::uint32_t generation, bool skip, PieceDone done) {
  run([this, window, generation, skip, done = std::move(done)]() mutable {
    auto piece = std::make_shared<HlsPiece>();
    try {
      client::Session& s = session_for(window, generation);
      auto index = proto::decode_window(s.read_window_index());
      if (!index) {
        piece->retry = index.error().message.find("torn") != std::string::npos;
        piece->error = "the window index of '" + window + "' does not decode: " + index.error().message;
      } else {
        const unsigned target = static_cast<unsigned>((settings_.target_us + 999'999) / 1'000'000);
        piece->bytes = hls::dvr_playlist(*index, "dvr.ts", target, skip);
      }
    } catch (const std::exception& e) {
      piece->retry = true;
      piece->error = std::string("the DVR window of '") + window + "': " + e.what();
      session_.reset();  // a new connection for the next one
    }
    boost::asio::post(io_, [done = std::move(done), piece] { done(piece); });
  });
}

client::Session& HlsService::session_for(const std::string& name, std::uint32_t generation) {
  if (session_ && !settings_.server.cluster && session_->catalog().generation != generation)
    session_.reset();  // a new catalog: a new connection (a fleet's switches always connect)
  // A server registers its generation again when it has probed a movie it listed unprobed at start
  // (raw bytes until then): HLS is asked for media only, so a session whose catalog still lists the
  // movie as raw bytes has an older registration; a new connection reads the current one.
  if (session_ && !settings_.server.cluster) {
    const proto::CatalogEntry* listed = session_->catalog().find(name);
    if (!listed || !(listed->flags & proto::kEntryIsMedia)) session_.reset();
  }
  if (!session_) {
    client::Uri uri = settings_.server;
    uri.movie = name;
    session_ = std::make_unique<client::Session>(uri, settings_.session);
  } else if (!session_->movie() || session_->movie()->name != name) {
    session_->switch_movie(name);
  }
  return *session_;
}

hls::MovieFacts HlsService::make_facts(const FactsKey& key) {
  const auto& [name, generation] = key;
  client::Session& s = session_for(name, generation);
  const proto::CatalogEntry movie = *s.movie();
  hls::MovieFacts facts;
  facts.fmp4 = movie.container != "mpegts";
  const proto::KeyframeIndex& index = s.index();
  if (index.entries.empty()) {
    facts.retry = (movie.flags & proto::kEntryHasIndex) != 0;
    facts.error =
        facts.retry
            ? "the server is still building the keyframe index of '" + name + "'; try again in a few seconds"
            : "'" + name + "' has no keyframe index (no video stream the server could index), so it cannot be cut into HLS segments";
    return facts;
  }
  facts.segments = hls::cut_segments(index, movie.size, movie.duration_us, settings_.target_us);
  const proto::KeyframeIndex own = index;  // a copy: title_reference switches the session to another movie
  for (const auto& k : own.entries) facts.keyframes_us.push_back(k.time_us);
  facts.duration_us = movie.duration_us;
  if (auto reference = title_reference(s, name, generation, facts.segments)) {
    // A rendition of a title: cut where the title is, so every rendition lists the same segments.
    client::Session& back = session_for(name, generation);  // no switch when the cut was kept
    facts.segments = hls::cut_like(reference->segments, own, movie.size, movie.duration_us, reference->tolerance_us);
    if (facts.segments.empty()) {
      facts.error = "'" + name + "' is in title '" + reference->title + "', but its keyframes are not where its first rendition's are";
      return facts;
    }
    return finish_facts(back, movie, std::move(facts));
  }
  return finish_facts(s, movie, std::move(facts));
}

std::optional<HlsService::TitleCut> HlsService::title_reference(client::Session& s, const std::string& name, std::uint32_t generation,
                                                                const std::vector<hls::Segment>& own_cut) {
  const proto::Catalog& catalog = s.catalog();
  const proto::CatalogEntry* self = catalog.find(name);
  if (!self) return std::nullopt;
  const auto entry = static_cast<std::uint32_t>(self - catalog.entries.data());
  const proto::Title* title = proto::title_of_rendition(catalog.titles, entry);
  if (!title) return std::nullopt;
  if (title->renditions.front().entry == entry) {  // the reference itself: its cut is the title's
    if (title_cuts_.size() >= kMaxFacts) title_cuts_.clear();
    title_cuts_[{name, generation}] = own_cut;
    return std::nullopt;
  }
  const proto::TitleRendition first = title->renditions.front();
  const auto mine = std::find_if(title->renditions.begin(), title->renditions.end(), [&](const auto& r) { return r.entry == entry; });
  TitleCut cut;
  cut.title = title->name;
  cut.tolerance_us = proto::alignment_tolerance_us(first, *mine);
  const std::string first_name = catalog.entries.at(first.entry).name;  // copied: the switch below may replace the catalog
  if (const auto kept = title_cuts_.find({first_name, generation}); kept != title_cuts_.end()) {
    cut.segments = kept->second;
    return cut;
  }
  client::Session& r = session_for(first_name, generation);
  const proto::CatalogEntry reference = *r.movie();
  cut.segments = hls::cut_segments(r.index(), reference.size, reference.duration_us, settings_.target_us);
  if (title_cuts_.size() >= kMaxFacts) title_cuts_.clear();
  title_cuts_[{first_name, generation}] = cut.segments;
  return cut;
}

hls::MovieFacts HlsService::finish_facts(client::Session& s, const proto::CatalogEntry& movie, hls::MovieFacts facts) {
  const std::string& name = movie.name;
  auto read_at = [&s](std::uint64_t offset, std::span<std::uint8_t> dest) { return s.pread(offset, dest); };
  if (!facts.fmp4) {
    std::vector<std::uint8_t> head(static_cast<std::size_t>(std::min<std::uint64_t>(movie.size, kTsHeadBytes)));
    head.resize(s.pread(0, head));
    facts.ts_init = hls::ts_init_range(head);
    if (!facts.ts_init)
      log::warn("hls", "'" + name + "': no PAT and PMT ahead of the media in its first packets; its playlist has no EXT-X-MAP");
  }
  const media::StreamCodecs codecs = media::stream_codecs(movie.size, read_at);
  facts.codecs = codecs_of(codecs);
  // The movie's time 0 in its segments' 90 kHz clock: TS segments keep its own timestamps, the
  // fMP4 remux shifts them (kFmp4ShiftUs).
  const std::int64_t zero_us = codecs.start_time_us + (facts.fmp4 ? media::kFmp4ShiftUs : 0);
  facts.mpegts_at_zero = static_cast<std::uint64_t>(std::max<std::int64_t>(zero_us, 0)) * 9 / 100 % (1ull << 33);
  if (facts.codecs.empty()) log::warn("hls", "'" + name + "': codecs not known, the multivariant playlist names none: " + codecs.note);
  return facts;
}

void HlsService::cues(const std::string& name, std::uint32_t generation, int stream, CuesDone done) {
  const CuesKey key{name, generation, stream};
  if (const auto it = cues_.find(key); it != cues_.end()) {
    boost::asio::post(io_, [done = std::move(done), c = it->second] { done(c); });
    return;
  }
  auto& waiters = cues_waiting_[key];
  waiters.push_back(std::move(done));
  if (waiters.size() > 1) return;  // under way
  run([this, key] {
    hls::Cues c;
    try {
      client::Session& s = session_for(std::get<0>(key), std::get<1>(key));
      auto read_at = [&s](std::uint64_t offset, std::span<std::uint8_t> dest) { return s.pread(offset, dest); };
      c.cues = media::read_cues(s.size(), read_at, std::get<2>(key));
      log::info("hls", "'" + std::get<0>(key) + "': " + std::to_string(c.cues.size()) + " subtitle cues");
    } catch (const media::SubtitleError& e) {
      c.error = "'" + std::get<0>(key) + "': " + e.what();  // the file's content: the same next time
    } catch (const std::exception& e) {
      session_.reset();
      c.error = "'" + std::get<0>(key) + "': " + e.what();
      c.retry = true;
    }
    if (!c.error.empty()) log::warn("hls", "no subtitles: " + c.error);
    boost::asio::post(io_, [this, key, c = std::move(c)]() mutable {
      auto shared = std::make_shared<const hls::Cues>(std::move(c));
      if (!shared->retry) {
        if (cues_.size() >= kMaxFacts) cues_.clear();  // bounded as the facts are
        cues_[key] = shared;
      }
      auto done_list = std::move(cues_waiting_[key]);
      cues_waiting_.erase(key);
      for (auto& d : done_list) d(shared);
    });
  });
}

void HlsService::facts_made(const FactsKey& key, hls::MovieFacts f) {
  auto shared = std::make_shared<const hls::MovieFacts>(std::move(f));
  if (!shared->retry) {
    for (auto it = facts_.begin(); it != facts_.end();) it = it->first.second < key.second ? facts_.erase(it) : std::next(it);
    if (facts_.size() >= kMaxFacts) facts_.clear();
    facts_[key] = shared;
  }
  auto waiters = std::move(facts_waiting_[key]);
  facts_waiting_.erase(key);
  for (auto& done : waiters) done(shared);
}

// ---------------------------------------------------------------- fMP4 pieces

void HlsService::piece(const std::string& name, std::uint32_t generation, std::optional<unsigned> segment, int tracks, bool iframe,
                       PieceDone done) {
  const PieceKey key{name, generation, segment ? static_cast<long>(*segment) : -1L, tracks, iframe};
  if (const auto it = pieces_.find(key); it != pieces_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second.second);
    boost::asio::post(io_, [done = std::move(done), p = it->second.first] { done(p); });
    return;
  }
  auto& waiters = piece_waiting_[key];
  waiters.push_back(std::move(done));
  if (waiters.size() > 1) return;  // under way
  // The segment's times come from the facts (cut from the index), which may need a job first.
  facts(name, generation, [this, key](std::shared_ptr<const hls::MovieFacts> f) {
    const long n = std::get<2>(key);
    const std::size_t count = std::get<4>(key) ? f->keyframes_us.size() : f->segments.size();
    if (!f->error.empty() || (n >= 0 && static_cast<std::size_t>(n) >= count)) {
      HlsPiece p;
      p.error = !f->error.empty() ? f->error
                                  : "'" + std::get<0>(key) + "' has " + std::to_string(f->segments.size()) +
                                        " segments, numbered from 0; there is no " + piece_name(n);
      p.retry = f->retry;
      return piece_made(key, std::move(p));
    }
    std::uint64_t start = 0, end = 0;
    if (n >= 0 && std::get<4>(key)) {
      start = f->keyframes_us[static_cast<std::size_t>(n)];
      end = start + 1;  // the keyframe alone (keyframe_only)
    } else if (n >= 0) {
      const hls::Segment& s = f->segments[static_cast<std::size_t>(n)];
      start = s.start_us;
      // The last segment runs to the end of the movie, whatever its stated duration.
      end = static_cast<std::size_t>(n) + 1 == f->segments.size() ? s.start_us + s.duration_us + 3'600'000'000ull
                                                                  : s.start_us + s.duration_us;
    }
    run([this, key, start, end] {
      HlsPiece p = make_piece(key, start, end);
      boost::asio::post(io_, [this, key, p = std::move(p)]() mutable { piece_made(key, std::move(p)); });
    });
  });
}

HlsPiece HlsService::make_piece(const PieceKey& key, std::uint64_t start_us, std::uint64_t end_us) {
  const auto& [name, generation, n, tracks, iframe] = key;
  const auto started = std::chrono::steady_clock::now();
  HlsPiece p;
  try {
    client::Session& s = session_for(name, generation);
    const std::uint64_t size = s.size();
    auto read_at = [&s](std::uint64_t offset, std::span<std::uint8_t> dest) { return s.pread(offset, dest); };
    media::Fmp4Options options;
    if (tracks == hls::kVideoTrack) options.tracks = media::Fmp4Options::Tracks::video;
    if (tracks >= 0) options.tracks = media::Fmp4Options::Tracks::audio, options.audio_stream = tracks;
    options.keyframe_only = iframe;
    const std::vector<std::uint8_t> bytes =
        n < 0 ? media::fmp4_init_segment(size, read_at, options)
              : media::fmp4_media_segment(size, read_at, start_us, end_us, static_cast<unsigned>(n), options);
    p.bytes.assign(bytes.begin(), bytes.end());
  } catch (const media::Fmp4Error& e) {
    p.error = "'" + name + "' " + piece_name(n) + ": " + e.what();  // the movie's content: the same next time
  } catch (const std::exception& e) {
    session_.reset();
    p.error = "'" + name + "' " + piece_name(n) + ": " + e.what();
    p.retry = true;
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
  if (p.error.empty())
    log::debug("hls",
               "'" + name + "' " + piece_name(n) + ": " + std::to_string(p.bytes.size()) + " B remuxed in " + std::to_string(ms) + " ms");
  else log::warn("hls", p.error);
  return p;
}

void HlsService::piece_made(const PieceKey& key, HlsPiece piece) {
  auto shared = std::make_shared<const HlsPiece>(std::move(piece));
  if (!shared->retry && shared->bytes.size() <= settings_.cache_bytes) {
    lru_.push_front(key);
    pieces_[key] = {shared, lru_.begin()};
    piece_bytes_ += shared->bytes.size();
    while (piece_bytes_ > settings_.cache_bytes && !lru_.empty()) {  // least recently used out
      const auto it = pieces_.find(lru_.back());
      piece_bytes_ -= it->second.first->bytes.size();
      pieces_.erase(it);
      lru_.pop_back();
    }
  }
  auto waiters = std::move(piece_waiting_[key]);
  piece_waiting_.erase(key);
  for (auto& done : waiters) done(shared);
}

}  // namespace vod::proxy
