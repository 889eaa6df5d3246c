#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# vod-proxy's live fan-out, natively on loopback: vod-server --no-rdma sends a live channel (a
# 2 Mbit/s H.264 TS file, looped) to a multicast group, and vod-proxy --transport udp --udp-group
# serves it to HTTP viewers. (Over RDMA, tests/rdma/vod_proxy_test.sh checks the same in the
# Soft-RoCE guest, where the server's log shows the one viewer connection.)
#   - 4 viewers and a slow one at once: one channel session in the proxy (/metrics), 5 viewers
#   - every fast viewer gets the whole stream: it starts with a keyframe, decodes at the full frame
#     rate, and is whole TS packets
#   - the slow viewer (a 4 KiB receive buffer, reading 20 kB/s of a 250 kB/s channel) falls out of
#     --live-buffer-kib 256 and jumps to the newest keyframe: logged at info with the bytes
#     skipped, counted in /metrics; what it received is still whole TS packets and decodes
#   - the session closes 2 s after the last viewer left; the next viewer opens a new one
#   - HEAD opens nothing; without --udp-group a /live/ request is a 503 that says so
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../free_port.sh"
build=${VOD_BUILD_DIR:?CTest sets VOD_BUILD_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
  local rc=$?
  kill "${pids[@]}" 2>/dev/null || true
  if [[ $rc -ne 0 && $rc -ne 77 ]]; then
    for log in server proxy; do [[ -f $work/$log.log ]] && { echo "--- $log log (last 20 lines)"; grep -v 'INFO access' "$work/$log.log" | tail -n 20; }; done
  fi
  rm -rf "$work"
}
trap cleanup EXIT
step() { echo "--- $*"; }
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
metric() { curl -s "http://127.0.0.1:$http/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
whole_packets() {  # FILE: cut to whole packets (curl stops mid-packet); fails unless every packet starts with the sync byte
  /usr/bin/python3 - "$1" <<'EOF'
import sys
path = sys.argv[1]
data = open(path, "rb").read()
data = data[: len(data) // 188 * 188]
bad = [i for i in range(0, len(data), 188) if data[i] != 0x47]
open(path, "wb").write(data)
if bad:
    sys.exit(f"{path}: no sync byte at {len(bad)} packet boundaries, the first at byte {bad[0]}")
EOF
}
frames() { ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$1" 2> /dev/null | sed -n 1p; }
first_is_key() { [[ $(ffprobe -v error -select_streams v:0 -show_entries frame=key_frame -of csv=p=0 -read_intervals '%+#1' "$1" 2> /dev/null | sed -n 1p | tr -d ,) == 1 ]]; }

ffmpeg -v error -f lavfi -i "testsrc2=size=320x240:rate=25,noise=alls=40:allf=t" -t 8 -c:v libx264 -preset ultrafast -g 25 -bf 0 \
  -b:v 2M -minrate 2M -maxrate 2M -bufsize 500k -pix_fmt yuv420p -f mpegts "$work/cam.ts"
udp=$(free_port) http=$(free_port)
group=239.255.$((RANDOM % 200 + 1)).$((RANDOM % 200 + 1)):$(free_port)
"$build/server/vod-server" --no-rdma --udp-port "$udp" --bind 127.0.0.1 --live "cam=file:$work/cam.ts" \
  --live-multicast "$group" --live-multicast-interface 127.0.0.1 2> "$work/server.log" &
pids+=($!)
for _ in $(seq 300); do grep -q 'listening on' "$work/server.log" && break; sleep 0.1; done
grep -q 'listening on' "$work/server.log" || fail "vod-server did not start"
"$build/proxy/vod-proxy" --server rdma://127.0.0.1 --transport udp --udp-port "$udp" --udp-group "$group" --udp-interface 127.0.0.1 \
  --listen "127.0.0.1:$http" --live-buffer-kib 256 2> "$work/proxy.log" &
proxy_pid=$!
pids+=($proxy_pid)
for _ in $(seq 100); do grep -q 'listening on' "$work/proxy.log" && break; sleep 0.1; done
base=http://127.0.0.1:$http

step "HEAD opens no session"
code=$(curl -s -I -o /dev/null -w '%{http_code}' "$base/live/cam")
[[ $code == 200 && $(metric vod_proxy_live_sessions_opened_total) == 0 ]] || fail "HEAD /live/cam: $code, sessions $(metric vod_proxy_live_sessions_opened_total)"
# A host without multicast on loopback cannot run the rest.
code=$(curl -s --max-time 3 -o "$work/probe" -w '%{http_code}' "$base/live/cam" || true)
if [[ $code == 503 ]]; then echo "SKIP: multicast on loopback does not work here: $(cat "$work/probe")"; exit 77; fi
pass "HEAD 200 with no session"
for _ in $(seq 40); do [[ $(metric vod_proxy_live_channels) == 0 ]] && break; sleep 0.1; done

step "4 viewers and a slow one share one session"
opened=$(metric vod_proxy_live_sessions_opened_total)
for i in 1 2 3 4; do
  curl -s -N --max-time 8 -D "$work/h$i" -o "$work/v$i.ts" "$base/live/cam" &
  pids+=($!)
done
/usr/bin/python3 "$here/hostile_http.py" slowlive "$http" /live/cam --out "$work/slow.ts" --rate 20000 --seconds 8 \
  --until-skip --max-seconds 40 > "$work/slow.out" &  # on until the proxy counts its jump, 40 s at most (the kernel's send buffer decides when)
slow=$!
sleep 4
channels=$(metric vod_proxy_live_channels) viewers=$(metric vod_proxy_live_viewers) sessions=$(metric vod_proxy_live_sessions_opened_total)
wait "$slow" || fail "the slow viewer failed: $(cat "$work/slow.out")"
sleep 0.5  # the curls end at 8 s too
[[ $channels == 1 && $viewers == 5 ]] || fail "mid-stream: $channels channel sessions and $viewers viewers, not 1 and 5"
[[ $sessions == $((opened + 1)) ]] || fail "$((sessions - opened)) sessions opened for 5 viewers of one channel"
pass "1 channel session, 5 viewers"

step "every fast viewer gets the whole stream"
for i in 1 2 3 4; do
  grep -q '^HTTP/1.1 200' "$work/h$i" && grep -qi '^Transfer-Encoding: chunked' "$work/h$i" || fail "viewer $i: $(head -n 1 "$work/h$i")"
  whole_packets "$work/v$i.ts" || fail "viewer $i's body is not whole TS packets"
  first_is_key "$work/v$i.ts" || fail "viewer $i does not start with a keyframe"
  n=$(frames "$work/v$i.ts")
  ((n >= 150)) || fail "viewer $i decoded $n frames in 8 s of a 25 fps channel"
  echo "    viewer $i: $(stat -c %s "$work/v$i.ts") bytes, $n frames"
done
pass "4 viewers: chunked, whole packets, a keyframe first, >= 150 frames each"

step "the slow viewer jumped to the newest keyframe"
grep -q "status='HTTP/1.1 200" "$work/slow.out" || fail "slow viewer: $(cat "$work/slow.out")"
grep -q "INFO live: 'cam' to 127.0.0.1:[0-9]*: the viewer fell behind the proxy's 256 KiB buffer (--live-buffer-kib); skipped [0-9]* bytes to the newest keyframe" \
  "$work/proxy.log" || fail "no log line for the slow viewer's jump"
skips=$(metric vod_proxy_live_skips_total) skipped=$(metric vod_proxy_live_skipped_bytes_total)
((skips >= 1 && skipped > 0)) || fail "skips counted: $skips, $skipped bytes"
whole_packets "$work/slow.ts" || fail "after its jumps the slow viewer's body is not whole TS packets"
first_is_key "$work/slow.ts" || fail "the slow viewer does not start with a keyframe"
n=$(frames "$work/slow.ts")
((n >= 5)) || fail "the slow viewer's bytes decode to $n frames"
pass "$skips jumps over $skipped bytes, logged and counted; its $(stat -c %s "$work/slow.ts") bytes are whole packets and decode ($n frames)"

step "the session closes 2 s after the last viewer, and the next viewer opens a new one"
for _ in $(seq 50); do [[ $(metric vod_proxy_live_channels) == 0 ]] && break; sleep 0.1; done
[[ $(metric vod_proxy_live_channels) == 0 ]] || fail "the channel session is still open 5 s after its viewers left"
grep -q "INFO live: 'cam': closed the session: no viewer for 2000 ms" "$work/proxy.log" || fail "no log line for the close"
before=$(metric vod_proxy_live_sessions_opened_total)
curl -s --max-time 2 -o "$work/again.ts" "$base/live/cam" || true
[[ $(metric vod_proxy_live_sessions_opened_total) == $((before + 1)) ]] || fail "a new viewer did not open a new session"
[[ -s $work/again.ts ]] || fail "the new session delivered nothing"
pass "closed after its viewers left; reopened for the next"
kill -0 "$proxy_pid" || fail "the proxy died"

step "without --udp-group a /live/ request is a 503 that says so"
http2=$(free_port)
"$build/proxy/vod-proxy" --server rdma://127.0.0.1 --transport udp --udp-port "$udp" --listen "127.0.0.1:$http2" 2> "$work/proxy2.log" &
pids+=($!)
for _ in $(seq 100); do grep -q 'listening on' "$work/proxy2.log" && break; sleep 0.1; done
code=$(curl -s --max-time 10 -o "$work/nogroup" -w '%{http_code}' "http://127.0.0.1:$http2/live/cam" || true)
[[ $code == 503 ]] && grep -q 'udp-group' "$work/nogroup" || fail "without --udp-group: HTTP $code, $(cat "$work/nogroup")"
pass "503: $(cat "$work/nogroup")"
