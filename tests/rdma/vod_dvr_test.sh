#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Live DVR over real rdma-core (vod-server --live-dvr): channels with a 3-minute window on disk,
# read one-sided through an 8 MiB segment cache; a numbered pattern channel (ts_tool pattern) shows
# every delivered packet's place in the source, and a looped movie shows what decoders see.
#  - A viewer paused for 60 s resumes with no skip: every packet in sequence, none moved forward
#    (it had reached the live ring, fell out of it while paused, and went back to the window).
#  - Meanwhile, on a second server with a 10 s window, a viewer at the window's oldest edge, paused
#    15 s, is moved forward and told: a reported discontinuity, after which the packets go on in
#    sequence; never a byte of an older lap.
#  - After 2 minutes a viewer starting 90 s behind live decodes cleanly from a keyframe near that
#    point, and the server's resident memory grew by far less than what its windows hold.
#  - Meanwhile rdmasrc (gst_dvr_seek.cpp) plays the looped movie's channel: its seeking query
#    answers the window's range, a seek 40 s back decodes from a keyframe, a seek before the window
#    is refused while the channel goes on, and dvr-start=-40 starts that far behind.
#  - Starts far in the future or the past are refused with the window's range; the channel goes on.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/vod_test_lib.sh"
ts_tool=$build/tests/rdma/ts_tool
allowed() { sed -n 's/.*live: discontinuity at output byte \([0-9]*\).*/--allow-at \1/p' "$1" | tr '\n' ' '; }
stat_of() { sed -n "s/^LIVE .*\b$2=\([0-9]*\).*/\1/p" "$1"; }
rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
metric() { curl -s "http://127.0.0.1:$metrics/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }

# pattern_server PORT LOG RATE [vod-server options...]: a server whose channel "pattern" is ts_tool's
# numbered packets at RATE Mbit/s on its standard input (start_server's background job would get
# /dev/null there); sets $pid_of_server.
pattern_server() {
  local p=$1 log=$2 rate=$3
  shift 3
  "$server_bin" --bind "$addr" --port "$p" --live "pattern=-" --live-bitrate "$rate" --log-level info "$@" \
    < <(exec "$ts_tool" pattern --rate "$rate" --gop $((250 * rate))) 2> "$log" &
  pid_of_server=$!
  for _ in $(seq 600); do grep -q 'listening on' "$log" && return 0; sleep 0.1; done
  fail "vod-server did not start: $(tail -n 3 "$log")"
}

media=$work/media
mkdir -p "$media"
metrics=$(free_port)
step "a server with a 3-minute window per channel: a looped 60 s movie, and a numbered pattern at 1 Mbit/s"
port=$(free_port)
server_log=$work/server-a.log
pattern_server "$port" "$server_log" 1 --media-dir "$media" --live "cam=file:$test_media/test-480p-60s.ts" --live-dvr 3m \
  --live-dvr-dir "$work/dvr" --segment-size 1M --live-dvr-cache 8M --metrics-port "$metrics"
server_pid=$pid_of_server
began=$SECONDS
grep -q 'pattern: a DVR window of 3m' "$server_log" || fail "no window for the pattern channel: $(grep -i dvr "$server_log")"
sleep 15
rss_start=$(rss_kib "$server_pid")
pass "windows of $(sed -n 's/.*cam: a DVR window of 3m in \([0-9]*\) chunks.*/\1/p' "$server_log") and $(sed -n 's/.*pattern: a DVR window of 3m in \([0-9]*\) chunks.*/\1/p' "$server_log") chunks of 1 MiB; the server holds $rss_start KiB"

step "a viewer 20 s behind live, paused for 60 s"
sleep $((25 - (SECONDS - began) > 0 ? 25 - (SECONDS - began) : 0))
"$client_bin" get "$(uri live/pattern)" --start -20 --duration 100 -o "$work/v1.ts" --log-level info 2> "$work/v1.log" &
v1=$!
cleanup_hooks+=('kill -CONT "$v1" 2> /dev/null; kill -KILL "$v1" 2> /dev/null')
for _ in $(seq 300); do grep -q 'caught up with the window' "$work/v1.log" && break; sleep 0.1; done
grep -q 'caught up with the window' "$work/v1.log" || fail "the viewer did not reach the live ring in 30 s: $(tail -n 3 "$work/v1.log")"
sleep 2
kill -STOP "$v1" 2> /dev/null || fail "the viewer ended before its pause: $(tail -n 5 "$work/v1.log")"
paused_at=$SECONDS
pass "it read 20 s from the window, reached the live ring, and is stopped"

step "meanwhile, a second server with a 10 s window: a viewer at its oldest edge, paused 15 s"
port_a=$port log_a=$server_log pid_a=$server_pid
port_b=$(free_port)
log_b=$work/server-b.log
pattern_server "$port_b" "$log_b" 2 --live-dvr 10s --live-dvr-dir "$work/dvr-b" --segment-size 256K --live-dvr-cache 4M
pid_b=$pid_of_server
cleanup_hooks+=('kill -KILL "$pid_b" 2> /dev/null')
sleep 12  # the window is full: its oldest edge moves
"$client_bin" get "rdma://$addr:$port_b/live/pattern" --start -8 --duration 30 -o "$work/v3.ts" --log-level info 2> "$work/v3.log" &
v3=$!
cleanup_hooks+=('kill -CONT "$v3" 2> /dev/null; kill -KILL "$v3" 2> /dev/null')
for _ in $(seq 100); do grep -q 'starting .* behind live' "$work/v3.log" && break; sleep 0.1; done
sleep 0.5
kill -STOP "$v3" 2> /dev/null || fail "the edge viewer ended before its pause: $(tail -n 5 "$work/v3.log")"
sleep 15
kill -CONT "$v3"
wait "$v3" || fail "the edge viewer failed: $(tail -n 12 "$work/v3.log")"
grep ^LIVE "$work/v3.log"
moved=$(stat_of "$work/v3.log" moved_forward)
((${moved:-0} >= 1)) || fail "the oldest edge passed a viewer paused 15 s in a 10 s window, and it was not moved forward"
grep -q "the window's oldest edge passed this viewer" "$work/v3.log" || fail "the viewer was not told"
"$ts_tool" check "$work/v3.ts" --pattern $(allowed "$work/v3.log") | tee "$work/v3-check.txt"
kill -TERM "$pid_b"
wait "$pid_b" || true
pass "moved forward $moved times and told; $(stat_of "$work/v3.log" bytes) bytes, every pattern packet in sequence or past a reported discontinuity, none older"

step "meanwhile, GStreamer: rdmasrc's live source seeks in the window"
gst_ready
"$build/tests/rdma/gst_dvr_seek" "rdma://$addr:$port_a/live/cam" 40 > "$work/gst.log" 2>&1 ||
  fail "rdmasrc in the window: $(tail -n 5 "$work/gst.log")"
grep -E '^(at live|seeking query|seek to|a seek|dvr-start|warning)' "$work/gst.log"
pass "the seeking query answers the window's range; a seek 40 s back and dvr-start=-40 decode from a keyframe; a seek before the window is refused"

step "the paused viewer resumes after 60 s"
sleep $((60 - (SECONDS - paused_at) > 0 ? 60 - (SECONDS - paused_at) : 0))
kill -CONT "$v1"
wait "$v1" || fail "the paused viewer failed: $(tail -n 12 "$work/v1.log")"
grep ^LIVE "$work/v1.log"
[[ $(stat_of "$work/v1.log" moved_forward) == 0 ]] || fail "the paused viewer was moved forward"
[[ $(allowed "$work/v1.log") == "--allow-at 0 " ]] || fail "discontinuities besides the start: $(allowed "$work/v1.log")"
"$ts_tool" check "$work/v1.ts" --pattern --allow-at 0 | tee "$work/v1-check.txt"
((${stat_of_window:=$(stat_of "$work/v1.log" to_window)} >= 1)) || fail "the viewer never went back from the ring to the window"
pass "no skip: $(stat_of "$work/v1.log" bytes) bytes in sequence; $(stat_of "$work/v1.log" to_live) hand-overs to the ring, $stat_of_window back to the window"

step "after 2 minutes: a viewer 90 s behind live"
port=$port_a server_log=$log_a server_pid=$pid_a
sleep $((122 - (SECONDS - began) > 0 ? 122 - (SECONDS - began) : 0))
"$client_bin" get "$(uri live/cam)" --start -90 --duration 8 -o "$work/v2.ts" --log-level info 2> "$work/v2.log" ||
  fail "the viewer 90 s behind failed: $(tail -n 3 "$work/v2.log")"
behind=$(sed -n 's/.*: starting \([0-9.]*\) s behind live.*/\1/p' "$work/v2.log")
awk -v b="$behind" 'BEGIN { exit !(b >= 89 && b <= 100) }' || fail "it started $behind s behind live, not at a keyframe near 90 s"
ffprobe -v error -select_streams v:0 -show_entries frame=key_frame -of csv=p=0 "$work/v2.ts" > "$work/v2.frames" 2> "$work/v2.errors" || true
errors=$(grep -v 'non monotonically increasing dts' "$work/v2.errors" | grep -v '^$' || true)
[[ -z $errors ]] || fail "the recording from 90 s ago does not decode cleanly: $(head -n 3 <<< "$errors")"
[[ $(head -n 1 "$work/v2.frames" | tr -d ',') == 1 ]] || fail "its first frame is not a keyframe"
frames=$(grep -c . "$work/v2.frames")
((frames >= 150)) || fail "only $frames frames in 8 s of a 25 fps movie"
pass "it started $behind s behind live at a keyframe and decodes $frames frames cleanly"

step "the server's memory does not grow with the window"
rss_now=$(rss_kib "$server_pid")
held=$(($(metric 'vod_server_live_bytes_total{channel="cam"}') + $(metric 'vod_server_live_bytes_total{channel="pattern"}')))
grown=$((rss_now - rss_start))
echo "resident: $rss_start KiB then $rss_now KiB; the windows hold $((held >> 10)) KiB written since start"
((grown * 1024 < held / 3)) || fail "the server grew by $grown KiB while its windows took $((held >> 10)) KiB"
((grown < 24 * 1024)) || fail "the server grew by $grown KiB: more than its 8 MiB cache and rings"
[[ $(metric 'vod_server_live_dvr_write_errors_total{channel="cam"}') == 0 ]] ||
  fail "window write errors counted, or not exported: $(curl -s "http://127.0.0.1:$metrics/metrics" | grep dvr_write)"
pass "grew $grown KiB while $((held >> 20)) MiB went into the windows"

step "starts outside the window are refused with its range; the channel goes on"
for start in 2099-01-01T00:00:00Z -3h 2000-01-01T00:00:00Z; do
  if "$client_bin" get "$(uri live/cam)" --start "$start" --duration 2 -o "$work/bad.ts" 2> "$work/bad.log"; then fail "--start $start was accepted"; fi
  grep -q 'the window holds' "$work/bad.log" || fail "--start $start: $(cat "$work/bad.log")"
done
"$client_bin" get "$(uri live/cam)" --duration 2 -o "$work/after.ts" 2> "$work/after.log" || fail "the channel stopped: $(tail -n 2 "$work/after.log")"
pass "refused: $(head -n 1 "$work/bad.log"); the live edge still plays"
stop_server
