// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live_dvr.hpp"

#include <utility>

#include "vod/log.hpp"

namespace vod::gst {

LiveDvr::LiveDvr(client::Uri channel, client::SessionOptions session, client::LiveOptions live,
                 std::optional<client::MulticastLiveOptions> multicast)
    : channel_(std::move(channel)), session_options_(std::move(session)), live_(std::move(live)), multicast_(std::move(multicast)) {}

LiveDvr::~LiveDvr() = default;

std::optional<WindowRange> LiveDvr::range() {
  const std::lock_guard lock(mutex_);
  if (absent_) return std::nullopt;
  const std::string name = channel_.movie.value_or("");
  try {
    if (!header_) header_ = std::make_unique<client::Session>(client::window_uri(channel_), session_options_);
    const proto::WindowHeader h = client::read_window_header(*header_, name);
    return WindowRange{h.oldest_offset < h.end_offset ? h.oldest_time_us : h.end_time_us, h.end_time_us};
  } catch (const std::exception& e) {  // never into GStreamer's C, which calls this
    const auto* error = dynamic_cast<const client::ClientError*>(&e);
    if (error && error->kind() == client::ErrorKind::unknown_movie) {
      absent_ = true;  // the channel keeps no window: not seekable, and the server is not asked again
      log::info("rdmasrc", "live/" + name + " keeps no DVR window: it is not seekable");
      return std::nullopt;
    }
    log::warn("rdmasrc", "live/" + name + ": the DVR window's range cannot be read now: " + e.what());
    header_.reset();
    return std::nullopt;
  }
}

std::unique_ptr<client::DvrSource> LiveDvr::open(const client::DvrStart& start) {
  return std::make_unique<client::DvrSource>(channel_, start, session_options_, live_, multicast_);
}

bool LiveDvr::answer_seeking(GstQuery* query) {
  GstFormat format = GST_FORMAT_UNDEFINED;
  gst_query_parse_seeking(query, &format, nullptr, nullptr, nullptr);
  const auto r = format == GST_FORMAT_TIME ? range() : std::nullopt;
  if (r) gst_query_set_seeking(query, format, TRUE, static_cast<gint64>(r->oldest_us * 1000), static_cast<gint64>(r->live_us * 1000));
  else gst_query_set_seeking(query, format, FALSE, -1, -1);
  return true;
}

bool LiveDvr::prepare_seek(GstElement* element, GstEvent* seek, GstSegment* segment) {
  gdouble rate = 1;
  GstFormat format = GST_FORMAT_UNDEFINED;
  GstSeekFlags flags{};
  GstSeekType start_type = GST_SEEK_TYPE_NONE, stop_type = GST_SEEK_TYPE_NONE;
  gint64 start = -1, stop = -1;
  gst_event_parse_seek(seek, &rate, &format, &flags, &start_type, &start, &stop_type, &stop);
  std::string refused;
  if (format != GST_FORMAT_TIME || start_type != GST_SEEK_TYPE_SET || start < 0)
    refused = "a live channel seeks to a TIME position: publish time in ns since the Unix epoch, within its seeking query's range";
  else if (rate != 1.0) refused = "a live channel plays at rate 1 only";
  else if (stop_type == GST_SEEK_TYPE_SET && stop >= 0) refused = "a live channel has no stop position";
  std::unique_ptr<client::DvrSource> viewer;
  if (refused.empty()) {
    try {
      viewer = open(client::DvrStart{std::nullopt, static_cast<std::uint64_t>(start) / 1000});
    } catch (const std::exception& e) {  // ClientError (outside the window...), or a device failure: never into GStreamer's C
      refused = e.what();
    }
  }
  if (!viewer) {
    GST_ELEMENT_WARNING(element, RESOURCE, SEEK,
                        ("Cannot seek in live channel '%s': %s", channel_.movie.value_or("").c_str(), refused.c_str()), (nullptr));
    return false;
  }
  gst_segment_init(segment, GST_FORMAT_BYTES);
  segment->start = segment->position = segment->time = viewer->position();
  gst_element_post_message(element, started_message(element, *viewer));
  const std::lock_guard lock(mutex_);
  seeked_ = std::move(viewer);
  return true;
}

std::unique_ptr<client::LiveSource> LiveDvr::take_seeked() {
  const std::lock_guard lock(mutex_);
  return std::move(seeked_);
}

GstMessage* LiveDvr::started_message(GstElement* element, const client::DvrSource& viewer) {
  const std::uint64_t at = viewer.started().time_us, live = viewer.window().header.end_time_us;
  return gst_message_new_element(
      GST_OBJECT(element),
      gst_structure_new("rdmasrc-dvr", "time-us", G_TYPE_UINT64, static_cast<guint64>(at), "live-us", G_TYPE_UINT64,
                        static_cast<guint64>(live), "behind-us", G_TYPE_UINT64, static_cast<guint64>(live > at ? live - at : 0), "clamped",
                        G_TYPE_BOOLEAN, static_cast<gboolean>(viewer.started().clamped), nullptr));
}

}  // namespace vod::gst
