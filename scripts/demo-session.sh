#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The part of the demo that needs RDMA (scripts/demo.sh runs it through softroce-run).
set -euo pipefail
media=$1
server=build/server/vod-server client=build/client/vod-client
addr=${VOD_RDMA_ADDR:?run through tests/softroce/softroce-run}
work=$(mktemp -d)
trap 'kill $server_pid 2>/dev/null || true; rm -rf "$work"' EXIT
say() { echo; echo ">>> $*"; }

say "RDMA device"
ibv_devinfo | grep -E 'hca_id|transport|active_mtu|state' | sed 's/^/    /'
say "vod-server --media-dir $media (log: one line per event)"
"$server" --media-dir "$media" --bind "$addr" 2> "$work/server.log" &
server_pid=$!
for _ in $(seq 600); do grep -q 'listening on' "$work/server.log" && break; sleep 0.1; done
sed 's/^/    /' "$work/server.log"
cpu() { awk '{ print $14 + $15 }' "/proc/$server_pid/stat"; }
hz=$(getconf CLK_TCK)

say "vod-client list rdma://$addr"
"$client" list "rdma://$addr"

movie=test-1080p-30s.ts
say "vod-client get rdma://$addr/$movie (full speed), then cmp with the original"
before=$(cpu)
"$client" get "rdma://$addr/$movie" -o "$work/$movie"
cmp "$media/$movie" "$work/$movie" && echo "    byte-identical: $(stat -c %s "$work/$movie") bytes"
echo "    server CPU during the download: $(echo "scale=2; ($(cpu) - $before) / $hz" | bc) s"

say "vod-client play rdma://$addr/$movie --start 10 --unpaced | ffmpeg (decode to null)"
"$client" play "rdma://$addr/$movie" --start 10 --unpaced 2>/dev/null |
  ffmpeg -hide_banner -loglevel error -i - -map 0:v -f framemd5 - 2>/dev/null | grep -vc '^#' |
  xargs -I{} echo "    decoded {} video frames, from the keyframe at or before 10 s to the end"

say "GStreamer: playbin uri=rdma://$addr/test-480p-30s.mp4 (rdmasrc from the build tree, fakesinks)"
export GST_PLUGIN_PATH=$PWD/build/client/gst GST_REGISTRY=$work/gst-registry.bin
gst-launch-1.0 -v playbin uri="rdma://$addr/test-480p-30s.mp4" video-sink="fakesink silent=false name=vsink" audio-sink=fakesink 2>/dev/null |
  grep -c 'vsink: last-message = chain' | xargs -I{} echo "    playbin decoded {} video frames over RDMA and reached EOS (ffprobe counts $(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$media/test-480p-30s.mp4"))"

say "vod-proxy on 127.0.0.1:8080: ffmpeg seeks to 20 s over HTTP Range requests"
build/proxy/vod-proxy --server "rdma://$addr" --listen 127.0.0.1:8080 2> "$work/proxy.log" &
proxy_pid=$!
for _ in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:8080/ && break; sleep 0.1; done
curl -s http://127.0.0.1:8080/playlist.m3u | head -n 3 | sed 's/^/    /'
ffmpeg -v error -ss 20 -i "http://127.0.0.1:8080/movies/test-1080p-30s.mp4" -t 5 -map 0:v -f framemd5 - | grep -vc '^#' |
  xargs -I{} echo "    ffmpeg decoded {} video frames of 20-25 s of the 1080p MP4 through the proxy"
grep 'access' "$work/proxy.log" | tail -n 2 | sed 's/^/    /'
kill "$proxy_pid"

say "vod-client bench: 6 viewers at the movies' bitrates, jumping every 3 s, for 12 s"
before=$(cpu)
"$client" bench "rdma://$addr" --clients 6 --duration 12 --pattern jump:3 --chunk-kib 128 --readahead-seconds 2 | grep -v '^BENCH' | sed 's/^/    /'
echo "    server CPU while 6 viewers streamed and jumped: $(echo "scale=2; ($(cpu) - $before) / $hz" | bc) s"
echo "    (with Soft-RoCE the Read responder runs in the guest kernel; an RNIC does it in hardware)"

say "SIGTERM: the server drains and exits"
kill -TERM "$server_pid"; wait "$server_pid" && echo "    vod-server exited 0"
tail -n 3 "$work/server.log" | sed 's/^/    /'
echo; echo "demo finished"
