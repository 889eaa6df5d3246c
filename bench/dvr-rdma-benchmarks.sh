#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# dvr-rdma-benchmarks.sh MODE TS_FILE OUT_DIR: the DVR window's goals over RDMA, in the Soft-RoCE
# session (scripts/bench.sh runs it there, after sections 1-17). One vod-server serves TS_FILE as a
# movie of its segment cache and loops it as live channel "cam" with a 3-minute window
# (`--live-dvr 3m`, the window in the same cache). Once the window holds more than 60 s:
#   - the server's CPU per viewer: N viewers at live (`vod-client get live/cam --duration S`, paced
#     by the channel) against N viewers 60 s behind (`--start -60 --duration S`, read from the window
#     as fast as they take it), each less the channel's own CPU over the same wall time (measured
#     alone first), per viewer and second of stream;
#   - a seek back 60 s (`get --start -60 --duration 1`: connect, the window index, the keyframe, 1 s
#     of stream) against a seek into the cached movie (`get --range` of 1 s of bytes at its middle,
#     read once before): wall time p50 of RUNS runs each, and the server's CPU over them.
# Figures, in OUT_DIR/dvr/rdma.txt:
#   viewer_cpu live|dvr VIEWERS STREAM_SECONDS WALL_SECONDS CPU_S IDLE_CPU_PER_S
#   seek_ms dvr|movie P50_MS SERVER_CPU_S RUNS
set -euo pipefail
mode=$1 ts=$(realpath "$2") out=$3/dvr
addr=${VOD_RDMA_ADDR:?run through tests/softroce/softroce-run}
build=${VOD_BUILD_DIR:-build}
case $mode in
  full) viewers=8 secs=20 runs=9 fill=70 ;;
  quick) viewers=4 secs=15 runs=7 fill=70 ;;
  smoke) viewers=2 secs=5 runs=3 fill=70 ;;
  *) echo "mode must be full, quick or smoke" >&2; exit 2 ;;
esac
mkdir -p "$out"
work=$(mktemp -d)
server=
trap '[[ -n $server ]] && kill -KILL "$server" 2> /dev/null; rm -rf "$work"' EXIT
hz=$(getconf CLK_TCK)
ticks() { awk '{ print $14 + $15 }' "/proc/$server/stat"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
mkdir -p "$work/media"
cp "$ts" "$work/media/movie.ts"
"$build/server/vod-server" --bind "$addr" --port 7490 --media-dir "$work/media" --state-dir "$work/state" --cache-size 128M \
  --segment-size 1M --live "cam=file:$work/media/movie.ts" --live-dvr 3m --log-level info 2> "$work/server.log" &
server=$!
for _ in $(seq 300); do grep -q 'listening on' "$work/server.log" && break; sleep 0.1; done
grep -q 'cam: a DVR window' "$work/server.log" || { echo "no DVR window: $(tail -n 3 "$work/server.log")" >&2; exit 1; }
echo "== dvr: filling the window for $fill s"
sleep "$fill"
uri=rdma://$addr:7490
: > "$out/rdma.txt"

t0=$(ticks); sleep "$secs"; t1=$(ticks)
idle=$(awk -v d=$((t1 - t0)) -v hz="$hz" -v s="$secs" 'BEGIN { printf "%.4f", d / hz / s }')
viewers_cpu() {  # viewers_cpu live|dvr [vod-client get options]: N at once, the server's CPU over them
  local kind=$1 pids=() t0 t1 w0 w1
  shift
  t0=$(ticks) w0=$(now_ms)
  for i in $(seq "$viewers"); do
    "$build/client/vod-client" get "$uri/live/cam" --duration "$secs" -o /dev/null "$@" 2> "$work/$kind-$i.log" &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { echo "a $kind viewer failed: $(tail -n 3 "$work/$kind-$((i + 1)).log")" >&2; exit 1; }
  done
  t1=$(ticks) w1=$(now_ms)
  echo "viewer_cpu $kind $viewers $secs $(awk -v w=$((w1 - w0)) 'BEGIN { printf "%.2f", w / 1000 }') \
$(awk -v d=$((t1 - t0)) -v hz="$hz" 'BEGIN { printf "%.2f", d / hz }') $idle" | tee -a "$out/rdma.txt"
}
echo "== dvr: $viewers viewers at live, then $viewers viewers 60 s behind, $secs s of stream each"
viewers_cpu live
viewers_cpu dvr --start -60

echo "== dvr: a seek back 60 s against a seek into the cached movie, $runs runs each"
size=$(stat -c %s "$ts")
dur=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$ts")
second=$(awk -v s="$size" -v d="$dur" 'BEGIN { printf "%d", s / d }')
range="$((size / 2))-$((size / 2 + second - 1))"
"$build/client/vod-client" get "$uri/movie.ts" --range "$range" -o /dev/null 2> /dev/null  # into the cache
seeks() {  # seeks dvr|movie COMMAND...: the p50 of RUNS wall times (ms), and the server's CPU over them
  local kind=$1 t0 t1 w0 times=()
  shift
  t0=$(ticks)
  for _ in $(seq "$runs"); do
    w0=$(now_ms)
    "$@" -o /dev/null 2> "$work/seek.log" || { echo "a $kind seek failed: $(tail -n 3 "$work/seek.log")" >&2; exit 1; }
    times+=($(($(now_ms) - w0)))
  done
  t1=$(ticks)
  echo "seek_ms $kind $(printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }') \
$(awk -v d=$((t1 - t0)) -v hz="$hz" 'BEGIN { printf "%.2f", d / hz }') $runs" | tee -a "$out/rdma.txt"
}
seeks dvr "$build/client/vod-client" get "$uri/live/cam" --start -60 --duration 1
seeks movie "$build/client/vod-client" get "$uri/movie.ts" --range "$range"
kill -TERM "$server"
wait "$server" 2> /dev/null || true
server=
