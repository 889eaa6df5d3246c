#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# vod-proxy's HLS over RDMA (tests/hls/hls_checks.sh, as the native test runs it over UDP): the TS
# movie's playlists pass the RFC 8216 checks, its map and byte-range segments tile the file byte for
# byte, ffmpeg -ss 30 on the playlist gives the file's video frames; the MKV movie's fMP4 pieces hold
# the file's video packets one for one. Whole-movie decodes are left to the native test (TCG is slow);
# no real-time player here, so it runs beside other tests.
source "$(dirname "$0")/vod_test_lib.sh"
source "$(dirname "$0")/../hls/hls_checks.sh"
media=$work/media
mkdir -p "$media"
for f in test-480p-60s.ts test-480p-60s.mkv; do cp "$build/test-media/$f" "$media/"; done
start_server "$media"
http_port=$(free_port)
base=http://127.0.0.1:$http_port
"$build/proxy/vod-proxy" --server "$(uri)" --listen "127.0.0.1:$http_port" 2> "$work/proxy.log" &
proxy_pid=$!
cleanup_hooks+=("kill $proxy_pid 2>/dev/null; echo '--- proxy log (last 20 lines)'; grep -v 'INFO access' $work/proxy.log | tail -n 20")
for _ in $(seq 100); do curl -s -o /dev/null "$base/" && break; sleep 0.1; done

step "the TS movie: playlists, byte ranges, a seek"
HLS_DECODE=0 hls_check_ts_movie "$base" "$media/test-480p-60s.ts" "$work"
step "the Matroska movie: fMP4 remuxed on the fly"
HLS_DECODE=0 hls_check_fmp4_movie "$base" "$media/test-480p-60s.mkv" "$work"
grep -q "hls: 'test-480p-60s.mkv': 15 segments" "$work/proxy.log" || fail "the proxy's log does not show the MKV movie's facts read"
grep -q "connect from .*: movie" "$server_log" || fail "the proxy never connected to the server for a movie"
stop_server
