#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# vod-proxy: HTTP players over RDMA.
#   vod_proxy_test.sh vod   (rdma_vod_proxy, beside other tests) curl: statuses, headers and bodies
#       exact, ranges, validators, the catalog pages and pictures; ffmpeg (framemd5 equal to the
#       local file's after a 30 s seek); 100 concurrent clients with their own ranges; malformed
#       requests and a foreign Host; a server restart under a download
#   vod_proxy_test.sh live  (rdma_vod_proxy_live, RUN_SERIAL: players in real time) VLC as a
#       non-root user (remuxed and counted with ffprobe), a live channel (curl chunked, HTTP/1.0,
#       VLC), 8 live viewers sharing one server connection and a slow one that jumps to a keyframe
source "$(dirname "$0")/vod_test_lib.sh"
mode=${1:-}
[[ $mode == vod || $mode == live ]] || fail "usage: vod_proxy_test.sh vod|live"
media=$work/media
mkdir -p "$media"
for f in test-480p-60s.ts test-480p-60s.mp4 test-480p-60s.mkv; do cp "$test_media/$f" "$media/"; done
"$build/tests/rdma/make_pattern" $((20 * 1024 * 1024 + 17)) 7 "$media/pattern.bin"
export VOD_TEST_PORT=$(free_port)
start_server "$media" --live "cam=file:$media/test-480p-60s.ts"
http_port=$(free_port)
base=http://127.0.0.1:$http_port
proxy_log=$work/proxy.log
"$build/proxy/vod-proxy" --server "$(uri)" --listen "127.0.0.1:$http_port" --chunk-kib 128 --reconnect-for 30 2> "$proxy_log" &
proxy_pid=$!
cleanup_hooks+=("kill $proxy_pid 2>/dev/null; echo '--- proxy log (last 40 lines)'; grep -v 'INFO access' $proxy_log | tail -n 40")
for _ in $(seq 600); do curl -s -o /dev/null "$base/" && break; sleep 0.1; done

ts=$media/test-480p-60s.ts
size=$(stat -c %s "$ts")
header() { grep -i "^$1:" "$work/h" | head -n 1 | cut -d' ' -f2- | tr -d '\r'; }
status() { head -n 1 "$work/h" | cut -d' ' -f2; }
fetch() { curl -s -D "$work/h" -o "$work/body" "$@"; }
expect_eq() { [[ "$2" == "$3" ]] || fail "$1: got '$2', expected '$3'"; }
slice() { dd if="$1" iflag=skip_bytes,count_bytes skip="$2" count="$3" status=none; }

if [[ $mode == vod ]]; then
step "curl: the whole movie"
fetch "$base/movies/test-480p-60s.ts"
expect_eq status "$(status)" 200
expect_eq Content-Length "$(header Content-Length)" "$size"
expect_eq Content-Type "$(header Content-Type)" video/mp2t
expect_eq Accept-Ranges "$(header Accept-Ranges)" bytes
etag=$(header ETag)
# The content identity (SHA-256, 128 bits) and the size: the movie is pinned, hashed as it loaded.
[[ $etag =~ ^\"[0-9a-f]{32}-$size\"$ ]] || fail "ETag '$etag'"
cmp "$ts" "$work/body" || fail "whole body differs"
pass "200, headers exact, body byte-identical"

step "curl: closed, open and suffix ranges, and past the end"
fetch -H "Range: bytes=1000-1999" "$base/movies/test-480p-60s.ts"
expect_eq status "$(status)" 206
expect_eq Content-Range "$(header Content-Range)" "bytes 1000-1999/$size"
expect_eq Content-Length "$(header Content-Length)" 1000
slice "$ts" 1000 1000 | cmp - "$work/body" || fail "closed range body"
fetch -H "Range: bytes=$((size - 100))-" "$base/movies/test-480p-60s.ts"
expect_eq Content-Range "$(header Content-Range)" "bytes $((size - 100))-$((size - 1))/$size"
slice "$ts" $((size - 100)) 100 | cmp - "$work/body" || fail "open range body"
fetch -H "Range: bytes=-500" "$base/movies/test-480p-60s.ts"
expect_eq status "$(status)" 206
expect_eq Content-Range "$(header Content-Range)" "bytes $((size - 500))-$((size - 1))/$size"
slice "$ts" $((size - 500)) 500 | cmp - "$work/body" || fail "suffix range body"
fetch -H "Range: bytes=$size-" "$base/movies/test-480p-60s.ts"
expect_eq status "$(status)" 416
expect_eq Content-Range "$(header Content-Range)" "bytes */$size"
fetch -H "Range: bytes=0-9,20-29" "$base/movies/test-480p-60s.ts"
expect_eq "multiple ranges" "$(status)" 200
cmp "$ts" "$work/body" || fail "multi-range whole body"
# HEAD over a raw connection that the proxy closes: everything after the header must be nothing.
exec 3<>"/dev/tcp/127.0.0.1/$http_port"
printf 'HEAD /movies/test-480p-60s.ts HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nConnection: close\r\n\r\n' "$http_port" >&3
timeout 10 cat <&3 > "$work/head.raw"
exec 3>&-
sed -n '1,/^\r$/p' "$work/head.raw" > "$work/h"
expect_eq "HEAD status" "$(status)" 200
expect_eq "HEAD length" "$(header Content-Length)" "$size"
expect_eq "HEAD body bytes" $(( $(stat -c %s "$work/head.raw") - $(stat -c %s "$work/h") )) 0
pass "206 with exact Content-Range for closed, open and suffix ranges; 416 bytes */$size; multi-range whole; HEAD"

step "validators"
fetch -H "Range: bytes=0-9" -H 'If-Range: "stale"' "$base/movies/test-480p-60s.ts"
expect_eq "If-Range stale" "$(status)" 200
fetch -H "Range: bytes=0-9" -H "If-Range: $etag" "$base/movies/test-480p-60s.ts"
expect_eq "If-Range current" "$(status)" 206
fetch -H 'If-Match: "other"' "$base/movies/test-480p-60s.ts"
expect_eq "If-Match other" "$(status)" 412
fetch -H "If-None-Match: $etag" "$base/movies/test-480p-60s.ts"
expect_eq "If-None-Match" "$(status)" 304
pass "If-Range, If-Match, If-None-Match"

step "catalog pages"
fetch "$base/catalog.json"
grep -q '"name":"test-480p-60s.mp4"' "$work/body" && grep -q '"mime_type":"video/mp4"' "$work/body" || fail "catalog.json: $(cat "$work/body")"
fetch "$base/playlist.m3u"
head -n 1 "$work/body" | grep -q '^#EXTM3U' && grep -q "^#EXTINF:60,test-480p-60s.mkv$" "$work/body" &&
  grep -q "^http://127.0.0.1:$http_port/movies/test-480p-60s.mkv$" "$work/body" || fail "playlist: $(cat "$work/body")"
fetch "$base/"
grep -q 'href="/watch/pattern.bin"' "$work/body" && grep -q 'src="/poster/cam?g=' "$work/body" || fail "HTML catalog"
fetch "$base/watch/test-480p-60s.mp4"
grep -q '<source src="/hls/test-480p-60s.mp4/master.m3u8" type="application/vnd.apple.mpegurl">' "$work/body" &&
  grep -q '<source src="/movies/test-480p-60s.mp4" type="video/mp4">' "$work/body" || fail "watch page: $(cat "$work/body")"
pass "/, /watch/NAME, /catalog.json, /playlist.m3u"

step "pictures over RDMA: posters of every container, a strip frame, the live channel's current picture, a placeholder"
for picture in poster/test-480p-60s.mp4 poster/test-480p-60s.ts poster/test-480p-60s.mkv strip/3/test-480p-60s.mkv poster/cam; do
  fetch "$base/$picture"
  grep -q '^HTTP/1.1 200' "$work/h" && grep -qi '^Content-Type: image/jpeg' "$work/h" || fail "/$picture: $(head -n 1 "$work/h")"
  grep -qi '^X-Thumbnail: placeholder' "$work/h" && fail "/$picture is the placeholder: $(grep -i x-thumbnail "$work/h")"
  [[ $(ffprobe -v error -show_entries stream=codec_name,width -of csv=p=0 "$work/body") == mjpeg,320 ]] || fail "/$picture does not decode as a 320-wide JPEG"
done
fetch "$base/poster/pattern.bin"
grep -qi '^X-Thumbnail: placeholder' "$work/h" || fail "pattern.bin (not media) did not get the placeholder"
[[ $(ffprobe -v error -show_entries stream=codec_name -of csv=p=0 "$work/body") == mjpeg ]] || fail "the placeholder does not decode"
pass "5 pictures decoded by ffprobe (one of them live), the placeholder for raw bytes"

for m in test-480p-60s.mp4 test-480p-60s.mkv; do
  step "ffmpeg -ss 30 -i $base/movies/$m -t 5 -f framemd5 - equals the local file"
  # The local file's, made natively before the guest started (make-expectations.sh): the video
  # decoded, and every stream's packets (audio as packets: identical packets decode identically on
  # one machine, but a float audio decoder's bits may differ between the host's and TCG's SIMD).
  ffmpeg -v error -ss 30 -i "$base/movies/$m" -t 5 -map 0:v -f framemd5 - > "$work/remote.md5"
  ffmpeg -v error -ss 30 -i "$base/movies/$m" -t 5 -map 0 -c copy -f framemd5 - > "$work/remote-packets.md5"
  frames=$(grep -vc '^#' "$work/remote.md5")
  [[ $frames -gt 100 ]] || fail "only $frames frames"
  cmp "$(expected "$m.ss30-t5.video.framemd5")" "$work/remote.md5" || fail "framemd5 of $m's decoded video differs from the file's"
  cmp "$(expected "$m.ss30-t5.packets.framemd5")" "$work/remote-packets.md5" || fail "framemd5 of $m's packets differs from the file's"
  pass "$m: $frames identical frame checksums, and every stream's packets the file's"
done
fi

if [[ $mode == live ]]; then

step "VLC as a non-root user (VLC refuses root): play 10-20 s, remuxed with --sout, frames counted by ffprobe"
vlc_remux "$base/movies/test-480p-60s.ts" out.ts "$work/vlc.log" --start-time=10 --stop-time=20 || { cat "$work/vlc.log"; fail "cvlc failed"; }
frames=$(video_frames "$vlc_home/out.ts")
[[ ${frames:-0} -ge 200 ]] || { cat "$work/vlc.log"; fail "VLC produced $frames video frames"; }
grep -q '"GET /movies/test-480p-60s.ts"' "$proxy_log" || fail "no access log line for VLC"
pass "VLC played through the proxy: $frames video frames in its remux"

step "a live channel: /live/cam is an endless chunked TS that ffprobe and VLC decode"
curl -s -N --max-time 6 -D "$work/h" -o "$work/live.ts" "$base/live/cam" || true
expect_eq status "$(status)" 200
expect_eq Content-Type "$(header Content-Type)" video/mp2t
expect_eq Transfer-Encoding "$(header Transfer-Encoding)" chunked
[[ -z $(header Content-Length) ]] || fail "a live response has a Content-Length"
size_live=$(stat -c %s "$work/live.ts")
head -c $((size_live / 188 * 188)) "$work/live.ts" > "$work/live-whole.ts"  # curl stopped mid-packet
ffprobe -v error -select_streams v:0 -show_entries frame=key_frame -of csv=p=0 "$work/live-whole.ts" > "$work/live.frames" 2> "$work/live.errors" || true
live_frames=$(grep -c . "$work/live.frames")
[[ $(head -n 1 "$work/live.frames" | tr -d ,) == 1 ]] || fail "the live response does not start with a keyframe"
((live_frames >= 75)) || fail "6 s of the live channel gave $live_frames frames"
# curl cut the last frame short; nothing else may fail to decode.
(( $(grep -c . "$work/live.errors" || true) <= 2 )) || fail "the live response does not decode: $(head -n 3 "$work/live.errors")"
curl -s -0 -N --max-time 3 -D "$work/h" -o /dev/null "$base/live/cam" || true
[[ -z $(header Transfer-Encoding) ]] || fail "an HTTP/1.0 client got chunked encoding"
fetch "$base/playlist.m3u"
grep -q "^$base/live/cam\$" "$work/body" || grep -q "/live/cam" "$work/body" || fail "the playlist does not list the live channel"
VLC_SECONDS=12 vlc_remux "$base/live/cam" live.ts "$work/vlc-live.log" || true  # ended by SIGINT
vlc_live=$(video_frames "$vlc_home/live.ts")
[[ ${vlc_live:-0} -ge 75 ]] || { tail -n 20 "$work/vlc-live.log"; fail "VLC got ${vlc_live:-0} video frames from the live channel"; }
pass "live: $live_frames frames by curl (chunked), HTTP/1.0 close-delimited, playlist entry, VLC $vlc_live frames"

step "live fan-out: 8 HTTP viewers of /live/cam share one server connection; a slow one jumps to a keyframe"
# The previous step's session closes 2 s after its last viewer left (kLiveLinger).
metric() { curl -s "$base/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
for _ in $(seq 600); do [[ $(metric vod_proxy_live_channels) == 0 ]] && break; sleep 0.1; done
[[ $(metric vod_proxy_live_channels) == 0 ]] || fail "the live session of the previous step is still open"
live_accepts() { grep -c "accept .*: live channel 'cam'" "$server_log" || true; }  # 0 matches is a count too
accepted_before=$(live_accepts)
fan=()
for i in $(seq 8); do
  curl -s -N --max-time 6 -o "$work/fan$i.ts" "$base/live/cam" &
  fan+=($!)
done
sleep 4
fan_channels=$(metric vod_proxy_live_channels) fan_viewers=$(metric vod_proxy_live_viewers)
for p in "${fan[@]}"; do wait "$p" || true; done  # curl ends at --max-time (exit 28)
accepted=$(( $(live_accepts) - accepted_before ))
((accepted == 1)) || fail "8 HTTP viewers made $accepted live connections to the server (its log's \"accept ...: live channel 'cam'\" lines), not 1"
[[ $fan_channels == 1 && $fan_viewers == 8 ]] || fail "the proxy's /metrics: $fan_channels live sessions and $fan_viewers viewers, not 1 and 8"
# Whole packets (curl stopped mid-packet), then one ffmpeg (framecrc_all) lists every viewer's video
# packets (the first must be a keyframe, and 6 s hold 150) and decodes two of them, as the previous
# step decoded curl's and VLC's: the eight carry the same bytes of one session, and decoding all
# eight 480p recordings, a player started for each, took 80 s of this serial test under TCG.
for i in $(seq 8); do
  size_fan=$(stat -c %s "$work/fan$i.ts")
  head -c $((size_fan / 188 * 188)) "$work/fan$i.ts" > "$work/fan-whole$i.ts"
done
framecrc_all --decode 2 "$work"/fan-whole{1..8}.ts
# curl cut each recording's last frame short: at most two complaints each, nothing else.
(( $(grep -c . "$work/framecrc.errors" || true) <= 2 * 8 )) || fail "the viewers' bytes do not decode: $(head -n 3 "$work/framecrc.errors")"
for i in $(seq 8); do
  [[ $(grep -v -m 1 '^#' "$work/fan-whole$i.ts.packets") != *F=* ]] || fail "viewer $i does not start with a keyframe"
  fan_frames=$(framecrc_lines "$work/fan-whole$i.ts.packets")
  ((fan_frames >= 75)) || fail "viewer $i: 6 s of the live channel gave $fan_frames video packets"
  if ((i <= 2)); then
    decoded=$(framecrc_lines "$work/fan-whole$i.ts.frames")
    ((decoded + 2 >= fan_frames)) || fail "viewer $i: $fan_frames video packets but $decoded frames decoded"
  fi
  echo "    viewer $i: $(stat -c %s "$work/fan$i.ts") bytes, $fan_frames video packets from a keyframe"
done
# A slow viewer (4 KiB receive buffer, 8 kB/s of a ~130 kB/s channel) of a proxy with a small
# backlog: it falls out, jumps to the newest keyframe (logged, counted), and its bytes stay whole
# TS packets that decode. The other proxy's viewers are not involved.
slow_port=$((http_port + 1))
"$build/proxy/vod-proxy" --server "$(uri)" --listen "127.0.0.1:$slow_port" --chunk-kib 128 --live-buffer-kib 256 2> "$work/proxy-slow.log" &
slow_proxy=$!
cleanup_hooks+=("kill $slow_proxy 2>/dev/null")
for _ in $(seq 600); do grep -q 'listening on' "$work/proxy-slow.log" && break; sleep 0.1; done
/usr/bin/python3 "$(dirname "$0")/../proxy/hostile_http.py" slowlive "$slow_port" /live/cam --out "$work/slow.ts" --rate 8000 --seconds 7 \
  --until-skip --max-seconds 40 > "$work/slow.out"  # on until the proxy counts the jump, 40 s at most: 7 s were once not enough (the kernel's send buffer on loopback took much of the channel)
grep -q "status='HTTP/1.1 200" "$work/slow.out" || fail "slow viewer: $(cat "$work/slow.out")"
skips=$(curl -s "http://127.0.0.1:$slow_port/metrics" | awk '$1 == "vod_proxy_live_skips_total" { print $2 }')
kill "$slow_proxy"; wait "$slow_proxy" 2>/dev/null || true
((skips >= 1)) || fail "the slow viewer never fell behind a 256 KiB backlog: $(cat "$work/slow.out")"
grep -q "the viewer fell behind the proxy's 256 KiB buffer (--live-buffer-kib); skipped [0-9]* bytes to the newest keyframe" "$work/proxy-slow.log" ||
  fail "no log line for the slow viewer's jump"
size_slow=$(stat -c %s "$work/slow.ts")
head -c $((size_slow / 188 * 188)) "$work/slow.ts" > "$work/slow-whole.ts"
cmp -s <(od -An -v -tu1 -w188 "$work/slow-whole.ts" | awk '{ print $1 }' | sort -u) <(echo 71) ||
  fail "after its jumps the slow viewer's bytes are not whole TS packets"
slow_frames=$(video_frames "$work/slow-whole.ts")
((${slow_frames:-0} >= 5)) || fail "the slow viewer's bytes decode to ${slow_frames:-0} frames"
pass "8 viewers, 1 server connection (server log), each from a keyframe with >= 75 frames; a slow viewer jumped $skips times, its $size_slow bytes whole packets ($slow_frames frames)"

fi

if [[ $mode == vod ]]; then
step "100 concurrent clients, each with its own range of a 20 MiB pattern file"
psize=$(stat -c %s "$media/pattern.bin")
for i in $(seq 100); do
  first=$(( (RANDOM * 32768 + RANDOM) % psize ))
  len=$(( 1 + (RANDOM * 7) % 400000 ))
  echo "$i $first $((first + len - 1))"
done > "$work/ranges"
# One curl, 100 transfers at once over 100 connections (-Z): 100 processes started in a TCG guest
# took a minute before the first request.
args=()
while read -r i first last; do
  args+=(-s -o "$work/c.$i" -H "Range: bytes=$first-$last" "$base/movies/pattern.bin" --next)  # options per transfer
done < "$work/ranges"
curl -Z --parallel-max 100 --parallel-immediate "${args[@]:0:${#args[@]}-1}" > "$work/parallel.log" 2>&1 ||
  fail "the 100 concurrent ranged requests: curl exit $?: $(tail -c 300 "$work/parallel.log")"
bad=0
while read -r i first last; do
  [[ $last -ge $psize ]] && last=$((psize - 1))
  slice "$media/pattern.bin" "$first" $((last - first + 1)) | cmp -s - "$work/c.$i" || { echo "client $i ($first-$last) differs"; bad=$((bad + 1)); }
done < "$work/ranges"
[[ $bad -eq 0 ]] || fail "$bad of 100 concurrent clients got wrong bytes"
pass "100 concurrent ranged clients byte-exact"

step "malformed requests get a 4xx, and the proxy stays up"
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
expect_eq "bad Range" "$(code -H 'Range: bytes=abc' "$base/movies/pattern.bin")" 416
expect_eq "overflowing Range" "$(code -H 'Range: bytes=0-99999999999999999999999' "$base/movies/pattern.bin")" 416
expect_eq "oversized headers" "$(code -H "X-Big: $(head -c 20000 /dev/zero | tr '\0' a)" "$base/")" 431
expect_eq "unknown method" "$(code -X BREW "$base/")" 405
expect_eq "POST with a body" "$(code -X POST --data 'x=1' "$base/")" 413
expect_eq "unknown movie" "$(code "$base/movies/nope.mp4")" 404
expect_eq "dot-dot" "$(code --path-as-is "$base/movies/../../etc/passwd")" 400
expect_eq "encoded slash" "$(code "$base/movies/..%2F..%2Fetc%2Fpasswd")" 400
expect_eq "encoded NUL" "$(code "$base/movies/a%00b")" 400
expect_eq "foreign Host (DNS rebinding)" "$(code -H 'Host: attacker.example' "$base/")" 421
exec 3<>"/dev/tcp/127.0.0.1/$http_port"
printf 'NOT HTTP AT ALL\r\n\r\n' >&3
reply=$(timeout 5 head -n 1 <&3 || true)
exec 3>&-
[[ $reply == "HTTP/1.1 400"* ]] || fail "garbage request: '$reply'"
kill -0 "$proxy_pid" || fail "the proxy died"
expect_eq "still serving" "$(code "$base/movies/pattern.bin")" 200
pass "416, 416, 431, 405, 413, 404, 400, 400, 400, 421, 400 and still serving"

step "the proxy refuses a non-loopback listen address without --allow-remote"
rc=0; out=$("$build/proxy/vod-proxy" --server "$(uri)" --listen 0.0.0.0:1 2>&1) || rc=$?
[[ $rc -eq 2 ]] && grep -q "not a loopback address" <<< "$out" || fail "non-loopback listen: exit $rc: $out"
pass "refused: $out"

step "the vod-server restarts under a slow download: the response resumes, byte-identical"
# 20 MiB at 1 MB/s through a 64 KiB receive buffer (hostile_http.py slowget): after 2 s the proxy
# has read at most what the client took, its socket's send buffer (4 MiB at most) and a few
# blocks, so the restart lands mid-response. curl --limit-rate once let the kernel take the whole
# body ahead of it (the receive buffer autotunes to tcp_rmem's maximum on loopback).
/usr/bin/python3 "$(dirname "$0")/../proxy/hostile_http.py" slowget "$http_port" /movies/pattern.bin --out "$work/slow.bin" \
  --rate 1000000 --max-seconds 150 > "$work/slow.out" &
slow=$!
sleep 2
crash_and_restart_server "$media"
rc=0; wait "$slow" || rc=$?
got=$(sed -n 's/.*body_bytes=\([0-9]*\).*/\1/p' "$work/slow.out")
[[ $rc -eq 0 ]] && grep -q "status='HTTP/1.1 200" "$work/slow.out" || fail "the slow download failed across the restart (exit $rc): $(cat "$work/slow.out")"
cmp "$media/pattern.bin" "$work/slow.bin" || fail "the download across a server restart differs: $(cat "$work/slow.out")"
grep -q "reconnected to" "$proxy_log" || fail "the proxy did not reconnect: the restart did not land mid-response"
pass "killed 2 s into a $psize-byte download at 1 MB/s; resumed after the restart, byte-identical ($got bytes)"
fi
kill "$proxy_pid"; wait "$proxy_pid" || true
stop_server
