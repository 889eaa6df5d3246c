// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/title_reader.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <utility>

#include "vod/client/errors.hpp"
#include "vod/log.hpp"
#include "vod/media/ts_scanner.hpp"

namespace vod::client {

namespace {

std::string mbps(double bps) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f Mbit/s", bps / 1e6);
  return buf;
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

}  // namespace

TitleReader::TitleReader(Session& session, const std::string& title, TitleOptions options)
    : session_(session), options_(std::move(options)) {
  const proto::Catalog catalog = session_.catalog();  // a copy: a switch below may read a newer one
  const proto::Title* t = proto::find_title(catalog.titles, title);
  if (!t) throw ClientError(ErrorKind::unknown_movie, "no title '" + title + "' in the catalog of " + session_.server());
  std::string all;
  remuxed_ = catalog.entries.at(t->renditions.front().entry).container != "mpegts";
  for (const proto::TitleRendition& r : t->renditions) {
    const proto::CatalogEntry& e = catalog.entries.at(r.entry);
    if ((e.container != "mpegts") != remuxed_)
      throw ClientError(ErrorKind::usage, "title '" + title + "': rendition '" + e.name + "' is " + e.container + " but '" +
                                              catalog.entries.at(t->renditions.front().entry).name +
                                              "' is not: MPEG-TS and other containers have different timelines and cannot be switched");
    if (remuxed_ && !options_.remux)
      throw ClientError(ErrorKind::usage, "title '" + title + "': rendition '" + e.name + "' is " + e.container +
                                              "; this player reads MPEG-TS renditions only (vod-proxy's HLS plays this one)");
    names_.push_back(e.name);
    sizes_.push_back(e.size);
    durations_.push_back(e.duration_us);
    labels_.push_back(r.label);
    bandwidth_.push_back(e.duration_us ? e.size * 8'000'000 / e.duration_us : 0);
    all += (all.empty() ? "" : ", ") + r.label;
  }
  // The title's segments, from its first rendition; every other one cut where those are.
  // Where the server grants each connection one movie (memory windows, or a PD per connection), each
  // rendition gets a connection of its own now, with the same token: a switch is then still only a
  // change of the next Read's target, never a connect.
  separate_ =
      (catalog.entries.at(t->renditions.front().entry).flags & proto::kEntryWindowed) && session_.options().transport == Transport::rdma;
  const proto::TitleRendition& first = t->renditions.front();
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (separate_) {
      Uri uri = session_.uri();
      uri.movie = names_[i];
      sessions_.push_back(std::make_unique<Session>(uri, session_.options()));
    } else {
      session_.switch_movie(names_[i]);
    }
    Session& s = rendition_session(i);
    const proto::CatalogEntry movie = *s.movie();
    const proto::KeyframeIndex& index = s.index();
    if (i == 0) {
      cuts_.push_back(cut_segments(index, movie.size, movie.duration_us, options_.segment_us));
      if (cuts_.back().empty()) throw ClientError(ErrorKind::usage, "title '" + title + "': '" + movie.name + "' has no keyframe index");
      continue;
    }
    const proto::TitleRendition& r = t->renditions[i];
    cuts_.push_back(cut_like(cuts_.front(), index, movie.size, movie.duration_us, proto::alignment_tolerance_us(first, r)));
    if (cuts_.back().empty())
      throw ClientError(ErrorKind::usage, "title '" + title + "': the keyframes of '" + movie.name + "' are not where those of '" +
                                              names_[0] + "' are, so its renditions cannot be switched");
  }
  if (options_.rendition) {
    const auto it = std::find(labels_.begin(), labels_.end(), *options_.rendition);
    if (it == labels_.end())
      throw ClientError(ErrorKind::usage, "title '" + title + "' has no rendition '" + *options_.rendition + "'; it has " + all);
    pinned_ = static_cast<std::size_t>(it - labels_.begin());
  }
  for (std::size_t i = 0; i < (separate_ ? names_.size() : 1); ++i)  // unpaced: the title paces by its own clock
    readers_.push_back(std::make_unique<MovieReader>(rendition_session(i), PlaybackOptions{false, 0, 0}));
  const std::vector<Segment>& title_cut = cuts_.front();
  zero_us_ = title_cut.front().start_us;
  if (options_.start_us > 0) {  // the last segment starting at or before the time asked
    const std::uint64_t end_us = title_cut.back().start_us + title_cut.back().duration_us;
    if (zero_us_ + options_.start_us >= end_us)
      throw ClientError(ErrorKind::out_of_range, "title '" + title + "' is " + seconds(static_cast<double>(end_us - zero_us_) / 1e6) +
                                                     " long: it has no " + seconds(static_cast<double>(options_.start_us) / 1e6));
    while (next_ + 1 < title_cut.size() && title_cut[next_ + 1].start_us <= zero_us_ + options_.start_us) ++next_;
  }
  first_us_ = title_cut[next_].start_us;
  delivered_us_ = first_us_;
  log::info("abr", "title '" + title + "': " + std::to_string(names_.size()) + " renditions (" + all + "), " +
                       std::to_string(cuts_.front().size()) + " switch points" + (pinned_ ? ", pinned to " + labels_[*pinned_] : ""));
}

TitleReader::~TitleReader() {
  if (!separate_) session_.engine().set_readahead_limit(~std::uint64_t{0});  // the caller's session reads ahead as before
}

std::string TitleReader::rendition() const { return labels_[current_]; }

Stats TitleReader::read_stats() const {
  if (!separate_) return session_.stats();
  Stats all;
  for (const auto& s : sessions_) all.merge(s->stats());
  return all;
}

Session& TitleReader::rendition_session(std::size_t i) { return separate_ ? *sessions_.at(i) : session_; }

MovieReader& TitleReader::reader() { return *readers_.at(separate_ ? current_ : 0); }

double TitleReader::buffer_seconds() const {
  if (clock_start_ == std::chrono::steady_clock::time_point{}) return static_cast<double>(delivered_us_ - first_us_) / 1e6;
  const double played = std::chrono::duration<double>(std::chrono::steady_clock::now() - clock_start_).count();
  return static_cast<double>(delivered_us_ - first_us_) / 1e6 - played;
}

void TitleReader::next_segment() {
  // A player holds at most so much: wait for its clock (paced).
  if (options_.paced && started_) {
    while (buffer_seconds() > options_.max_buffer_seconds)
      std::this_thread::sleep_for(std::chrono::duration<double>(std::min(buffer_seconds() - options_.max_buffer_seconds, 0.2)));
  }
  const double buffer = buffer_seconds();
  const abr::Decision d = abr::decide(bandwidth_, abr_, {goodput_bps_, buffer}, options_.abr, pinned_);
  const Segment& title_segment = cuts_.front()[next_];
  if (d.switched(abr_)) {
    const TitleSwitch s{labels_[current_], labels_[d.rendition], d.why, title_segment.start_us - zero_us_, goodput_bps_, buffer};
    ++stats_.switches;
    log::info("abr", "switch " + s.from + " -> " + s.to + " at " + seconds(static_cast<double>(s.at_us) / 1e6) + ": " +
                         abr::to_string(s.why) + " (goodput " + mbps(s.goodput_bps) + ", " + seconds(s.buffer_s) + " held)");
    if (on_switch) on_switch(s);
    splicer_.splice();
  }
  if (!separate_ && (!started_ || d.rendition != current_)) readers_.front()->switch_movie(names_[d.rendition]);
  const abr::State abr_before = abr_;
  abr_ = d.next;
  current_ = d.rendition;
  const Segment& s = cuts_[current_][next_];
  // Read-ahead stays within the segment: the next one may be another rendition's, and on a link
  // that is short of bandwidth a step down must not wait behind the old rendition's bytes.
  rendition_session(current_).engine().set_readahead_limit(s.bytes.offset + s.bytes.length);
  const bool first = !started_;
  segment_busy_ = {};
  busy_from_ = std::chrono::steady_clock::now();  // after the pacing wait
  decided_at_.reset();
  if (!first) decided_at_ = busy_from_;
  decided_switch_ = d.switched(abr_before);
  started_ = true;
  if (remuxed_) {
    // A segment of its own muxer, PAT and PMT first, its counters from 0: a splice each time. It
    // runs to this rendition's next keyframe of the title's, or past the movie's end.
    const std::uint64_t end_us =
        next_ + 1 < cuts_[current_].size() ? cuts_[current_][next_ + 1].start_us : durations_[current_] + 1'000'000;
    const auto read_at = [this](std::uint64_t offset, std::span<std::uint8_t> dest) {
      const std::size_t n = rendition_session(current_).pread(offset, dest);
      first_bytes_in();
      return n;
    };
    try {
      segment_ = options_.remux(sizes_[current_], read_at, s.start_us, end_us, static_cast<unsigned>(next_));
    } catch (const ClientError&) {
      throw;
    } catch (const std::exception& e) {
      throw ClientError(ErrorKind::protocol_error, "segment " + std::to_string(next_) + " of '" + names_[current_] + "': " + e.what());
    }
    splicer_.splice();
    left_ = segment_.size();
    segment_bytes_ = s.bytes.length;  // what was read, for the goodput
    return;
  }
  // The stream's first segment starts at the file's start: its leading tables (PAT, PMT) first. A
  // stream started later (--start) sends those tables first, then the segment.
  const std::uint64_t from = first && next_ == 0 ? 0 : s.bytes.offset;
  if (first && next_ > 0) prefix_ = leading_tables();
  reader().seek(from);
  left_ = s.bytes.offset + s.bytes.length - from;
  segment_bytes_ = left_;
}

void TitleReader::first_bytes_in() {
  if (!decided_at_) return;
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - *decided_at_).count();
  (decided_switch_ ? stats_.first_byte_after_switch_us : stats_.first_byte_us).record(static_cast<std::uint64_t>(us));
  decided_at_.reset();
}

std::vector<std::uint8_t> TitleReader::leading_tables() {
  // The packets before the file's first PES (a payload that starts with 00 00 01): its tables.
  std::vector<std::uint8_t> head(32 * kTsPacket);
  head.resize(rendition_session(current_).pread(0, head) / kTsPacket * kTsPacket);
  std::size_t n = 0;
  for (; n + kTsPacket <= head.size(); n += kTsPacket) {
    const auto packet = media::parse_ts_packet(std::span(head).subspan(n, kTsPacket));
    if (!packet) break;
    const auto payload = packet->payload;
    if (packet->payload_unit_start && payload.size() >= 3 && payload[0] == 0 && payload[1] == 0 && payload[2] == 1) break;
  }
  head.resize(n);
  return head;
}

std::size_t TitleReader::read(std::span<std::uint8_t> out) {
  if (out.size() < 2 * kTsPacket) throw std::invalid_argument("TitleReader::read: a buffer of at least two TS packets");
  busy_from_ = std::chrono::steady_clock::now();
  if (!started_ && next_ > 0 && !remuxed_) next_segment();  // a late start: its tables first
  if (!prefix_.empty()) {
    const std::size_t n = std::min(out.size() / kTsPacket * kTsPacket, prefix_.size());
    std::memcpy(out.data(), prefix_.data(), n);
    prefix_.erase(prefix_.begin(), prefix_.begin() + static_cast<std::ptrdiff_t>(n));
    splicer_.rewrite(out.first(n));
    if (prefix_.empty()) splicer_.splice();  // the segment's own tables follow
    if (n > 0) return n;
  }
  for (;;) {
    if (left_ == 0 && carry_.empty()) {
      if (next_ >= cuts_.front().size()) return 0;
      next_segment();
    }
    std::size_t n = carry_.size();
    std::memcpy(out.data(), carry_.data(), n);
    carry_.clear();
    if (left_ > 0) {
      const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(out.size() - n, left_));
      std::size_t got = 0;
      if (remuxed_) {
        std::memcpy(out.data() + n, segment_.data() + (segment_.size() - left_), want);
        got = want;
      } else {
        got = reader().read(out.subspan(n, want));
        if (got > 0) first_bytes_in();
      }
      if (got == 0) throw ClientError(ErrorKind::out_of_range, "'" + names_[current_] + "' ended inside a segment");
      n += got;
      left_ -= got;
    }
    // Whole packets only go through the splicer; a packet's first bytes wait for the rest (the
    // segment's end flushes what is left, as the file has it).
    const std::size_t whole = left_ > 0 ? n - n % kTsPacket : n;
    splicer_.rewrite(out.first(whole - whole % kTsPacket));
    carry_.assign(out.begin() + static_cast<std::ptrdiff_t>(whole), out.begin() + static_cast<std::ptrdiff_t>(n));
    if (left_ == 0) {
      // The segment is complete: its goodput, its media time, and whether it came in time.
      const auto now = std::chrono::steady_clock::now();
      segment_busy_ += now - std::exchange(busy_from_, now);
      const double took = std::max(std::chrono::duration<double>(segment_busy_).count(), 1e-6);
      const double sample = static_cast<double>(segment_bytes_) * 8 / took;
      // Smoothed, but never above the last segment's: a link that drops is seen at once (a segment
      // served from what was read ahead measures high, and an average of those would take several
      // segments to come down), while a link that recovers must show it for several decisions.
      smoothed_bps_ = smoothed_bps_ > 0 ? 0.5 * smoothed_bps_ + 0.5 * sample : sample;
      goodput_bps_ = std::min(smoothed_bps_, sample);
      const Segment& title_segment = cuts_.front()[next_];
      if (clock_start_ == std::chrono::steady_clock::time_point{}) {
        clock_start_ = now;  // a player starts once it has its first segment
      } else if (now > clock_start_ + std::chrono::microseconds(title_segment.start_us - first_us_)) {
        ++stats_.late_segments;
      }
      delivered_us_ = title_segment.start_us + title_segment.duration_us;
      stats_.seconds_per_rendition[labels_[current_]] += static_cast<double>(title_segment.duration_us) / 1e6;
      ++stats_.segments;
      ++next_;
    }
    if (whole > 0) {
      segment_busy_ += std::chrono::steady_clock::now() - busy_from_;
      return whole;
    }
  }
}

}  // namespace vod::client
