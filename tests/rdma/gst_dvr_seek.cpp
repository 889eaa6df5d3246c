// SPDX-License-Identifier: LGPL-2.1-or-later
// gst_dvr_seek URI BEHIND: rdmasrc on a live channel with a DVR window (vod_dvr_test.sh runs it in
// the guest). A playbin plays URI (rdma://host:port/live/NAME) at live; then
//  - the seeking query, asked of the pipeline as a player asks it (it passes tsdemux to rdmasrc),
//    answers the window's range in publish time: seekable, ending near the wall clock now, and at
//    least BEHIND + 5 s long;
//  - a flushing seek to BEHIND seconds before the live edge is accepted, rdmasrc says (its
//    "rdmasrc-dvr" message) it starts at a keyframe at most 10 s before that time, and 100 video
//    frames decode after it with no error;
//  - a seek an hour before the window is refused with a warning, and the channel goes on playing;
//  - a second playbin whose rdmasrc has dvr-start=-BEHIND starts that far behind and decodes.
// Prints a line per check; exits 1 at the first that fails.
#include <gst/gst.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace {

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "gst_dvr_seek: FAIL: %s\n", what.c_str());
  std::exit(1);
}

std::uint64_t now_us() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

struct Started {
  std::uint64_t time_us = 0, live_us = 0, behind_us = 0;
};

struct Player {
  GstElement* playbin = nullptr;
  GstBus* bus = nullptr;
  std::atomic<int> frames{0};
  std::string dvr_start;

  Player(const std::string& uri, std::string start) : dvr_start(std::move(start)) {
    playbin = gst_element_factory_make("playbin", nullptr);
    GstElement* video = gst_element_factory_make("fakesink", nullptr);
    GstElement* audio = gst_element_factory_make("fakesink", nullptr);
    if (!playbin || !video || !audio) fail("no playbin or fakesink");
    // Not synchronised: the window is read as fast as it decodes, then the live edge in real time.
    g_object_set(video, "signal-handoffs", TRUE, "sync", FALSE, nullptr);
    g_object_set(audio, "sync", FALSE, nullptr);
    g_signal_connect(video, "handoff", G_CALLBACK(+[](GstElement*, GstBuffer*, GstPad*, gpointer p) { ++static_cast<Player*>(p)->frames; }),
                     this);
    g_signal_connect(playbin, "source-setup", G_CALLBACK(+[](GstElement*, GstElement* source, gpointer p) {
                       auto* self = static_cast<Player*>(p);
                       if (!self->dvr_start.empty()) g_object_set(source, "dvr-start", self->dvr_start.c_str(), nullptr);
                     }),
                     this);
    constexpr guint kPlayVideo = 1u << 0, kPlayNativeVideo = 1u << 6;  // video only, as the decoder gives it
    g_object_set(playbin, "uri", uri.c_str(), "video-sink", video, "audio-sink", audio, "flags", kPlayVideo | kPlayNativeVideo, nullptr);
    bus = gst_element_get_bus(playbin);
    if (gst_element_set_state(playbin, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) fail("playbin did not start");
  }
  ~Player() {
    gst_element_set_state(playbin, GST_STATE_NULL);
    gst_object_unref(bus);
    gst_object_unref(playbin);
  }

  // Pops bus messages until `frames` video frames (counted from now) have decoded, within
  // `seconds` (generous: bounds, not a measure); an ERROR fails. Returns the last rdmasrc-dvr
  // message seen, and whether a WARNING came.
  std::optional<Started> play(int want, int seconds, bool* warned = nullptr) {
    const int from = frames.load();
    std::optional<Started> started;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (frames.load() - from < want || (warned && !*warned)) {
      if (std::chrono::steady_clock::now() > deadline)
        fail(std::to_string(frames.load() - from) + " frames of " + std::to_string(want) + " within " + std::to_string(seconds) + " s" +
             (warned && !*warned ? ", and no warning" : ""));
      GstMessage* m = gst_bus_timed_pop(bus, GST_SECOND / 10);
      if (!m) continue;
      if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR || GST_MESSAGE_TYPE(m) == GST_MESSAGE_WARNING) {
        GError* e = nullptr;
        if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) gst_message_parse_error(m, &e, nullptr);
        else gst_message_parse_warning(m, &e, nullptr);
        const std::string text = e ? e->message : "?";
        if (e) g_error_free(e);
        if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) fail("error while playing: " + text);
        std::printf("warning: %s\n", text.c_str());
        if (warned) *warned = true;
      } else if (const GstStructure* s = gst_message_get_structure(m);
                 GST_MESSAGE_TYPE(m) == GST_MESSAGE_ELEMENT && s && gst_structure_has_name(s, "rdmasrc-dvr")) {
        Started st;
        guint64 v = 0;
        if (gst_structure_get_uint64(s, "time-us", &v)) st.time_us = v;
        if (gst_structure_get_uint64(s, "live-us", &v)) st.live_us = v;
        if (gst_structure_get_uint64(s, "behind-us", &v)) st.behind_us = v;
        started = st;
      }
      gst_message_unref(m);
    }
    return started;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: gst_dvr_seek rdma://HOST:PORT/live/NAME BEHIND_SECONDS\n");
    return 2;
  }
  gst_init(nullptr, nullptr);
  const std::string uri = argv[1];
  const std::uint64_t behind_us = std::stoull(argv[2]) * 1'000'000;
  {
    Player p(uri, "");
    if (p.play(25, 60)) fail("a viewer at live said it started behind live");
    std::printf("at live: %d frames decoded\n", p.frames.load());

    GstQuery* q = gst_query_new_seeking(GST_FORMAT_TIME);
    gboolean seekable = FALSE;
    gint64 first = -1, last = -1;
    if (!gst_element_query(p.playbin, q)) fail("the pipeline did not answer a seeking query in TIME");
    gst_query_parse_seeking(q, nullptr, &seekable, &first, &last);
    gst_query_unref(q);
    const std::uint64_t now = now_us(), oldest_us = static_cast<std::uint64_t>(first) / 1000,
                        live_us = static_cast<std::uint64_t>(last) / 1000;
    std::printf("seeking query: seekable %d, %.1f s of window, its live edge %.1f s before now\n", seekable,
                static_cast<double>(last - first) / 1e9, (static_cast<double>(now) - static_cast<double>(live_us)) / 1e6);
    if (!seekable || first <= 0 || last <= first) fail("the live channel's window is not seekable, or its range is empty");
    if (live_us > now + 2'000'000 || live_us + 15'000'000 < now) fail("the range's end is not the live edge (the wall clock now)");
    if (live_us - oldest_us < behind_us + 5'000'000) fail("the window is shorter than the seek wanted");

    const std::uint64_t target_us = live_us - behind_us;
    p.frames = 0;
    if (!gst_element_seek_simple(p.playbin, GST_FORMAT_TIME, static_cast<GstSeekFlags>(GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_KEY_UNIT),
                                 static_cast<gint64>(target_us * 1000)))
      fail("a seek into the window was refused");
    const auto started = p.play(100, 90);
    if (!started) fail("rdmasrc did not say where the seek started");
    std::printf("seek to %.1f s behind live: started at a keyframe %.2f s before that time, %.1f s behind; then %d frames\n",
                static_cast<double>(behind_us) / 1e6, (static_cast<double>(target_us) - static_cast<double>(started->time_us)) / 1e6,
                static_cast<double>(started->behind_us) / 1e6, p.frames.load());
    if (started->time_us > target_us || started->time_us + 10'000'000 < target_us)
      fail("the seek started at a keyframe more than 10 s from its target");

    bool warned = false;
    if (gst_element_seek_simple(p.playbin, GST_FORMAT_TIME, static_cast<GstSeekFlags>(GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_KEY_UNIT),
                                static_cast<gint64>((oldest_us - 3'600'000'000ull) * 1000)))
      fail("a seek an hour before the window was accepted");
    p.play(25, 60, &warned);
    std::printf("a seek an hour before the window: refused with a warning, and the channel went on\n");
  }
  {
    Player p(uri, "-" + std::to_string(behind_us / 1'000'000));
    const auto started = p.play(50, 90);
    if (!started) fail("with dvr-start, rdmasrc did not say where it started");
    std::printf("dvr-start=-%s: started %.1f s behind live; %d frames\n", argv[2], static_cast<double>(started->behind_us) / 1e6,
                p.frames.load());
    if (started->behind_us < behind_us || started->behind_us > behind_us + 10'000'000) fail("dvr-start did not start that far behind live");
  }
  std::printf("gst_dvr_seek: all passed\n");
  return 0;
}
