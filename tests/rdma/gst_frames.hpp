// SPDX-License-Identifier: LGPL-2.1-or-later
// The MD5 of each decoded video frame of a GStreamer source, from its start and after flushing
// seeks: what rdma_vod_gst compares rdmasrc against. The same code makes the expectation natively,
// with filesrc, before the guest starts (gst_seek_frames, run by tests/media/make-expectations.sh),
// so the guest never decodes a reference.
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace vod::test {

// The seek targets, in seconds, after the start: each a new segment of frames.
inline constexpr int kSeekTargets[] = {10, 30, 5};

// The MD5 of a decoded frame's visible pixels, plane by plane and row by row, as ffmpeg's framemd5:
// a decoder's buffers carry padding it never writes, which a hash of the whole buffer would include.
inline std::string visible_md5(GstPad* pad, GstBuffer* buf) {
  GstCaps* caps = gst_pad_get_current_caps(pad);
  GstVideoInfo info;
  const bool described = caps && gst_video_info_from_caps(&info, caps);
  if (caps) gst_caps_unref(caps);
  GstVideoFrame frame;
  if (!described || !gst_video_frame_map(&frame, &info, buf, GST_MAP_READ)) return "unmappable";
  GChecksum* sum = g_checksum_new(G_CHECKSUM_MD5);
  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(&frame); ++p) {
    const auto* row = static_cast<const guchar*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, p));
    const gint bytes = GST_VIDEO_FRAME_COMP_WIDTH(&frame, p) * GST_VIDEO_FRAME_COMP_PSTRIDE(&frame, p);
    for (gint y = 0; y < GST_VIDEO_FRAME_COMP_HEIGHT(&frame, p); ++y, row += GST_VIDEO_FRAME_PLANE_STRIDE(&frame, p))
      g_checksum_update(sum, row, static_cast<gssize>(bytes));
  }
  gst_video_frame_unmap(&frame);
  std::string md5 = g_checksum_get_string(sum);
  g_checksum_free(sum);
  return md5;
}

// Frames by the segment they belong to (a flushing seek starts a new one: counted at the sink's
// FLUSH_STOP, in the streaming thread, so no frame is misfiled).
struct SeekFrames {
  std::vector<std::vector<std::string>> segments;  // the start, then one per seek target
  std::string problem;                             // empty when every segment got its frames
};

// Plays `source ! queue ! decodebin` into a fakesink that does not sync, takes the first
// `per_segment` frames from the start and after a flushing key-unit seek to each target, and goes
// to NULL with Reads still in flight (for rdmasrc in zero copy: into buffers of its pool).
inline SeekFrames frames_after_seeks(const std::string& source, std::size_t per_segment) {
  struct Log {
    std::mutex lock;
    std::vector<std::vector<std::string>> segments{1};
    std::size_t frames_in_last() {
      std::lock_guard<std::mutex> g(lock);
      return segments.back().size();
    }
  } log;
  SeekFrames result;
  GError* error = nullptr;
  GstElement* pipeline = gst_parse_launch(
      (source + " ! queue ! decodebin ! video/x-raw ! fakesink name=sink sync=false signal-handoffs=true").c_str(), &error);
  if (!pipeline) {
    result.problem = source + ": " + (error ? error->message : "the pipeline did not parse");
    if (error) g_error_free(error);
    return result;
  }
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  g_signal_connect(sink, "handoff", G_CALLBACK(+[](GstElement*, GstBuffer* buf, GstPad* pad, gpointer user) {
                     auto* l = static_cast<Log*>(user);
                     const std::string md5 = visible_md5(pad, buf);
                     std::lock_guard<std::mutex> g(l->lock);
                     l->segments.back().push_back(md5);
                   }),
                   &log);
  GstPad* pad = gst_element_get_static_pad(sink, "sink");
  gst_pad_add_probe(
      pad, GST_PAD_PROBE_TYPE_EVENT_FLUSH,
      +[](GstPad*, GstPadProbeInfo* info, gpointer user) {
        if (GST_EVENT_TYPE(GST_PAD_PROBE_INFO_EVENT(info)) == GST_EVENT_FLUSH_STOP) {
          auto* l = static_cast<Log*>(user);
          std::lock_guard<std::mutex> g(l->lock);
          l->segments.emplace_back();
        }
        return GST_PAD_PROBE_OK;
      },
      &log, nullptr);
  gst_object_unref(pad);
  gst_object_unref(sink);
  // A generous limit per segment: 25 frames decode in well under a second natively and in a few
  // seconds under TCG beside another test; the limit only keeps a broken source from hanging.
  auto wait_frames = [&](const std::string& what) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(90);
    while (log.frames_in_last() < per_segment && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (log.frames_in_last() < per_segment && result.problem.empty())
      result.problem = source + ": " + std::to_string(log.frames_in_last()) + " frames " + what;
  };
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  wait_frames("from the start");
  for (const int seconds : kSeekTargets) {
    if (!gst_element_seek_simple(pipeline, GST_FORMAT_TIME, static_cast<GstSeekFlags>(GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_KEY_UNIT),
                                 seconds * GST_SECOND) &&
        result.problem.empty())
      result.problem = source + ": the seek to " + std::to_string(seconds) + " s was refused";
    wait_frames("after the seek to " + std::to_string(seconds) + " s");
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
  std::lock_guard<std::mutex> g(log.lock);
  for (auto& seg : log.segments)
    if (!seg.empty())
      result.segments.emplace_back(seg.begin(), seg.begin() + static_cast<std::ptrdiff_t>(std::min(seg.size(), per_segment)));
  return result;
}

}  // namespace vod::test
