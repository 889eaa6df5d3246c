#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# GStreamer: runs the rdmasrc suite (gst_test.cpp) against a vod-server in this session, with the
# plugin from the build tree. The server also replays the TS movie as live channel 'cam'.
#   vod_gst_test.sh vod   every case but the live channel's: pipelines whose sinks do not sync, so
#                         they run beside other tests (rdma_vod_gst)
#   vod_gst_test.sh live  the live channel played in real time, 75 frames within a bound: alone
#                         (rdma_vod_gst_live, RUN_SERIAL)
source "$(dirname "$0")/vod_test_lib.sh"
case ${1:-} in
  vod) filter='-Gst.PlaybinPlaysALiveChannel' ;;
  live) filter='Gst.PlaybinPlaysALiveChannel' ;;
  *) fail "usage: vod_gst_test.sh vod|live" ;;
esac
media=$work/media
mkdir -p "$media"
for f in test-480p-60s.ts test-480p-60s.mp4 test-480p-60s.mkv test-240p-20s.ts test-240p-20s.mp4 test-240p-20s.mkv; do cp "$test_media/$f" "$media/"; done
start_server "$media" --live "cam=file:$media/test-480p-60s.ts"
gst_ready
export VOD_POISON_BUFFERS=1   # zero copy: a Read landing in a buffer handed back aborts the test
VOD_TEST_URI=$(uri) VOD_TEST_MEDIA_DIR=$media VOD_TEST_EXPECTED=$test_media/expected "$build/tests/rdma/vod_gst_tests" --gtest_filter="$filter"
stop_server
