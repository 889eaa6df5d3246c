// SPDX-License-Identifier: LGPL-2.1-or-later
// rdmasrc (gstrdmasrc.hpp): the element's state, properties, start/stop, fill and create, and its
// GstURIHandler.
// Longer than 400 lines because: one GObject type is one file: G_DEFINE_TYPE's parent_class and the
// static vfuncs class_init installs, the 15 properties (ids, specs, set and get) and the URI handler
// all work on the one instance and its State; splitting them would export that boilerplate.
#include "gstrdmasrc.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "live_dvr.hpp"
#include "vod/client/live_source.hpp"
#include "vod/client/open_live.hpp"
#include "vod/client/sequential_reads.hpp"
#include "vod/client/session.hpp"
#include "vod/client/title_reader.hpp"
#include "vod/defaults.hpp"
#include "vod/media/fmp4_remux.hpp"

GST_DEBUG_CATEGORY_STATIC(gst_rdma_src_debug);
#define GST_CAT_DEFAULT gst_rdma_src_debug

namespace {

using vod::client::ClientError;
using vod::client::ErrorKind;

// Defaults, defined once: the property specs and the initial state both use them.
constexpr guint kDefaultPort = vod::client::kDefaultPort;
constexpr guint kDefaultBlocksize = vod::defaults::kChunkBytes;
constexpr guint kDefaultChunkSize = vod::defaults::kChunkBytes;
constexpr guint64 kDefaultReadAhead = vod::defaults::kReadaheadBytes;
constexpr gdouble kDefaultReadAheadTime = 0;
constexpr guint kDefaultReadDepth = vod::defaults::kReadDepth;
constexpr gdouble kDefaultReconnectTimeout = std::chrono::duration<double>(vod::defaults::kReconnectFor).count();
constexpr const char* kDefaultTransport = "rdma";
constexpr guint kDefaultUdpPort = vod::defaults::kUdpPort;
constexpr gboolean kDefaultZeroCopy = TRUE;
// Registered buffers downstream may hold (queues, a sink's last sample) beyond those advertised;
// when all are held, blocks are copied out of the ring instead: never a stall.
constexpr std::size_t kHeldDownstream = 24;

enum {
  PROP_0,
  PROP_URI,
  PROP_LOCATION,
  PROP_HOST,
  PROP_PORT,
  PROP_MOVIE,
  PROP_CHUNK_SIZE,
  PROP_READ_AHEAD,
  PROP_READ_AHEAD_TIME,
  PROP_READ_DEPTH,
  PROP_RECONNECT_TIMEOUT,
  PROP_TRANSPORT,
  PROP_UDP_PORT,
  PROP_UDP_GROUP,
  PROP_UDP_INTERFACE,
  PROP_ZERO_COPY,
  PROP_ETCD_CACERT,
  PROP_ETCD_CERT,
  PROP_ETCD_KEY,
  PROP_ETCD_USER,
  PROP_ETCD_PASSWORD_FILE,
  PROP_RENDITION,
  PROP_DVR_START,
};

// The C++ state of the element. GObject allocates the instance zeroed and runs no constructors,
// so it is constructed in instance_init and destroyed in finalize (std::construct_at/destroy_at).
struct State {
  std::string host;
  guint port = kDefaultPort;
  std::string movie;
  bool live = false;                                  // the URI names a live channel (rdma://host/live/NAME)
  std::optional<std::array<std::uint8_t, 32>> token;  // the URI's ?token= (never shown by get_uri)
  std::optional<vod::client::ClusterRef> cluster;     // rdma+etcd://: a fleet (host is then empty until placed)
  guint chunk_size = kDefaultChunkSize;
  guint64 read_ahead = kDefaultReadAhead;
  gdouble read_ahead_time = kDefaultReadAheadTime;
  guint read_depth = kDefaultReadDepth;
  gdouble reconnect_timeout = kDefaultReconnectTimeout;
  std::string transport = kDefaultTransport;  // "rdma" or "udp" (Write-Record)
  guint udp_port = kDefaultUdpPort;
  std::string udp_group;  // a live channel with transport=udp: the server's --live-multicast group
  std::string udp_interface;
  bool zero_copy = kDefaultZeroCopy;  // push mode: Reads land in the GstBuffers that go downstream
  vod::cluster::EtcdSecurity etcd;    // a fleet's etcd over TLS, with authentication: the etcd-* properties
  // Created in start(), destroyed in stop(), used by the streaming thread in between. unlock()
  // from another thread only calls their thread-safe interrupt(). A movie's session, or a live
  // channel's source (over RDMA, or by multicast with transport=udp).
  std::unique_ptr<vod::client::Session> session;
  std::unique_ptr<vod::client::LiveSource> live_source;
  // A live channel: its DVR window (vod-server --live-dvr), for seeking queries and TIME seeks
  // (live_dvr.hpp), and where to start in it (dvr-start; empty: at live).
  std::unique_ptr<vod::gst::LiveDvr> dvr;
  std::string dvr_start;
  // Push mode: the session's registered buffers advertised for the next blocks (from reads_at), so
  // that their Reads land in what create() hands downstream. Remade at a seek; before the session
  // goes.
  std::unique_ptr<vod::client::SequentialReads> reads;
  guint64 reads_at = 0;
  // A title (a folder of renditions): one MPEG-TS stream stepping between them (TitleReader, on
  // `session`, catalog-only); `rendition` pins one. A switch marks the next buffer DISCONT.
  std::string rendition;
  std::unique_ptr<vod::client::TitleReader> title;
  bool title_switched = false;
};

}  // namespace

struct _GstRdmaSrc {
  GstBaseSrc parent;
  State state;
};

static void gst_rdma_src_uri_handler_init(gpointer iface, gpointer data);

#define gst_rdma_src_parent_class parent_class
G_DEFINE_TYPE_WITH_CODE(GstRdmaSrc, gst_rdma_src, GST_TYPE_BASE_SRC,
                        G_IMPLEMENT_INTERFACE(GST_TYPE_URI_HANDLER, gst_rdma_src_uri_handler_init);
                        GST_DEBUG_CATEGORY_INIT(gst_rdma_src_debug, "rdmasrc", 0, "rdma-vod RDMA source"))

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

namespace {

std::string uri_of(const State& s) {
  if (s.host.empty() && !s.cluster) return {};
  vod::client::Uri u{s.host, static_cast<std::uint16_t>(s.port), std::nullopt};
  u.cluster = s.cluster;
  if (!s.movie.empty()) u.movie = s.movie;
  u.live = s.live && u.movie;
  return u.to_string();
}

// Properties that shape the connection change only while stopped, as in filesrc.
bool settable(GstRdmaSrc* self, const char* what) {
  GstState state = GST_STATE(self);
  if (state == GST_STATE_READY || state == GST_STATE_NULL) return true;
  GST_WARNING_OBJECT(self, "%s can only be changed in the NULL or READY state", what);
  return false;
}

gboolean set_uri(GstRdmaSrc* self, const gchar* text, GError** error) {
  if (!settable(self, "the URI")) {
    g_set_error(error, GST_URI_ERROR, GST_URI_ERROR_BAD_STATE, "the URI of rdmasrc can only be changed in the NULL or READY state");
    return FALSE;
  }
  try {
    const auto u = vod::client::parse_uri(text ? text : "");
    GST_OBJECT_LOCK(self);
    self->state.host = u.host;
    self->state.port = u.port;
    self->state.movie = u.movie.value_or("");
    self->state.live = u.live;
    self->state.token = u.token;
    self->state.cluster = u.cluster;
    GST_OBJECT_UNLOCK(self);
    // A live channel is a live source: no preroll, timestamps from the stream's clock (tsdemux).
    gst_base_src_set_live(GST_BASE_SRC(self), u.live);
    return TRUE;
  } catch (const vod::client::UriError& e) {
    g_set_error(error, GST_URI_ERROR, GST_URI_ERROR_BAD_URI, "%s", e.what());
    return FALSE;
  }
}

void post_error(GstRdmaSrc* self, const ClientError& e) {
  switch (e.kind()) {
    case ErrorKind::unknown_movie: GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("%s", e.what()), ("rdmasrc: unknown movie")); break;
    case ErrorKind::unauthorized: GST_ELEMENT_ERROR(self, RESOURCE, NOT_AUTHORIZED, ("%s", e.what()), ("rdmasrc: unauthorized")); break;
    case ErrorKind::server_unreachable:
    case ErrorKind::no_device:
    case ErrorKind::rejected:
      GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ, ("%s", e.what()), ("rdmasrc: %s", vod::client::to_string(e.kind())));
      break;
    default: GST_ELEMENT_ERROR(self, RESOURCE, READ, ("%s", e.what()), ("rdmasrc: %s", vod::client::to_string(e.kind())));
  }
}

}  // namespace

static void gst_rdma_src_set_property(GObject* object, guint id, const GValue* value, GParamSpec* pspec) {
  auto* self = GST_RDMA_SRC(object);
  State& s = self->state;
  switch (id) {
    case PROP_URI:
    case PROP_LOCATION: {
      GError* error = nullptr;
      if (!set_uri(self, g_value_get_string(value), &error)) {
        GST_WARNING_OBJECT(self, "%s", error->message);
        g_error_free(error);
      }
      return;
    }
    default: break;
  }
  if (!settable(self, pspec->name)) return;
  GST_OBJECT_LOCK(self);
  switch (id) {
    case PROP_HOST:
      s.host = g_value_get_string(value) ? g_value_get_string(value) : "";
      s.cluster.reset();  // a host names one server
      break;
    case PROP_PORT: s.port = g_value_get_uint(value); break;
    case PROP_MOVIE:
      s.movie = g_value_get_string(value) ? g_value_get_string(value) : "";
      s.live = false;
      break;
    case PROP_CHUNK_SIZE: s.chunk_size = g_value_get_uint(value); break;
    case PROP_READ_AHEAD: s.read_ahead = g_value_get_uint64(value); break;
    case PROP_READ_AHEAD_TIME: s.read_ahead_time = g_value_get_double(value); break;
    case PROP_READ_DEPTH: s.read_depth = g_value_get_uint(value); break;
    case PROP_RECONNECT_TIMEOUT: s.reconnect_timeout = g_value_get_double(value); break;
    case PROP_TRANSPORT: {
      const char* t = g_value_get_string(value);
      if (t && (std::string(t) == "rdma" || std::string(t) == "udp")) s.transport = t;
      else GST_WARNING_OBJECT(self, "transport must be rdma or udp, not '%s'", t ? t : "(null)");
      break;
    }
    case PROP_UDP_PORT: s.udp_port = g_value_get_uint(value); break;
    case PROP_UDP_GROUP: s.udp_group = g_value_get_string(value) ? g_value_get_string(value) : ""; break;
    case PROP_UDP_INTERFACE: s.udp_interface = g_value_get_string(value) ? g_value_get_string(value) : ""; break;
    case PROP_ZERO_COPY: s.zero_copy = g_value_get_boolean(value); break;
    case PROP_ETCD_CACERT: s.etcd.cacert = g_value_get_string(value) ? g_value_get_string(value) : ""; break;
    case PROP_ETCD_CERT: s.etcd.cert = g_value_get_string(value) ? g_value_get_string(value) : ""; break;
    case PROP_ETCD_KEY: s.etcd.key = g_value_get_string(value) ? g_value_get_string(value) : ""; break;
    case PROP_ETCD_USER: s.etcd.user = g_value_get_string(value) ? g_value_get_string(value) : ""; break;
    case PROP_ETCD_PASSWORD_FILE: s.etcd.password_file = g_value_get_string(value) ? g_value_get_string(value) : ""; break;
    case PROP_RENDITION: s.rendition = g_value_get_string(value) ? g_value_get_string(value) : ""; break;
    case PROP_DVR_START: s.dvr_start = g_value_get_string(value) ? g_value_get_string(value) : ""; break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
  GST_OBJECT_UNLOCK(self);
}

static void gst_rdma_src_get_property(GObject* object, guint id, GValue* value, GParamSpec* pspec) {
  auto* self = GST_RDMA_SRC(object);
  const State& s = self->state;
  GST_OBJECT_LOCK(self);
  switch (id) {
    case PROP_URI:
    case PROP_LOCATION: {
      const std::string u = uri_of(s);
      g_value_set_string(value, u.empty() ? nullptr : u.c_str());
      break;
    }
    case PROP_HOST: g_value_set_string(value, s.host.c_str()); break;
    case PROP_PORT: g_value_set_uint(value, s.port); break;
    case PROP_MOVIE: g_value_set_string(value, s.movie.c_str()); break;
    case PROP_CHUNK_SIZE: g_value_set_uint(value, s.chunk_size); break;
    case PROP_READ_AHEAD: g_value_set_uint64(value, s.read_ahead); break;
    case PROP_READ_AHEAD_TIME: g_value_set_double(value, s.read_ahead_time); break;
    case PROP_READ_DEPTH: g_value_set_uint(value, s.read_depth); break;
    case PROP_RECONNECT_TIMEOUT: g_value_set_double(value, s.reconnect_timeout); break;
    case PROP_TRANSPORT: g_value_set_string(value, s.transport.c_str()); break;
    case PROP_UDP_PORT: g_value_set_uint(value, s.udp_port); break;
    case PROP_UDP_GROUP: g_value_set_string(value, s.udp_group.c_str()); break;
    case PROP_UDP_INTERFACE: g_value_set_string(value, s.udp_interface.c_str()); break;
    case PROP_ZERO_COPY: g_value_set_boolean(value, s.zero_copy); break;
    case PROP_ETCD_CACERT: g_value_set_string(value, s.etcd.cacert.c_str()); break;
    case PROP_ETCD_CERT: g_value_set_string(value, s.etcd.cert.c_str()); break;
    case PROP_ETCD_KEY: g_value_set_string(value, s.etcd.key.c_str()); break;
    case PROP_ETCD_USER: g_value_set_string(value, s.etcd.user.c_str()); break;
    case PROP_ETCD_PASSWORD_FILE: g_value_set_string(value, s.etcd.password_file.c_str()); break;
    case PROP_RENDITION: g_value_set_string(value, s.rendition.c_str()); break;
    case PROP_DVR_START: g_value_set_string(value, s.dvr_start.c_str()); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
  GST_OBJECT_UNLOCK(self);
}

// A new buffer of `length` bytes filled by `read(span)` (which returns the bytes it wrote), shrunk
// to them; GST_FLOW_FLUSHING when unlock() interrupted the read, an error posted for a ClientError.
// For the streams that are not the movie's bytes at an offset: a live channel's, a title's.
template <typename Read>
static GstFlowReturn read_into_new_buffer(GstRdmaSrc* self, guint length, Read&& read, GstBuffer** out) {
  GstBuffer* buf = gst_buffer_new_allocate(nullptr, length, nullptr);
  GstMapInfo map;
  if (!gst_buffer_map(buf, &map, GST_MAP_WRITE)) {
    gst_buffer_unref(buf);
    GST_ELEMENT_ERROR(self, RESOURCE, READ, ("Cannot map a buffer for writing."), (nullptr));
    return GST_FLOW_ERROR;
  }
  std::size_t got = 0;
  GstFlowReturn ret = GST_FLOW_OK;
  try {
    got = read(std::span<std::uint8_t>(map.data, map.size));
  } catch (const vod::client::Interrupted&) {
    ret = GST_FLOW_FLUSHING;
  } catch (const ClientError& e) {
    post_error(self, e);
    ret = GST_FLOW_ERROR;
  }
  gst_buffer_unmap(buf, &map);
  if (ret != GST_FLOW_OK) {
    gst_buffer_unref(buf);
    return ret;
  }
  gst_buffer_resize(buf, 0, static_cast<gssize>(got));
  *out = buf;
  return GST_FLOW_OK;
}

// A title: a catalog-only session and a TitleReader on it; false when `uri` names no title. Each
// switch is posted on the bus (an element message "rdmasrc-rendition-switch": from, to, reason,
// the title's time, goodput, seconds held) and marks the next buffer DISCONT, as GStreamer's
// adaptive demuxers mark a fragment of another bitrate. Throws ClientError.
static bool open_title(GstRdmaSrc* self, const vod::client::Uri& uri, const vod::client::SessionOptions& options) {
  State& s = self->state;
  vod::client::Uri catalog_uri = uri;
  catalog_uri.movie.reset();
  auto session = std::make_unique<vod::client::Session>(catalog_uri, options);
  if (!vod::proto::find_title(session->catalog().titles, *uri.movie)) return false;
  vod::client::TitleOptions title;
  title.paced = false;  // downstream's demand paces it; the reader's clock still measures the buffer
  title.remux = [](std::uint64_t size, const vod::client::TitleOptions::ReadAt& read_at, std::uint64_t start_us, std::uint64_t end_us,
                   unsigned n) { return vod::media::mpegts_media_segment(size, read_at, start_us, end_us, n); };
  GST_OBJECT_LOCK(self);
  if (!s.rendition.empty()) title.rendition = s.rendition;
  GST_OBJECT_UNLOCK(self);
  s.title = std::make_unique<vod::client::TitleReader>(*session, *uri.movie, title);
  s.title->on_switch = [self](const vod::client::TitleSwitch& w) {
    self->state.title_switched = true;
    GstStructure* st =
        gst_structure_new("rdmasrc-rendition-switch", "from", G_TYPE_STRING, w.from.c_str(), "to", G_TYPE_STRING, w.to.c_str(), "reason",
                          G_TYPE_STRING, vod::client::abr::to_string(w.why), "time", G_TYPE_UINT64, static_cast<guint64>(w.at_us * 1000),
                          "goodput", G_TYPE_DOUBLE, w.goodput_bps, "buffer", G_TYPE_DOUBLE, w.buffer_s, nullptr);
    gst_element_post_message(GST_ELEMENT(self), gst_message_new_element(GST_OBJECT(self), st));
  };
  s.session = std::move(session);
  GST_INFO_OBJECT(self, "opened title %s: renditions %zu, starting at %s", uri.to_string().c_str(), s.title->labels().size(),
                  s.title->rendition().c_str());
  return true;
}

// A title's next bytes (TitleReader), DISCONT after a switch; EOS at its end.
static GstFlowReturn title_create(GstRdmaSrc* self, guint length, GstBuffer** out) {
  vod::client::TitleReader& title = *self->state.title;
  const GstFlowReturn ret = read_into_new_buffer(
      self, std::max<guint>(length, 2 * vod::client::kTsPacket), [&title](std::span<std::uint8_t> dest) { return title.read(dest); }, out);
  if (ret != GST_FLOW_OK) return ret;
  if (gst_buffer_get_size(*out) == 0) {
    gst_buffer_unref(std::exchange(*out, nullptr));
    return GST_FLOW_EOS;
  }
  if (std::exchange(self->state.title_switched, false)) GST_BUFFER_FLAG_SET(*out, GST_BUFFER_FLAG_DISCONT);
  return GST_FLOW_OK;
}

static gboolean gst_rdma_src_start(GstBaseSrc* base) {
  auto* self = GST_RDMA_SRC(base);
  State& s = self->state;
  vod::client::SessionOptions options;
  vod::client::Uri uri;
  GST_OBJECT_LOCK(self);
  uri = {s.host, static_cast<std::uint16_t>(s.port), s.movie.empty() ? std::nullopt : std::optional<std::string>(s.movie)};
  uri.live = s.live;
  uri.token = s.token;
  uri.cluster = s.cluster;
  options.engine.chunk_size = s.chunk_size;
  options.engine.readahead_bytes = static_cast<std::size_t>(s.read_ahead);
  options.engine.read_depth = s.read_depth;
  options.readahead_seconds = s.read_ahead_time;
  options.reconnect.give_up_after = std::chrono::milliseconds(static_cast<long>(s.reconnect_timeout * 1000));
  if (s.transport == "udp") options.transport = vod::client::Transport::udp;
  options.udp.port = static_cast<std::uint16_t>(s.udp_port);
  options.engine.direct = s.zero_copy;
  vod::client::MulticastLiveOptions multicast;
  multicast.group = s.udp_group;
  multicast.interface = s.udp_interface;
  const vod::cluster::EtcdSecurity etcd = s.etcd;
  const std::string dvr_start = s.dvr_start;
  GST_OBJECT_UNLOCK(self);
  if (uri.cluster) {
    try {
      uri.cluster->etcd.security = vod::cluster::checked_etcd_security(etcd);
    } catch (const std::exception& e) {
      GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS, ("%s", e.what()), ("rdmasrc: the etcd-* properties"));
      return FALSE;
    }
  }
  if ((uri.host.empty() && !uri.cluster) || !uri.movie) {
    GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("No movie to read: set uri=rdma://host[:port]/movie (or host and movie)."), (nullptr));
    return FALSE;
  }
  try {
    if (uri.live) {
      vod::client::LiveOptions live;
      live.chunk_size = options.engine.chunk_size;
      live.read_depth = options.engine.read_depth;
      live.reconnect = options.reconnect;
      const bool by_multicast = options.transport == vod::client::Transport::udp;
      multicast.udp = options.udp;
      const auto group = by_multicast ? std::optional(multicast) : std::nullopt;
      s.dvr = std::make_unique<vod::gst::LiveDvr>(uri, options, live, group);
      if (const auto behind = vod::client::parse_dvr_start(dvr_start)) {
        auto viewer = s.dvr->open(*behind);
        gst_element_post_message(GST_ELEMENT(self), vod::gst::LiveDvr::started_message(GST_ELEMENT(self), *viewer));
        s.live_source = std::move(viewer);
      } else {
        s.live_source = vod::client::open_live(uri, live, group);
      }
      GST_INFO_OBJECT(self, "opened live channel %s (%s): ring of %" G_GUINT64_FORMAT " bytes", uri.to_string().c_str(),
                      by_multicast ? ("multicast from " + multicast.group).c_str() : "RDMA",
                      static_cast<guint64>(s.live_source->channel().size));
      return TRUE;
    }
    try {
      s.session = std::make_unique<vod::client::Session>(uri, options);
    } catch (const ClientError& e) {
      // Not a movie: perhaps a title, in the catalog.
      if (e.kind() != vod::client::ErrorKind::unknown_movie || !open_title(self, uri, options)) throw;
      return TRUE;
    }
  } catch (const ClientError& e) {
    post_error(self, e);
    return FALSE;
  } catch (const std::exception& e) {
    GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ, ("Cannot open %s: %s", uri.to_string().c_str(), e.what()), (nullptr));
    return FALSE;
  }
  // The catalog and the keyframe index are still on their way (read behind the first bytes): what
  // the accept says, so that nothing here waits for them.
  GST_INFO_OBJECT(self, "opened %s: %" G_GUINT64_FORMAT " bytes, keyframe index of %u bytes, %u Reads in flight", uri.to_string().c_str(),
                  static_cast<guint64>(s.session->size()), static_cast<unsigned>(s.session->accept().index.length),
                  s.session->read_depth());
  return TRUE;
}

static gboolean gst_rdma_src_stop(GstBaseSrc* base) {
  auto* self = GST_RDMA_SRC(base);
  if (self->state.session) GST_INFO_OBJECT(self, "closing: %s", self->state.session->stats().summary().c_str());
  if (self->state.live_source) GST_INFO_OBJECT(self, "closing: %s", self->state.live_source->summary().c_str());
  // Blocks still advertised are cancelled; a registered buffer with a Read still landing in it goes
  // back to its pool only once the Read is done or the connection (its QP first) is gone, which
  // destroying the session does now. Buffers downstream holds were all complete when handed over,
  // and keep the pool's memory alive until they are freed.
  self->state.reads.reset();
  self->state.title.reset();
  self->state.session.reset();
  self->state.live_source.reset();
  self->state.dvr.reset();
  return TRUE;
}

static gboolean gst_rdma_src_get_size(GstBaseSrc* base, guint64* size) {
  auto* self = GST_RDMA_SRC(base);
  if (!self->state.session || self->state.title) return FALSE;  // a live channel and a title's stream have no size
  *size = self->state.session->size();
  return TRUE;
}

static gboolean gst_rdma_src_is_seekable(GstBaseSrc* base) {
  const State& s = GST_RDMA_SRC(base)->state;
  if (s.dvr) return s.dvr->range().has_value();  // a live channel: within its DVR window, by TIME
  return !s.live && !s.title;
}

// A live channel seeks by TIME in its DVR window (live_dvr.hpp); a movie by BYTES, as basesrc does.
static gboolean gst_rdma_src_prepare_seek_segment(GstBaseSrc* base, GstEvent* seek, GstSegment* segment) {
  auto* self = GST_RDMA_SRC(base);
  if (self->state.dvr) return self->state.dvr->prepare_seek(GST_ELEMENT(self), seek, segment);
  return GST_BASE_SRC_CLASS(parent_class)->prepare_seek_segment(base, seek, segment);
}

static gboolean gst_rdma_src_event(GstBaseSrc* base, GstEvent* event) {
  auto* self = GST_RDMA_SRC(base);
  if (GST_EVENT_TYPE(event) == GST_EVENT_SEEK && self->state.dvr) {
    GstFormat format = GST_FORMAT_UNDEFINED;
    gst_event_parse_seek(event, nullptr, &format, nullptr, nullptr, nullptr, nullptr, nullptr);
    if (format != GST_FORMAT_TIME) return FALSE;  // in the stream's own format: prepare_seek_segment would not see it
  }
  return GST_BASE_SRC_CLASS(parent_class)->event(base, event);
}

// The streaming thread is stopped: a live channel goes on with the viewer its seek opened.
static gboolean gst_rdma_src_do_seek(GstBaseSrc* base, GstSegment* segment) {
  auto* self = GST_RDMA_SRC(base);
  if (self->state.dvr) {
    if (auto seeked = self->state.dvr->take_seeked()) {
      if (self->state.live_source) GST_INFO_OBJECT(self, "seeked: %s", self->state.live_source->summary().c_str());
      self->state.live_source = std::move(seeked);
    }
  }
  return GST_BASE_SRC_CLASS(parent_class)->do_seek(base, segment);
}

// A live channel: the next bytes the viewer may deliver, DISCONT after a skip, a loop or a
// restart of the source. Blocks until there are some (unlock() interrupts it).
// (A LiveSession over RDMA, or a MulticastLiveSession: holes in the multicast are DISCONT too.)
static GstFlowReturn live_create(GstRdmaSrc* self, vod::client::LiveSource& session, guint length, GstBuffer** out) {
  vod::client::LiveChunk chunk;
  bool discont = false;
  const GstFlowReturn ret = read_into_new_buffer(
      self, length,
      [&](std::span<std::uint8_t> dest) {
        // A channel that gives nothing for this long says so on the bus, with the viewer's figures
        // (notifications, header reads, credits), instead of blocking without a word.
        constexpr int kQuietWarnSeconds = 5;
        int quiet = 0;
        do {
          chunk = session.read(dest, std::chrono::milliseconds(1000));
          discont = discont || chunk.discontinuity;
          if (chunk.end_of_stream) GST_INFO_OBJECT(self, "the channel's source stopped; waiting for it to come back");
          if (chunk.bytes == 0 && !chunk.end_of_stream && ++quiet == kQuietWarnSeconds) {
            const std::string figures = session.summary();
            GST_ELEMENT_WARNING(self, RESOURCE, READ,
                                ("Live channel '%s' gave no bytes for %d s.", session.channel().name.c_str(), kQuietWarnSeconds),
                                ("%s", figures.c_str()));
          }
        } while (chunk.bytes == 0);
        return chunk.bytes;
      },
      out);
  if (ret != GST_FLOW_OK) return ret;
  GST_BUFFER_OFFSET(*out) = chunk.stream_offset;
  GST_BUFFER_OFFSET_END(*out) = chunk.stream_offset + chunk.bytes;
  if (discont) GST_BUFFER_FLAG_SET(*out, GST_BUFFER_FLAG_DISCONT);
  return GST_FLOW_OK;
}

// Push mode, zero copy: the next block from the registered buffers advertised ahead, wrapped as it
// is. Returns false (and *out untouched) when the block must be read the usual way instead: a
// buffer the caller supplies, pull mode, a block size other than the pool's, or every registered
// buffer held downstream.
static bool registered_create(GstRdmaSrc* self, guint64 offset, guint length, GstBuffer** out, GstFlowReturn& ret) {
  State& s = self->state;
  if (*out || GST_PAD_MODE(GST_BASE_SRC_PAD(GST_BASE_SRC(self))) != GST_PAD_MODE_PUSH) return false;
  vod::client::Session& session = *s.session;
  if (offset >= session.size()) return false;  // EOS, the usual way
  vod::client::BufferPoolOptions po;
  po.buffer_bytes = length;
  const std::size_t ahead = vod::client::SequentialReads::buffers_for(length, s.chunk_size, session.read_depth());
  po.buffers_per_arena = ahead;
  po.max_buffers = ahead + kHeldDownstream;
  if (session.buffers(po)->buffer_bytes() != length) return false;  // blocksize changed while playing
  if (!s.reads || s.reads_at != offset) {                           // the start, or a seek: what was advertised is cancelled
    s.reads.reset();
    s.reads = std::make_unique<vod::client::SequentialReads>(session, offset, session.size(), length, ahead);
    s.reads_at = offset;
  }
  std::optional<vod::client::SequentialReads::Piece> piece;
  try {
    piece = s.reads->next();
  } catch (const vod::client::Interrupted&) {
    ret = GST_FLOW_FLUSHING;  // unlock(): what is advertised stays, for a create at the same offset
    return true;
  } catch (const ClientError& e) {
    post_error(self, e);
    ret = GST_FLOW_ERROR;
    return true;
  } catch (const std::exception& e) {  // registering the buffers failed (RLIMIT_MEMLOCK), say
    GST_ELEMENT_ERROR(self, RESOURCE, READ, ("Reading at byte %" G_GUINT64_FORMAT " into a registered buffer failed: %s", offset, e.what()),
                      ("set zero-copy=off to read through the ring"));
    ret = GST_FLOW_ERROR;
    return true;
  }
  if (!piece) {  // every registered buffer is downstream: this block through the ring
    s.reads.reset();
    return false;
  }
  s.reads_at = offset + piece->bytes;
  // The GstBuffer owns the registered buffer, and gives it back to the pool when freed, on whatever
  // thread: the pool is thread-safe.
  auto holder = std::make_unique<vod::client::ReadBuffer>(std::move(piece->buffer));
  std::uint8_t* data = holder->data();
  const gsize max = holder->size();
  GstBuffer* buf = gst_buffer_new_wrapped_full(
      static_cast<GstMemoryFlags>(0), data, max, 0, piece->bytes, holder.release(),
      [](gpointer p) { std::unique_ptr<vod::client::ReadBuffer> owned(static_cast<vod::client::ReadBuffer*>(p)); });
  GST_BUFFER_OFFSET(buf) = offset;
  GST_BUFFER_OFFSET_END(buf) = offset + piece->bytes;
  *out = buf;
  ret = GST_FLOW_OK;
  GST_LOG_OBJECT(self, "%zu bytes at %" G_GUINT64_FORMAT " in a registered buffer", piece->bytes, offset);
  return true;
}

static GstFlowReturn gst_rdma_src_create(GstBaseSrc* base, guint64 offset, guint length, GstBuffer** out) {
  auto* self = GST_RDMA_SRC(base);
  if (self->state.live_source) return live_create(self, *self->state.live_source, length, out);
  if (self->state.title) return title_create(self, length, out);
  GstFlowReturn ret = GST_FLOW_OK;
  if (registered_create(self, offset, length, out, ret)) return ret;
  return GST_BASE_SRC_CLASS(parent_class)->create(base, offset, length, out);  // allocates and calls fill(): a copy
}

static GstFlowReturn gst_rdma_src_fill(GstBaseSrc* base, guint64 offset, guint length, GstBuffer* buf) {
  auto* self = GST_RDMA_SRC(base);
  auto& session = *self->state.session;
  const guint64 size = session.size();
  if (offset >= size) return GST_FLOW_EOS;
  GstMapInfo map;
  if (!gst_buffer_map(buf, &map, GST_MAP_WRITE)) {
    GST_ELEMENT_ERROR(self, RESOURCE, READ, ("Cannot map a buffer for writing."), (nullptr));
    return GST_FLOW_ERROR;
  }
  std::size_t got = 0;
  GstFlowReturn ret = GST_FLOW_OK;
  try {
    got = session.pread(offset, std::span<std::uint8_t>(map.data, std::min<guint64>(length, map.size)));
  } catch (const vod::client::Interrupted&) {
    ret = GST_FLOW_FLUSHING;  // unlock(): a state change or a flushing seek is waiting for us
  } catch (const ClientError& e) {
    post_error(self, e);
    ret = GST_FLOW_ERROR;
  } catch (const std::exception& e) {
    GST_ELEMENT_ERROR(self, RESOURCE, READ, ("Reading at byte %" G_GUINT64_FORMAT " failed: %s", offset, e.what()), (nullptr));
    ret = GST_FLOW_ERROR;
  }
  gst_buffer_unmap(buf, &map);
  if (ret != GST_FLOW_OK) return ret;
  gst_buffer_resize(buf, 0, static_cast<gssize>(got));  // short only at the end of the movie
  GST_BUFFER_OFFSET(buf) = offset;
  GST_BUFFER_OFFSET_END(buf) = offset + got;
  GST_LOG_OBJECT(self, "read %zu bytes at %" G_GUINT64_FORMAT, got, offset);
  return GST_FLOW_OK;
}

static gboolean gst_rdma_src_unlock(GstBaseSrc* base) {
  auto* self = GST_RDMA_SRC(base);
  if (self->state.session) self->state.session->interrupt();
  if (self->state.live_source) self->state.live_source->interrupt();
  return TRUE;
}

static gboolean gst_rdma_src_unlock_stop(GstBaseSrc* base) {
  auto* self = GST_RDMA_SRC(base);
  if (self->state.session) self->state.session->clear_interrupt();
  if (self->state.live_source) self->state.live_source->clear_interrupt();
  return TRUE;
}

static gboolean gst_rdma_src_query(GstBaseSrc* base, GstQuery* query) {
  auto* self = GST_RDMA_SRC(base);
  if (GST_QUERY_TYPE(query) == GST_QUERY_URI) {
    GST_OBJECT_LOCK(self);
    const std::string u = uri_of(self->state);
    GST_OBJECT_UNLOCK(self);
    gst_query_set_uri(query, u.c_str());
    return TRUE;
  }
  if (GST_QUERY_TYPE(query) == GST_QUERY_SEEKING && self->state.dvr) return self->state.dvr->answer_seeking(query);
  if (GST_QUERY_TYPE(query) == GST_QUERY_SCHEDULING && self->state.live) {
    // A live channel is read in sequence, pushed: basesrc would offer pull mode to a seekable
    // source, and a window makes it seekable (by TIME only).
    gst_query_set_scheduling(query, GST_SCHEDULING_FLAG_SEQUENTIAL, 1, -1, 0);
    gst_query_add_scheduling_mode(query, GST_PAD_MODE_PUSH);
    return TRUE;
  }
  return GST_BASE_SRC_CLASS(parent_class)->query(base, query);
}

static void gst_rdma_src_finalize(GObject* object) {
  std::destroy_at(&GST_RDMA_SRC(object)->state);
  G_OBJECT_CLASS(parent_class)->finalize(object);
}

static void gst_rdma_src_init(GstRdmaSrc* self) {
  std::construct_at(&self->state);
  gst_base_src_set_blocksize(GST_BASE_SRC(self), kDefaultBlocksize);
  gst_base_src_set_format(GST_BASE_SRC(self), GST_FORMAT_BYTES);
}

static void gst_rdma_src_class_init(GstRdmaSrcClass* klass) {
  auto* gobject = G_OBJECT_CLASS(klass);
  auto* element = GST_ELEMENT_CLASS(klass);
  auto* base = GST_BASE_SRC_CLASS(klass);
  gobject->set_property = gst_rdma_src_set_property;
  gobject->get_property = gst_rdma_src_get_property;
  gobject->finalize = gst_rdma_src_finalize;
  const auto flags = static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);
  g_object_class_install_property(
      gobject, PROP_URI,
      g_param_spec_string("uri", "URI",
                          "rdma://host[:port]/movie of a movie, or rdma://host[:port]/live/NAME of a live channel, on a vod-server; "
                          "rdma+etcd://etcd-host[:2379]/movie for a fleet registered in etcd",
                          nullptr, flags));
  g_object_class_install_property(
      gobject, PROP_LOCATION, g_param_spec_string("location", "Location", "Same as uri (for tools that set a location)", nullptr, flags));
  g_object_class_install_property(gobject, PROP_HOST,
                                  g_param_spec_string("host", "Host", "vod-server address on an RDMA-capable interface", "", flags));
  g_object_class_install_property(gobject, PROP_PORT,
                                  g_param_spec_uint("port", "Port", "vod-server rdma_cm port", 1, 65535, kDefaultPort, flags));
  g_object_class_install_property(gobject, PROP_MOVIE,
                                  g_param_spec_string("movie", "Movie", "Name of the movie in the server's catalog", "", flags));
  g_object_class_install_property(
      gobject, PROP_CHUNK_SIZE,
      g_param_spec_uint("chunk-size", "Chunk size", "Bytes per RDMA Read (at least 8 KiB)", 8192, 64u << 20, kDefaultChunkSize, flags));
  g_object_class_install_property(
      gobject, PROP_READ_AHEAD,
      g_param_spec_uint64("read-ahead", "Read-ahead", "Bytes read ahead of the position (the most, with read-ahead-time)", 0, G_MAXUINT32,
                          kDefaultReadAhead, flags));
  g_object_class_install_property(
      gobject, PROP_READ_AHEAD_TIME,
      g_param_spec_double("read-ahead-time", "Read-ahead time", "Seconds of the movie's bitrate to read ahead; 0 uses read-ahead bytes", 0,
                          3600, kDefaultReadAheadTime, flags));
  g_object_class_install_property(
      gobject, PROP_READ_DEPTH,
      g_param_spec_uint("read-depth", "Read depth", "RDMA Reads in flight wanted (the devices and the server may allow fewer)", 1, 255,
                        kDefaultReadDepth, flags));
  g_object_class_install_property(gobject, PROP_RECONNECT_TIMEOUT,
                                  g_param_spec_double("reconnect-timeout", "Reconnect timeout",
                                                      "Seconds to keep reconnecting after the server goes away before posting an error", 0,
                                                      3600, kDefaultReconnectTimeout, flags));

  g_object_class_install_property(
      gobject, PROP_TRANSPORT,
      g_param_spec_string(
          "transport", "Transport",
          "rdma (one-sided RDMA Read) or udp (Write-Record over UDP, for hosts without an RDMA NIC; the server needs --udp-port)",
          kDefaultTransport, flags));
  g_object_class_install_property(
      gobject, PROP_UDP_PORT,
      g_param_spec_uint("udp-port", "UDP port", "The server's Write-Record port, with transport=udp", 1, 65535, kDefaultUdpPort, flags));
  g_object_class_install_property(
      gobject, PROP_UDP_GROUP,
      g_param_spec_string("udp-group", "UDP multicast group",
                          "A live channel with transport=udp: the GROUP[:PORT] the server multicasts it to (its --live-multicast)", "",
                          flags));
  g_object_class_install_property(
      gobject, PROP_UDP_INTERFACE,
      g_param_spec_string("udp-interface", "UDP multicast interface",
                          "With udp-group: the IPv4 address (IPv6: name) of the interface to join the group on; empty: any", "", flags));

  g_object_class_install_property(
      gobject, PROP_ZERO_COPY,
      g_param_spec_boolean("zero-copy", "Zero copy",
                           "In push mode, RDMA Reads land straight in the buffers that go downstream (registered memory of the session); "
                           "false: every byte through the read ring, copied (for tests and bisecting)",
                           kDefaultZeroCopy, flags));
  // A fleet's etcd over TLS (rdma+etcds://) and with authentication: vod-client's --etcd-* options.
  g_object_class_install_property(
      gobject, PROP_ETCD_CACERT,
      g_param_spec_string("etcd-cacert", "etcd CA",
                          "With rdma+etcds://: the CA certificate (PEM) etcd's certificate must verify against (empty: the system's)", "",
                          flags));
  g_object_class_install_property(
      gobject, PROP_ETCD_CERT,
      g_param_spec_string("etcd-cert", "etcd client certificate",
                          "With rdma+etcds://: a client certificate (PEM) for an etcd run with --client-cert-auth", "", flags));
  g_object_class_install_property(gobject, PROP_ETCD_KEY,
                                  g_param_spec_string("etcd-key", "etcd client key", "The private key (PEM) of etcd-cert", "", flags));
  g_object_class_install_property(
      gobject, PROP_ETCD_USER,
      g_param_spec_string("etcd-user", "etcd user", "etcd's authentication: a user whose role may read the fleet's prefix", "", flags));
  g_object_class_install_property(gobject, PROP_ETCD_PASSWORD_FILE,
                                  g_param_spec_string("etcd-password-file", "etcd password file",
                                                      "A file holding etcd-user's password (read at each authentication)", "", flags));
  g_object_class_install_property(
      gobject, PROP_RENDITION,
      g_param_spec_string("rendition", "rendition",
                          "A title (a folder of renditions): play this rendition (its label, e.g. 720p), never switching; empty: adaptive",
                          "", flags));

  g_object_class_install_property(
      gobject, PROP_DVR_START,
      g_param_spec_string("dvr-start", "DVR start",
                          "A live channel with a DVR window (vod-server --live-dvr): start behind live, -SECONDS or -5m, or at a UTC "
                          "time, 2026-11-27T20:00:00Z; empty: at live. Later, seek by TIME (publish time in ns since the epoch) "
                          "within the seeking query's range",
                          "", flags));

  gst_element_class_add_static_pad_template(element, &src_template);
  gst_element_class_set_static_metadata(element, "RDMA source", "Source/Network",
                                        "Reads a movie from a vod-server with one-sided RDMA Read (rdma://host[:port]/movie)",
                                        "rdma-vod developers");
  base->start = gst_rdma_src_start;
  base->stop = gst_rdma_src_stop;
  base->get_size = gst_rdma_src_get_size;
  base->is_seekable = gst_rdma_src_is_seekable;
  base->fill = gst_rdma_src_fill;
  base->create = gst_rdma_src_create;
  base->unlock = gst_rdma_src_unlock;
  base->unlock_stop = gst_rdma_src_unlock_stop;
  base->query = gst_rdma_src_query;
  base->event = gst_rdma_src_event;
  base->prepare_seek_segment = gst_rdma_src_prepare_seek_segment;
  base->do_seek = gst_rdma_src_do_seek;
}

// ---------------------------------------------------------------- GstURIHandler

static GstURIType gst_rdma_src_uri_get_type(GType) { return GST_URI_SRC; }

static const gchar* const* gst_rdma_src_uri_get_protocols(GType) {
  static const gchar* protocols[] = {"rdma", "rdma+etcd", nullptr};
  return protocols;
}

static gchar* gst_rdma_src_uri_get_uri(GstURIHandler* handler) {
  auto* self = GST_RDMA_SRC(handler);
  GST_OBJECT_LOCK(self);
  const std::string u = uri_of(self->state);
  GST_OBJECT_UNLOCK(self);
  return u.empty() ? nullptr : g_strdup(u.c_str());
}

static gboolean gst_rdma_src_uri_set_uri(GstURIHandler* handler, const gchar* uri, GError** error) {
  return set_uri(GST_RDMA_SRC(handler), uri, error);
}

static void gst_rdma_src_uri_handler_init(gpointer iface, gpointer) {
  auto* i = static_cast<GstURIHandlerInterface*>(iface);
  i->get_type = gst_rdma_src_uri_get_type;
  i->get_protocols = gst_rdma_src_uri_get_protocols;
  i->get_uri = gst_rdma_src_uri_get_uri;
  i->set_uri = gst_rdma_src_uri_set_uri;
}
