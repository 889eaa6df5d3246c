// SPDX-License-Identifier: LGPL-2.1-or-later
// A title (catalog_titles.hpp) played as one continuous MPEG-TS stream over one-sided Reads,
// stepping between its renditions as the network allows (adaptive bitrate, abr.hpp). The title's
// segments are cut once, from its first rendition's keyframe index, and every rendition where its
// own keyframes are (segment_cut.hpp); at each segment the decider chooses the rendition, and a
// switch is only a change of the next Read's target (Session::switch_movie): the server is sent
// nothing. The bytes are the renditions' own, spliced at their aligned keyframes with continuous
// continuity counters (ts_splice.hpp); their timestamps share the title's timeline.
//
// The playback clock is a player's: the stream's media time runs from the first byte delivered,
// and what has been delivered beyond it is the buffer. Paced (a player reading a pipe), delivery
// stops `max_buffer_seconds` ahead of that clock; unpaced (a benchmark), never. A segment is in
// time when its last byte came before the clock reached its start.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vod/client/abr.hpp"
#include "vod/client/movie_reader.hpp"
#include "vod/client/segment_cut.hpp"
#include "vod/client/session.hpp"
#include "vod/client/stats.hpp"
#include "vod/client/ts_splice.hpp"

namespace vod::client {

struct TitleOptions {
  bool paced = true;
  double max_buffer_seconds = 12.0;      // paced: at most this much media ahead of the clock
  std::uint64_t segment_us = 2'000'000;  // the title's segments: the switch points
  std::optional<std::string> rendition;  // a label: pinned, never switched
  std::uint64_t start_us = 0;            // start at the title's segment that holds this time (its keyframe)
  abr::Settings abr;
  // Renditions that are not MPEG-TS (MP4, Matroska): segment `sequence` of a movie of `size` bytes,
  // from its keyframe at start_us to end_us, made MPEG-TS, reading the movie through `read_at`
  // (vod_media's mpegts_media_segment: libvodclient itself does not link libavformat). Empty: such
  // titles are refused.
  using ReadAt = std::function<std::size_t(std::uint64_t offset, std::span<std::uint8_t> dest)>;
  std::function<std::vector<std::uint8_t>(std::uint64_t size, const ReadAt& read_at, std::uint64_t start_us, std::uint64_t end_us,
                                          unsigned sequence)>
      remux;
};

// One switch, for logs, counters and rdmasrc's bus message.
struct TitleSwitch {
  std::string from, to;  // labels
  abr::Why why = abr::Why::stay;
  std::uint64_t at_us = 0;  // the title's time of the segment it starts with
  double goodput_bps = 0, buffer_s = 0;
};

struct TitleStats {
  std::uint64_t segments = 0, late_segments = 0, switches = 0;
  std::map<std::string, double> seconds_per_rendition;  // media time delivered, by label
  // From a segment's decision to its first bytes in, in microseconds: the segments that start a
  // switch, and the others (the first segment is in neither: it waits for the connection).
  LatencySamples first_byte_after_switch_us, first_byte_us;
};

class TitleReader {
 public:
  // `session`: connected to the title's server (a catalog-only session is enough). Throws
  // ClientError: no such title, renditions of MPEG-TS and of other containers mixed (their
  // timelines differ), renditions that are not MPEG-TS without options.remux, renditions whose
  // keyframes are not where the first's are, an unknown --rendition label.
  TitleReader(Session& session, const std::string& title, TitleOptions options = {});
  ~TitleReader();
  TitleReader(const TitleReader&) = delete;
  TitleReader& operator=(const TitleReader&) = delete;

  // The next bytes of the stream; 0 at the end. Blocks on Reads, and paced on the clock.
  std::size_t read(std::span<std::uint8_t> out);

  const TitleStats& stats() const noexcept { return stats_; }
  // The Reads' figures: of every rendition's connection (or of the one session switched between).
  Stats read_stats() const;
  std::string rendition() const;  // the label of the one being read
  const std::vector<std::string>& labels() const noexcept { return labels_; }
  std::function<void(const TitleSwitch&)> on_switch;  // called at each switch, before its bytes

 private:
  void next_segment();  // chooses the rendition of segment next_, and starts reading it
  double buffer_seconds() const;

  Session& rendition_session(std::size_t i);  // the connection that reads rendition i
  MovieReader& reader();                      // the current rendition's

  Session& session_;
  TitleOptions options_;
  // A connection per rendition (the server grants a connection one movie: memory windows or a PD
  // per connection), or session_ switched between them (shared regions: the usual case).
  bool separate_ = false;
  std::vector<std::unique_ptr<Session>> sessions_;
  std::vector<std::unique_ptr<MovieReader>> readers_;  // one per connection, made once it has a movie
  std::vector<std::string> names_, labels_;
  std::vector<std::uint64_t> bandwidth_;
  std::vector<std::vector<Segment>> cuts_;  // per rendition, the title's segments in its bytes
  std::optional<std::size_t> pinned_;
  abr::State abr_;
  std::size_t current_ = 0, next_ = 0;
  bool started_ = false;
  std::uint64_t left_ = 0;  // bytes of the current segment not read yet
  // The time of the title's start (its first segment's), of the segment the stream started with
  // (--start), and of the end of what was delivered.
  std::uint64_t zero_us_ = 0, first_us_ = 0, delivered_us_ = 0;
  std::vector<std::uint8_t> prefix_;  // a stream started after the title's start: the file's leading tables (PAT, PMT), sent first
  // The segment's decision, until its first bytes are in (TitleStats' first-byte times).
  std::optional<std::chrono::steady_clock::time_point> decided_at_;
  bool decided_switch_ = false;
  void first_bytes_in();
  std::vector<std::uint8_t> leading_tables();  // the MPEG-TS file's tables before its first PES
  std::chrono::steady_clock::time_point clock_start_;
  // The segment's read time: only what is spent inside read() (not the caller's writes between
  // calls, which a player's full pipe can block, nor the pacing wait), for the goodput.
  std::chrono::steady_clock::duration segment_busy_{};
  std::chrono::steady_clock::time_point busy_from_;
  double smoothed_bps_ = 0, goodput_bps_ = 0;  // the segments' goodput smoothed, and what the decider sees
  std::uint64_t segment_bytes_ = 0;
  bool remuxed_ = false;                          // the renditions are not MPEG-TS: each segment comes from options_.remux
  std::vector<std::uint8_t> segment_;             // remuxed: the current segment's bytes, from its end less left_
  std::vector<std::uint64_t> sizes_, durations_;  // per rendition
  TsSplicer splicer_;
  std::vector<std::uint8_t> carry_;  // a packet's first bytes, held until the rest is read
  TitleStats stats_;
};

}  // namespace vod::client
