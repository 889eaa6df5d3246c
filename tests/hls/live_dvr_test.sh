#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A live channel's DVR window natively (vod-server --no-rdma --live-dvr 3m, vod-proxy --transport
# udp): the window read by Write-Record ranges over UDP.
#  - vod-client list shows the channel with its window (and not the window's own entry); a get
#    10 s behind live over UDP decodes; /catalog.json says "dvr"; the watch page has its scrub bar.
#  - /hls/live/cam/dvr.m3u8 passes check_playlist.py, with EXT-X-PROGRAM-DATE-TIME on every segment,
#    and with _HLS_skip=YES an EXT-X-SKIP that still passes; dvr.ts refuses a read without a Range.
#  - After 95 s, the segment whose program date is 90 s before the newest one decodes on its own in
#    ffmpeg from a keyframe, and ffmpeg plays the playlist from its first segment.
#  - A 10 s window that laps its file every few seconds is read over UDP for 14 s from 8 s behind
#    live, following it as it grows: every frame decodes (no byte of another lap).
#  - The watch page in headless Chromium (tests/web/dvr_check.py, hls.js): the scrub bar spans the
#    window, a scrub 20 s back plays there and the page says how far behind live, and the live
#    button returns to the live edge.
#  - Starts outside the window are refused with its range, and the channel goes on.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/native_proxy_lib.sh"
checked() {  # checked FILE NAME: the playlist passes the checker
  /usr/bin/python3 "$here/check_playlist.py" "$1" "$2" > "$work/check.out" || { cat "$work/check.out" "$1"; fail "$2 breaks the rules"; }
}
frames() { { ffprobe -v error -select_streams v:0 -show_entries frame=key_frame -of csv=p=0 "$1" 2> "$1.errors" || true; } | grep -c . || true; }

media=$work/media
mkdir -p "$media"
udp=$(free_port)
began=$SECONDS
start_server_and_proxy "$media" --live "cam=file:$test_media/test-480p-60s.ts" --live-dvr 3m --live-dvr-dir "$work/dvr" --segment-size 256K \
  --state-dir "" --
# A second server whose 10 s window laps its file every few seconds: read over UDP below.
small_udp=$(free_port)
mkdir -p "$work/small"
"$build/server/vod-server" --no-rdma --udp-port "$small_udp" --bind 127.0.0.1 --port "$(free_port)" --media-dir "$work/small" --state-dir "" \
  --live "cam=file:$test_media/test-480p-60s.ts" --live-dvr 10s --live-dvr-dir "$work/dvr-small" --segment-size 256K 2> "$work/small.log" &
pids+=($!)
step "the channel and its window, 12 s in"
sleep 12
server_udp=$(sed -n 's/.*Write-Record on 127.0.0.1:\([0-9]*\),.*/\1/p' "$work/server.log")
C=(--transport udp --udp-port "$server_udp")
"$build/client/vod-client" list rdma://127.0.0.1 "${C[@]}" > "$work/list"
grep -Eq '^cam .*LIVE.*live channel, DVR 0:03:00' "$work/list" || fail "vod-client list: $(cat "$work/list")"
grep -q '^\.dvr/' "$work/list" && fail "the window's own entry is listed: $(cat "$work/list")"
curl -sf "$base/catalog.json" | grep -q '"name":"cam","url":"/live/cam","live":true,"dvr":true' || fail "/catalog.json: $(curl -s "$base/catalog.json")"
curl -sf "$base/watch/cam" > "$work/watch.html"
grep -q 'id="scrub"' "$work/watch.html" && grep -q '/hls/live/cam/dvr.m3u8' "$work/watch.html" || fail "the watch page has no scrub bar over the window"
"$build/client/vod-client" get rdma://127.0.0.1/live/cam "${C[@]}" --start -10 --duration 4 -o "$work/behind.ts" --log-level info 2> "$work/behind.log" ||
  fail "a get 10 s behind live over UDP: $(tail -n 3 "$work/behind.log")"
n=$(frames "$work/behind.ts")
((n >= 75)) || fail "10 s behind live over UDP: $n frames in 4 s"
pass "listed with its window; a get 10 s behind over UDP: $n frames ($(sed -n 's/^LIVE .*window_bytes=\([0-9]*\).*/\1/p' "$work/behind.log") bytes from the window)"

step "dvr.m3u8 passes the checker; its delta update too"
code=$(curl -s -D "$work/h1" -o "$work/dvr1.m3u8" -w '%{http_code}' "$base/hls/live/cam/dvr.m3u8")
[[ $code == 200 ]] || fail "dvr.m3u8: HTTP $code: $(cat "$work/dvr1.m3u8")"
grep -qi '^Content-Type: application/vnd.apple.mpegurl' "$work/h1" || fail "dvr.m3u8 headers: $(cat "$work/h1")"
checked "$work/dvr1.m3u8" dvr
segments=$(grep -c '^#EXTINF' "$work/dvr1.m3u8")
[[ $(grep -c '^#EXT-X-PROGRAM-DATE-TIME:' "$work/dvr1.m3u8") == "$segments" ]] || fail "not every segment has a program date: $(cat "$work/dvr1.m3u8")"
((segments >= 3)) || fail "$segments segments after 12 s: $(cat "$work/dvr1.m3u8")"
code=$(curl -s -o /dev/null -w '%{http_code}' "$base/hls/live/cam/dvr.ts")
[[ $code == 416 ]] || fail "dvr.ts without a Range: HTTP $code"
pass "$segments segments, each with its program date; dvr.ts needs a Range"

step "a 10 s window that laps its file, over UDP"
S=(--transport udp --udp-port "$small_udp")
"$build/client/vod-client" get rdma://127.0.0.1/live/cam "${S[@]}" --start -8 --duration 14 -o "$work/laps.ts" --log-level info 2> "$work/laps.log" ||
  fail "a get across the small window's laps: $(tail -n 3 "$work/laps.log")"
n=$(frames "$work/laps.ts")
errors=$(grep -v 'non monotonically increasing dts' "$work/laps.ts.errors" | grep -v '^$' || true)
[[ -z $errors ]] && ((n >= 350)) || fail "across the laps: $n frames; $(head -n 3 <<< "$errors")"
laps=$(grep -o 'in [0-9]* chunks' "$work/small.log" | head -n 1)
pass "14 s from 8 s behind live, following a window $laps of 256 KiB as it laps: $n frames, clean"

step "the watch page in headless Chromium: its scrub bar over the window, and the live button"
for tool in /usr/bin/chromium /usr/bin/chromedriver; do [[ -x $tool ]] || fail "$tool is missing: scripts/install-deps.sh installs it"; done
artifacts=${VOD_ARTIFACT_DIR:-$build/test-artifacts/web}
mkdir -p "$artifacts"
timeout 300 /usr/bin/python3 "$here/../web/dvr_check.py" "$base" "$artifacts" cam 25 || fail "the DVR watch page in Chromium"
pass "the scrub bar spans the window; a scrub 20 s back plays there and says so; the live button returns (screenshots in $artifacts)"

step "95 s in: the segment of 90 s ago"
sleep $((95 - (SECONDS - began) > 0 ? 95 - (SECONDS - began) : 0))
curl -sf -o "$work/dvr2.m3u8" "$base/hls/live/cam/dvr.m3u8" || fail "dvr.m3u8 again"
checked "$work/dvr2.m3u8" "dvr at 95 s"
# The segment whose program date is nearest 90 s before the newest one's, and its byte range.
read -r range pdt age < <(/usr/bin/python3 - "$work/dvr2.m3u8" << 'PY'
import sys, datetime
segs, pdt = [], None
for line in open(sys.argv[1]):
    line = line.strip()
    if line.startswith("#EXT-X-PROGRAM-DATE-TIME:"):
        pdt = datetime.datetime.fromisoformat(line.split(":", 1)[1].replace("Z", "+00:00"))
    elif line.startswith("#EXT-X-BYTERANGE:"):
        length, offset = line.split(":", 1)[1].split("@")
        segs.append((pdt, int(offset), int(length)))
newest = segs[-1][0]
best = min(segs, key=lambda s: abs((newest - s[0]).total_seconds() - 90))
print(f"{best[1]}-{best[1] + best[2] - 1} {best[0].isoformat()} {(newest - best[0]).total_seconds():.1f}")
PY
)
awk -v a="$age" 'BEGIN { exit !(a >= 85 && a <= 95) }' || fail "no segment near 90 s ago: the nearest is $age s before the newest"
code=$(curl -s -r "$range" -o "$work/ago.ts" -w '%{http_code}' "$base/hls/live/cam/dvr.ts")
[[ $code == 206 ]] || fail "the segment of 90 s ago ($range): HTTP $code"
n=$(frames "$work/ago.ts")
errors=$(grep -v 'non monotonically increasing dts' "$work/ago.ts.errors" | grep -v '^$' || true)
[[ -z $errors && $n -gt 0 ]] || fail "the segment of 90 s ago does not decode: $n frames; $(head -n 3 <<< "$errors")"
[[ $(ffprobe -v error -select_streams v:0 -show_entries frame=key_frame -of csv=p=0 "$work/ago.ts" | head -n 1 | tr -d ',') == 1 ]] ||
  fail "the segment of 90 s ago does not start at a keyframe"
timeout 60 ffmpeg -v error -live_start_index 0 -i "$base/hls/live/cam/dvr.m3u8" -t 4 -f null - 2> "$work/ffmpeg.err" ||
  fail "ffmpeg cannot play dvr.m3u8: $(tail -n 3 "$work/ffmpeg.err")"
curl -sf -o "$work/skip.m3u8" "$base/hls/live/cam/dvr.m3u8?_HLS_skip=YES" || fail "the delta update"
grep -q '^#EXT-X-SKIP:SKIPPED-SEGMENTS=[1-9]' "$work/skip.m3u8" || fail "no segment skipped in a delta update of 95 s: $(head -n 12 "$work/skip.m3u8")"
checked "$work/skip.m3u8" "delta update"
pass "bytes $range ($pdt, $age s before the newest) decode $n frames from a keyframe; ffmpeg plays the playlist; the delta update skips $(sed -n 's/^#EXT-X-SKIP:SKIPPED-SEGMENTS=//p' "$work/skip.m3u8") segments"

step "starts outside the window are refused; the channel goes on"
for start in -10m 2099-01-01T00:00:00Z; do
  if "$build/client/vod-client" get rdma://127.0.0.1/live/cam "${C[@]}" --start "$start" --duration 2 -o "$work/bad.ts" 2> "$work/bad.log"; then
    fail "--start $start was accepted"
  fi
  grep -q 'the window holds' "$work/bad.log" || fail "--start $start: $(cat "$work/bad.log")"
done
"$build/client/vod-client" get rdma://127.0.0.1/live/cam "${C[@]}" --start -5 --duration 2 -o "$work/after.ts" 2> "$work/after.log" ||
  fail "the window stopped serving: $(tail -n 2 "$work/after.log")"
pass "refused: $(head -n 1 "$work/bad.log")"
