// SPDX-License-Identifier: LGPL-2.1-or-later
// HttpConnection's answers that a service makes off the I/O thread: a movie's or a title's HLS
// playlists and pieces, a title's subtitles and DASH manifest (HlsService), and a live channel's
// LL-HLS (LiveHlsService). The connection waits without reading until the answer comes.
#include "http_connection.hpp"

namespace vod::proxy {

void HttpConnection::respond_with_playlist(Plan plan, const std::string& method, std::uint32_t generation) {
  // The movie's index and codecs are fetched, or its fMP4 piece remuxed (or found), off this
  // thread; the connection waits without reading.
  const HlsWant want = *plan.as<HlsWant>();
  if (want.kind == HlsWant::Kind::dvr) {
    hls_.dvr(want.name, generation, want.skip,
             [self = shared_from_this(), plan = std::move(plan), method](std::shared_ptr<const HlsPiece> p) mutable {
               self->respond(hls_piece_plan(std::move(plan), p->bytes, p->error, p->retry), method);
             });
    return;
  }
  if (want.kind == HlsWant::Kind::init || want.kind == HlsWant::Kind::segment || want.kind == HlsWant::Kind::iframe) {
    const std::optional<unsigned> segment = want.kind != HlsWant::Kind::init ? std::optional<unsigned>(want.segment) : std::nullopt;
    hls_.piece(want.name, generation, segment, want.tracks, want.kind == HlsWant::Kind::iframe,
               [self = shared_from_this(), plan = std::move(plan), method](std::shared_ptr<const HlsPiece> p) mutable {
                 self->respond(hls_piece_plan(std::move(plan), p->bytes, p->error, p->retry), method);
               });
    return;
  }
  if (want.kind == HlsWant::Kind::subtitles || want.kind == HlsWant::Kind::subtitles_segment) {
    // The title's segment times (its first rendition's facts), then, for a segment, the track's cues.
    hls_.facts(want.reference, generation,
               [self = shared_from_this(), plan = std::move(plan), method, generation](std::shared_ptr<const hls::MovieFacts> f) mutable {
                 const HlsWant w = *plan.as<HlsWant>();
                 if (w.kind == HlsWant::Kind::subtitles || !f->error.empty())
                   return self->respond(subtitles_plan(std::move(plan), *f, nullptr), method);
                 self->hls_.cues(w.name, generation, w.cue_stream,
                                 [self, plan = std::move(plan), method, f](std::shared_ptr<const hls::Cues> c) mutable {
                                   self->respond(subtitles_plan(std::move(plan), *f, c.get()), method);
                                 });
               });
    return;
  }
  if (want.kind == HlsWant::Kind::dash_text) {
    hls_.cues(want.name, generation, want.cue_stream,
              [self = shared_from_this(), plan = std::move(plan), method](std::shared_ptr<const hls::Cues> c) mutable {
                self->respond(dash_text_plan(std::move(plan), *c), method);
              });
    return;
  }
  if (want.kind == HlsWant::Kind::title || want.kind == HlsWant::Kind::dash) {
    // Every rendition's facts (cached, or made one after another on the service's worker); the
    // playlist when the last arrives.
    struct Gathering {
      Plan plan;
      std::vector<std::shared_ptr<const hls::MovieFacts>> facts;
      std::size_t left;
    };
    auto g = std::make_shared<Gathering>(
        Gathering{std::move(plan), std::vector<std::shared_ptr<const hls::MovieFacts>>(want.renditions.size()), want.renditions.size()});
    for (std::size_t i = 0; i < want.renditions.size(); ++i)
      hls_.facts(want.renditions[i].name, generation,
                 [self = shared_from_this(), g, i, method](std::shared_ptr<const hls::MovieFacts> facts) {
                   g->facts[i] = std::move(facts);
                   if (--g->left > 0) return;
                   const bool dash = g->plan.as<HlsWant>()->kind == HlsWant::Kind::dash;
                   self->respond(dash ? dash_plan(std::move(g->plan), g->facts) : title_hls_plan(std::move(g->plan), g->facts), method);
                 });
    return;
  }
  hls_.facts(want.name, generation,
             [self = shared_from_this(), plan = std::move(plan), method](std::shared_ptr<const hls::MovieFacts> facts) mutable {
               self->respond(hls_plan(std::move(plan), *facts), method);
             });
}

void HttpConnection::respond_with_live_hls(Plan plan, const std::string& method) {
  // The channel's packager answers when it has the playlist, segment or part (a blocking reload
  // or a preload hint waits for it); the connection waits without reading.
  const LiveHlsWant want = *plan.as<LiveHlsWant>();
  live_hls_.request(want, peer_, [self = shared_from_this(), plan = std::move(plan), method](LiveHlsReply reply) mutable {
    self->respond(live_hls_plan(std::move(plan), reply), method);
  });
}

}  // namespace vod::proxy
