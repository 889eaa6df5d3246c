// SPDX-License-Identifier: LGPL-2.1-or-later
// What the proxy's HLS answers are made from, off the I/O thread, on one worker thread with a
// libvodclient Session of its own (so that this never queues in front of a player's Reads):
//   - a movie's facts, once per movie and catalog generation: the segments cut from its keyframe
//     index (read by RDMA from the server, as every client reads it), the range of a TS file's
//     leading tables (its first 64 KiB) and the codecs of its streams (its codec headers);
//   - an MP4 or Matroska movie's fMP4 pieces (the init segment, media segments), remuxed on the fly
//     with libavformat (media/fmp4_remux.hpp) and kept in a cache of at most --hls-cache-mib.
// Requests for the same thing wait on one job. Bounded: one facts entry per movie of the catalog,
// the pieces by bytes, least recently used first out.
#pragma once

#include <utility>  // first: Boost.Asio 1.74's awaitable.hpp uses std::exchange without including it

#include <boost/asio.hpp>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "hls_playlist.hpp"
#include "vod/client/session.hpp"

namespace vod::proxy {

struct HlsSettings {
  client::Uri server;
  client::SessionOptions session;
  std::uint64_t target_us = 4'000'000;  // --hls-segment-seconds
  std::size_t cache_bytes = 64u << 20;  // --hls-cache-mib: remuxed fMP4 pieces kept
};

// A remuxed fMP4 piece of a movie: its bytes, or why there are none.
struct HlsPiece {
  std::string bytes;
  std::string error;
  bool retry = false;  // the error may pass (the server is away)
};

class HlsService {
 public:
  using FactsDone = std::function<void(std::shared_ptr<const hls::MovieFacts>)>;
  using CuesDone = std::function<void(std::shared_ptr<const hls::Cues>)>;
  using PieceDone = std::function<void(std::shared_ptr<const HlsPiece>)>;

  HlsService(boost::asio::io_context& io, HlsSettings settings);
  ~HlsService();  // stops the worker (a job in progress finishes first)
  HlsService(const HlsService&) = delete;
  HlsService& operator=(const HlsService&) = delete;

  // On the io thread; `done` runs on the io thread, at once from the cache or when the job ends.
  void facts(const std::string& name, std::uint32_t generation, FactsDone done);
  // The cues of subtitle stream `stream` of `name` (-1: the whole file, a sidecar).
  void cues(const std::string& name, std::uint32_t generation, int stream, CuesDone done);
  // Piece `segment` of an fMP4 movie (nullopt: its init segment), with `tracks` (hls::kBestTracks,
  // hls::kVideoTrack or an audio stream's index).
  // With `iframe`, `segment` is a keyframe's number: the keyframe alone (an I-frame playlist's entry).
  void piece(const std::string& name, std::uint32_t generation, std::optional<unsigned> segment, int tracks, bool iframe, PieceDone done);
  // A live channel's DVR window (its entry `window`, ".dvr/NAME") as a sliding playlist, from its
  // window index read afresh (hls::dvr_playlist): the piece's bytes are the playlist. Not cached.
  void dvr(const std::string& window, std::uint32_t generation, bool skip, PieceDone done);

 private:
  using FactsKey = std::pair<std::string, std::uint32_t>;                    // movie, catalog generation
  using PieceKey = std::tuple<std::string, std::uint32_t, long, int, bool>;  // ..., segment (-1: init), tracks, keyframe alone
  void work();
  void run(std::function<void()> task);                                             // on the worker
  client::Session& session_for(const std::string& name, std::uint32_t generation);  // worker only
  hls::MovieFacts make_facts(const FactsKey& key);                                  // worker only
  // A rendition of a title other than its first: the title's segments (cut from the first
  // rendition), and how far a rendition's keyframe may be from them. Switches the session when the
  // title's segments are not cut yet.
  struct TitleCut {
    std::string title;
    std::vector<hls::Segment> segments;
    std::uint64_t tolerance_us = 0;
  };
  // `own_cut`: the movie's own segments, kept as the title's when it is the first rendition.
  std::optional<TitleCut> title_reference(client::Session& s, const std::string& name, std::uint32_t generation,
                                          const std::vector<hls::Segment>& own_cut);  // worker only
  // The TS init range and the codecs, read from `movie` through `s`.
  hls::MovieFacts finish_facts(client::Session& s, const proto::CatalogEntry& movie, hls::MovieFacts facts);  // worker only
  HlsPiece make_piece(const PieceKey& key, std::uint64_t start_us, std::uint64_t end_us);                     // worker only
  void facts_made(const FactsKey& key, hls::MovieFacts facts);
  void piece_made(const PieceKey& key, HlsPiece piece);

  boost::asio::io_context& io_;
  HlsSettings settings_;
  // io thread only
  std::map<FactsKey, std::shared_ptr<const hls::MovieFacts>> facts_;
  std::map<FactsKey, std::vector<FactsDone>> facts_waiting_;
  std::list<PieceKey> lru_;  // most recently used first
  std::map<PieceKey, std::pair<std::shared_ptr<const HlsPiece>, std::list<PieceKey>::iterator>> pieces_;
  std::size_t piece_bytes_ = 0;
  std::map<PieceKey, std::vector<PieceDone>> piece_waiting_;
  using CuesKey = std::tuple<std::string, std::uint32_t, int>;  // file, catalog generation, stream
  std::map<CuesKey, std::shared_ptr<const hls::Cues>> cues_;
  std::map<CuesKey, std::vector<CuesDone>> cues_waiting_;
  // shared with the worker
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  // worker only
  std::unique_ptr<client::Session> session_;
  // A title's segments by its first rendition (and generation): cut once, so a title's other
  // renditions need no switch to the first and back (bounded as the facts are).
  std::map<FactsKey, std::vector<hls::Segment>> title_cuts_;
  std::thread worker_;  // last: starts after everything above exists
};

}  // namespace vod::proxy
