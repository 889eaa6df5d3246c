#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A probe, not a test (issue 43, defect 12): the frames a live rdmasrc decodes in a 15 s window with
# a fresh GStreamer registry and with one already made, after eight staggered viewers and a stopped
# one read the channel, and how long a fresh registry takes to scan. In the Soft-RoCE guest:
#   tests/softroce/softroce-run -- env VOD_BUILD_DIR=$PWD/build tests/rdma/gst_registry_probe.sh
# Measured 2026-11-28 (guest alone): 0 frames cold, 289 warm; the scan alone 12.0 s.
source "$(dirname "$0")/vod_test_lib.sh"
set +e +o pipefail
export GST_REGISTRY=$work/registry.bin
ffmpeg -hide_banner -loglevel error -nostdin -y -f lavfi -i "testsrc2=size=320x240:rate=25:duration=4" \
  -c:v libx264 -preset ultrafast -g 25 -keyint_min 25 -sc_threshold 0 -b:v 600k -f mpegts "$work/loop.ts"
mkdir -p "$work/media"
start_server "$work/media" --live "ch=file:$work/loop.ts" --live-buffer 3 --log-level info
viewers=()
for i in $(seq 8); do "$client_bin" get "$(uri live/ch)" -o /dev/null --duration 4 2>/dev/null & viewers+=($!); sleep 0.3; done
"$client_bin" get "$(uri live/ch)" -o /dev/null --duration 20 2>/dev/null & stopped=$!
sleep 1; kill -STOP $stopped
wait "${viewers[@]}"
kill -CONT $stopped; kill $stopped
run() {
  local label=$1 t0=$(date +%s.%N)
  GST_DEBUG=rdmasrc:4 timeout 15 gst-launch-1.0 -v rdmasrc uri="$(uri live/ch)" ! tsdemux ! h264parse ! avdec_h264 ! fakesink silent=false sync=true \
    2> "$work/$label.err" | while IFS= read -r line; do echo "$(date +%s.%N) $line"; done > "$work/$label.out" || true
  local first=$(grep -m1 'last-message = chain' "$work/$label.out" | cut -d' ' -f1)
  local frames=$(grep -c 'last-message = chain' "$work/$label.out")
  local opened=$(grep -m1 'opened\|connected\|live' "$work/$label.err" | head -c 300)
  echo "$label: $frames frames in 15 s; first frame after $(echo "${first:-$t0} - $t0" | bc) s; rdmasrc: $opened"
}
run cold
run warm
rm -f "$GST_REGISTRY"
s=$(date +%s.%N)
gst-inspect-1.0 rdmasrc > /dev/null 2>&1
echo "registry scan alone: $(echo "$(date +%s.%N) - $s" | bc) s"
stop_server
