// SPDX-License-Identifier: LGPL-2.1-or-later
// What a Session knows of what it reads: the catalog, the movie's entry and its keyframe index.
// Over RDMA they are read behind the movie's first bytes (describe_from_accept, confirmed when they
// land); over UDP the catalog is read before them (describe_from_catalog). session.cpp connects,
// reconnects and reads.
#include "vod/client/session.hpp"

#include <algorithm>

#include "vod/log.hpp"
#include "vod/protocol/live_window.hpp"
#include "vod/protocol/name_hash.hpp"

namespace vod::client {

void Session::read_catalog() {
  std::vector<std::uint8_t> bytes(engine_.region(Region::catalog).length);
  engine_.read(Region::catalog, 0, bytes);
  set_catalog(bytes);
}

void Session::set_catalog(std::span<const std::uint8_t> bytes) {
  auto catalog = proto::decode_catalog(bytes);
  if (!catalog) throw ClientError(ErrorKind::protocol_error, "the catalog of " + server() + " does not decode: " + catalog.error().message);
  catalog_ = std::move(*catalog);
}

void Session::set_index(std::span<const std::uint8_t> bytes) {
  index_ = {};
  index_pending_ = false;
  index_read_.state = BackgroundRead::State::ready;
  if (bytes.empty()) return;
  auto index = proto::decode_index(bytes);
  // Not built yet, or read while the server filled it in: no index for now (seeks estimate from
  // the bitrate), read again later.
  if ((index && (index->flags & proto::kIndexPending)) || (!index && index.error().message.find("torn") != std::string::npos)) {
    index_pending_ = true;
    index_checked_ = std::chrono::steady_clock::now();
    return;
  }
  if (!index)
    throw ClientError(ErrorKind::protocol_error,
                      "the keyframe index of '" + (movie_ ? movie_->name : accepted_name_) + "' does not decode: " + index.error().message);
  index_ = std::move(*index);
}

void Session::start_background(BackgroundRead& b, Region r, std::uint64_t length) {
  cancel_background(b);
  // Posted by the next progress(): behind the first bytes a start or a seek posted, never before.
  b.bytes.assign(length, 0);
  b.landed = false;
  b.state = BackgroundRead::State::reading;
  b.request = engine_.submit(r, 0, b.bytes, [&b](std::size_t) { b.landed = true; });
}

void Session::cancel_background(BackgroundRead& b) noexcept {
  if (b.state == BackgroundRead::State::reading) engine_.cancel(b.request);
  b.state = BackgroundRead::State::none;
}

void Session::start_index_read(const proto::RegionDescriptor& index) {
  cancel_background(index_read_);
  index_ = {};
  engine_.set_region(Region::index, index);
  if (index.length == 0) return set_index({});
  start_background(index_read_, Region::index, index.length);
}

const proto::KeyframeIndex& Session::index() {
  constexpr auto kIndexRecheck = std::chrono::seconds(2);
  if (index_pending_ && index_read_.state == BackgroundRead::State::ready &&
      std::chrono::steady_clock::now() - index_checked_ >= kIndexRecheck) {
    const proto::RegionDescriptor where = engine_.region(Region::index);
    engine_.set_region(Region::index, {});  // a new epoch: the bytes cached from the last read go
    start_index_read(where);
  }
  while (index_read_.state == BackgroundRead::State::reading) {
    if (index_read_.landed) {
      set_index(index_read_.bytes);
      break;
    }
    progress(std::chrono::milliseconds(1000));  // a reconnect starts the read again
  }
  return index_;
}

std::vector<std::uint8_t> Session::read_window_index(std::uint64_t offset, std::optional<std::size_t> bytes) {
  const proto::RegionDescriptor where = engine_.region(Region::index);
  engine_.set_region(Region::index, {});  // a new epoch: nothing read before is served from the engine's blocks
  engine_.set_region(Region::index, where);
  if (offset > where.length)
    throw ClientError(ErrorKind::protocol_error, "a read past the window index's " + std::to_string(where.length) + " bytes");
  std::vector<std::uint8_t> out(std::min<std::uint64_t>(where.length - offset, bytes.value_or(where.length)));
  engine_.read(Region::index, offset, out);
  return out;
}

const proto::Catalog& Session::catalog() {
  settle_catalog();
  return catalog_;
}

const proto::CatalogEntry* Session::movie() {
  settle_catalog();
  return movie_ ? &*movie_ : nullptr;
}

std::uint64_t Session::size() const noexcept {
  if (window_) return proto::kWindowStreamBytes;
  if (movie_) return movie_->size;
  return accepted_name_.empty() ? 0 : accept_.size();
}

void Session::settle_catalog() {
  while (catalog_read_.state == BackgroundRead::State::reading) {
    if (catalog_read_.landed) return confirm_catalog();
    progress(std::chrono::milliseconds(1000));  // confirms it when it lands; a reconnect starts it again
  }
}

void Session::adopt(proto::CatalogEntry entry) {
  const std::string& name = entry.name;
  if (entry.flags & proto::kEntryLive)
    throw ClientError(ErrorKind::usage, "'" + name + "' is a live channel: use rdma://" + uri_.host + "/live/" + percent_encode_path(name));
  if (movie_) check_same_version(entry);
  if (!movie_ || !delivered_) served_by_ = server();
  movie_ = std::move(entry);
  movie_instance_ = catalog_.instance;
  movie_generation_ = catalog_.generation;
}

void Session::check_same_version(const proto::CatalogEntry& entry) {
  if (window_) return;  // a window's bytes at a stream offset never change: its laps are checked per Read
  if (movie_->content.same(entry.content) && movie_->size == entry.size) return;
  // The same server process and generation: the same version, whether it has hashed it yet or not
  // (a reconnect to a server still hashing its library resumes).
  if (catalog_.instance != 0 && catalog_.instance == movie_instance_ && catalog_.generation == movie_generation_ &&
      movie_->size == entry.size)
    return;
  const std::string& name = entry.name;
  if (!delivered_) {  // nothing of the old version reached the reader: read this one instead
    if (movie_->content != entry.content || movie_->size != entry.size)
      log::info("client", "'" + name + "' on " + server() + " is another version (" + entry.content.hex() + ", " +
                              std::to_string(entry.size) + " bytes) than on " + served_by_ +
                              "; nothing was delivered yet, so reading that one");
    return;
  }
  if (movie_->content.known() && !entry.content.known())
    throw ClientError(ErrorKind::rejected, "'" + name + "' on " + server() +
                                               " has no content identity yet (its server is still hashing it); " + "not resuming what " +
                                               served_by_ + " served (" + movie_->content.hex() + ") before it can be compared");
  throw ClientError(ErrorKind::movie_changed, "'" + name + "' on " + server() + " (" + entry.content.hex() + ", " +
                                                  std::to_string(entry.size) + " bytes) is not the version " + served_by_ + " served (" +
                                                  movie_->content.hex() + ", " + std::to_string(movie_->size) + " bytes)" +
                                                  (movie_->content.known() ? "" : ", whose identity was not known") +
                                                  ": refusing to resume into another version");
}

void Session::describe_from_accept(const std::string& name) {
  // The accept already says where the movie and its index are, so nothing else stands between the
  // connect and the movie's first bytes: a head Read where the reader is (0, or where a reconnect
  // resumes) goes out at once, alone. The catalog (what the movie is: bitrate, duration, codecs)
  // and the keyframe index (only time seeks need it) are read behind it, and are decoded when
  // they have landed (confirm_catalog, index()). On Soft-RoCE a Read posted with others waits for
  // theirs, so posting the catalog with the head would delay the head by it.
  const std::uint64_t size = accept_.size();
  if (!movie_ && delivered_)  // the first connection was lost before its catalog said which version it read
    throw ClientError(ErrorKind::movie_changed, "'" + name + "': bytes were delivered before the catalog of " + served_by_ +
                                                    " said which version they are; refusing to resume on " + server() +
                                                    " into what may be another");
  if (!delivered_) movie_.reset();  // nothing of it reached the reader: this server's version is read from the start
  if (!movie_) {
    served_by_ = server();
  } else {
    // A reconnect after bytes were delivered: the catalog first, and its identity checked, before a
    // byte of this server's movie is read.
    read_catalog();
    if (accept_.movie_index >= catalog_.entries.size() || catalog_.entries[accept_.movie_index].name != name)
      throw ClientError(ErrorKind::protocol_error, server() + " accepted '" + name + "' with an entry its catalog does not list");
    check_same_version(catalog_.entries[accept_.movie_index]);
  }
  accepted_name_ = name;
  select_movie_region(accept_.movie, accept_.segments, accept_.movie_index, size);
  engine_.set_region(Region::index, accept_.index);  // now: a region set later would discard the head
  if (!window_) engine_.prefetch(resume_at_);        // a window's reader says where it starts
  engine_.post_wanted();
  start_background(catalog_read_, Region::catalog, accept_.catalog.length);
  start_index_read(accept_.index);
}

void Session::confirm_catalog() {
  // Until it is confirmed the catalog stays landed and unconfirmed: a catalog that fails here fails
  // every later call the same way, until a reconnect reads it again.
  set_catalog(catalog_read_.bytes);
  const std::string& name = accepted_name_;
  if (accept_.movie_index >= catalog_.entries.size() || catalog_.entries[accept_.movie_index].name != name ||
      !catalog_.entries[accept_.movie_index].movie.same_bytes(accept_.movie) ||
      !catalog_.entries[accept_.movie_index].index.same_bytes(accept_.index) ||
      !catalog_.entries[accept_.movie_index].segments.same_bytes(accept_.segments))
    throw ClientError(ErrorKind::protocol_error, server() + " accepted '" + name + "' with descriptors its catalog does not list");
  proto::CatalogEntry entry = catalog_.entries[accept_.movie_index];
  entry.movie = accept_.movie;  // the rkeys of this connection (its windows, when the server binds them)
  entry.index = accept_.index;
  entry.segments = accept_.segments;
  adopt(std::move(entry));
  accepted_name_.clear();
  catalog_read_.state = BackgroundRead::State::ready;
  size_readahead();
}

void Session::describe_from_catalog(const std::string& name) {
  read_catalog();
  if (name.empty()) return;
  const proto::CatalogEntry* found = catalog_.find(name);  // over UDP: the catalog is all there is
  if (!found) throw ClientError(ErrorKind::unknown_movie, "no movie '" + name + "' on " + server() + "; it has: " + list_names(catalog_));
  adopt(*found);
  engine_.select_movie(proto::name_hash(movie_->name), catalog_.generation);  // over UDP: what requests name
  select_movie_region(movie_->movie, movie_->segments, static_cast<std::uint32_t>(found - catalog_.entries.data()), movie_->size);
  size_readahead();
  start_index_read(movie_->index);
}

void Session::select_movie_region(const proto::RegionDescriptor& movie, const proto::RegionDescriptor& segments, std::uint32_t index,
                                  std::uint64_t size) {
  if (window_) {  // read by stream offsets, which only grow
    if (Fetcher* f = engine_.fetcher()) f->use_segments(movie, segments, index, proto::kWindowStreamBytes, true);
    const proto::RegionDescriptor where = segments.empty() ? movie : segments;
    engine_.set_region(Region::movie, {where.addr, proto::kWindowStreamBytes, movie.rkey});
    return;
  }
  if (Fetcher* f = engine_.fetcher()) f->use_segments(movie, segments, index, size);
  // A segmented movie's region is named by its table (unique per movie), so that a switch between
  // two cached movies of one size still changes the region and drops the other's blocks.
  engine_.set_region(Region::movie, segments.empty() ? movie : proto::RegionDescriptor{segments.addr, size, movie.rkey});
}

void Session::size_readahead() {
  if (options_.readahead_seconds <= 0 || !movie_ || movie_->bitrate_bps == 0) return;
  const double bytes = options_.readahead_seconds * static_cast<double>(movie_->bitrate_bps) / 8;
  engine_.set_readahead_window(std::max(engine_.chunk_size(), static_cast<std::size_t>(bytes)));
}

}  // namespace vod::client
