#!/usr/bin/env bash
# GStreamer: runs the rdmasrc suite (gst_test.cpp) against a vod-server in this session, with the
# plugin from the build tree. The server also replays the TS movie as live channel 'cam'.
source "$(dirname "$0")/vod_test_lib.sh"
media=$work/media
mkdir -p "$media"
for f in test-480p-60s.ts test-480p-60s.mp4 test-480p-60s.mkv; do cp "$build/test-media/$f" "$media/"; done
start_server "$media" --live "cam=file:$media/test-480p-60s.ts"
export GST_PLUGIN_PATH=$build/client/gst
export GST_REGISTRY=$work/gst-registry.bin
gst-inspect-1.0 rdmasrc > /dev/null || fail "gst-inspect-1.0 does not find rdmasrc in $GST_PLUGIN_PATH"
export VOD_POISON_BUFFERS=1   # zero copy: a Read landing in a buffer handed back aborts the test
VOD_TEST_URI=$(uri) VOD_TEST_MEDIA_DIR=$media "$build/tests/rdma/vod_gst_tests"
stop_server
