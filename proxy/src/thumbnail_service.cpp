// SPDX-License-Identifier: LGPL-2.1-or-later
#include "thumbnail_service.hpp"

#include "vod/log.hpp"

namespace vod::proxy {

namespace {

// An error text fit for a header value and a log line: no control characters, bounded.
std::string one_line(std::string s) {
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  if (s.size() > 200) s.resize(200);
  return s;
}

std::string describe(const ThumbnailWant& w) {
  return "'" + w.name + "' " +
         (w.live          ? std::string("current picture")
          : w.strip_frame ? "strip frame " + std::to_string(*w.strip_frame)
                          : "poster");
}

constexpr std::size_t kMaxCached = 4096;

}  // namespace

ThumbnailService::ThumbnailService(boost::asio::io_context& io, ThumbnailSettings settings) : io_(io), settings_(std::move(settings)) {
  const auto& o = settings_.picture;
  const auto bytes = media::placeholder_jpeg(o.width, o.width * 9 / 16);
  placeholder_jpeg_.assign(bytes.begin(), bytes.end());
  worker_ = std::thread([this] { work(); });
}

ThumbnailService::~ThumbnailService() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  worker_.join();  // a job in progress is bounded by the session's connect and reconnect limits
}

void ThumbnailService::get(const ThumbnailWant& want, std::uint32_t generation, Done done) {
  // A live picture is the current one whatever the generation.
  const Key key{want, want.live ? 0 : generation};
  if (const auto it = cache_.find(key); it != cache_.end()) {
    const bool fresh = !want.live || std::chrono::steady_clock::now() - it->second.made < settings_.live_max_age;
    if (fresh) {
      ++figures_.cache_hits;
      boost::asio::post(io_, [done = std::move(done), picture = it->second.picture] { done(picture); });
      return;
    }
  }
  auto& waiters = waiting_[key];
  waiters.push_back(std::move(done));
  if (waiters.size() > 1) return;  // the job is queued already
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(key);
  }
  wake_.notify_one();
}

void ThumbnailService::work() {
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
    Outcome outcome = make(key);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
    if (outcome.picture.placeholder)
      log::warn("thumbnail", describe(key.want) + ": placeholder (" + outcome.picture.note + "), " + std::to_string(ms) + " ms");
    else
      log::info("thumbnail",
                describe(key.want) + ": " + std::to_string(outcome.picture.jpeg.size()) + " B JPEG in " + std::to_string(ms) + " ms");
    boost::asio::post(io_, [this, key, outcome = std::move(outcome)]() mutable { finish(key, std::move(outcome)); });
  }
}

ThumbnailService::Outcome ThumbnailService::make(const Key& key) {
  try {
    return key.want.live ? make_live(key) : make_movie(key);
  } catch (const media::ThumbnailError& e) {
    return placeholder(one_line(e.what()), true);  // the movie's content: the same next time
  } catch (const std::exception& e) {
    session_.reset();  // the server or the connection: try again on the next request
    return placeholder(one_line(e.what()), false);
  }
}

ThumbnailService::Outcome ThumbnailService::make_movie(const Key& key) {
  if (session_ && !settings_.server.cluster && session_->catalog().generation != key.generation)
    session_.reset();  // a new catalog: a new connection (a fleet's switches always connect)
  if (!session_) {
    client::Uri uri = settings_.server;
    uri.movie = key.want.name;
    session_ = std::make_unique<client::Session>(uri, settings_.session);
  } else if (!session_->movie() || session_->movie()->name != key.want.name) {
    session_->switch_movie(key.want.name);
  }
  const proto::CatalogEntry& movie = *session_->movie();
  std::optional<media::FramePosition> position;
  const auto at = static_cast<std::uint64_t>(thumbnail_fraction(key.want.strip_frame) * static_cast<double>(movie.duration_us));
  if (const proto::Keyframe* k = session_->index().at_or_before(at)) position = media::FramePosition{k->time_us, k->offset};
  client::Session& s = *session_;
  auto read_at = [&s](std::uint64_t offset, std::span<std::uint8_t> dest) { return s.pread(offset, dest); };
  const media::Thumbnail t = media::make_thumbnail(movie.size, read_at, position, settings_.picture);
  return {Picture{std::string(t.jpeg.begin(), t.jpeg.end()), false, ""}, true};
}

ThumbnailService::Outcome ThumbnailService::make_live(const Key& key) {
  client::Uri uri = settings_.server;
  uri.movie = key.want.name;
  uri.live = true;
  // A viewer joins at the newest keyframe (with PAT/PMT before it): the first bytes decode.
  std::vector<std::uint8_t> bytes(settings_.live_bytes);
  std::size_t have = 0;
  const auto deadline = std::chrono::steady_clock::now() + settings_.live_wait;
  auto collect = [&](auto& session) {
    while (have < bytes.size() && std::chrono::steady_clock::now() < deadline) {
      {
        std::lock_guard lock(mutex_);
        if (stopping_) break;
      }
      const client::LiveChunk c = session.read(std::span<std::uint8_t>(bytes).subspan(have), std::chrono::milliseconds(200));
      have += c.bytes;
      if (c.end_of_stream || c.finished) break;
      // One second of a channel is enough to hold a keyframe; try as soon as there is some.
      if (have >= 256 * 1024) {
        try {
          return media::make_thumbnail(std::span<const std::uint8_t>(bytes.data(), have), std::nullopt, settings_.picture);
        } catch (const media::ThumbnailError&) {
          // not yet a whole picture: read on
        }
      }
    }
    if (have == 0) throw std::runtime_error("the channel sent nothing for " + std::to_string(settings_.live_wait.count()) + " ms");
    return media::make_thumbnail(std::span<const std::uint8_t>(bytes.data(), have), std::nullopt, settings_.picture);
  };
  media::Thumbnail t;
  if (settings_.session.transport == client::Transport::udp) {
    if (!settings_.multicast) return placeholder("live channels over UDP need vod-proxy --udp-group", false);
    client::MulticastLiveSession session(uri, *settings_.multicast);
    t = collect(session);
  } else {
    client::LiveSession session(uri, settings_.live);
    t = collect(session);
  }
  return {Picture{std::string(t.jpeg.begin(), t.jpeg.end()), false, ""}, true};
}

ThumbnailService::Outcome ThumbnailService::placeholder(std::string note, bool cacheable) {
  return {Picture{placeholder_jpeg_, true, std::move(note)}, cacheable};
}

void ThumbnailService::finish(const Key& key, Outcome outcome) {
  auto picture = std::make_shared<const Picture>(std::move(outcome.picture));
  if (picture->placeholder) ++figures_.placeholders;
  else ++figures_.made;
  if (outcome.cacheable) {
    // Pictures of older generations will not be asked for again.
    for (auto it = cache_.begin(); it != cache_.end();)
      it = !it->first.want.live && it->first.generation < key.generation ? cache_.erase(it) : std::next(it);
    if (cache_.size() >= kMaxCached) cache_.clear();
    cache_[key] = {picture, std::chrono::steady_clock::now()};
  }
  auto waiters = std::move(waiting_[key]);
  waiting_.erase(key);
  for (auto& done : waiters) done(picture);
}

}  // namespace vod::proxy
