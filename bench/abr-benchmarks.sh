#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# abr-benchmarks.sh MODE TITLE_DIR OUT_DIR: adaptive bitrate over one-sided Reads on a shaped link,
# in the Soft-RoCE guest with siw (tests/rdma/shaped_link.sh: a namespace, a veth pair, siw at each
# end, tbf on the server's). TITLE_DIR holds the title Shaped/ (tests/media/make-shaped-title.sh:
# 360p at 4 Mbit/s, 270p at 1.2, 180p at 0.4). In the same run, on the same link:
#   - ib_read_bw across the link, shaped (the link's figure) and not;
#   - N players of the title (vod-client bench, paced as players) adaptive, then N pinned to the top
#     rendition, each run on a link of 40 Mbit/s that drops to the shaped rate after a while (so that
#     adaptive players climb, then step down): chunks (segments) in time, switches per minute,
#     media time per rendition;
#   - the first bytes after a switch decision against those after any other segment's decision,
#     with ib_read_lat across the link beside them (one Read round trip);
#   - vod-server's CPU (/proc/PID/schedstat, nanoseconds) over the adaptive run, per switch: with the
#     renditions pinned in memory, and with them in the segment cache (--cache-size smaller than the
#     title, so segments fault in and out).
# Appends to OUT_DIR/results.tsv (section abr); bench/abr-report.sh makes the section.
set -euo pipefail
mode=$1 titles=$(realpath "$2") out=$3
: "${VOD_IWARP_ADDR:?run through tests/softroce/softroce-run --device both (siw)}"
build=${VOD_BUILD_DIR:-build}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../tests/free_port.sh"
source "$here/../tests/rdma/shaped_link.sh"
case $mode in
  full) players=4 rate=8mbit secs=36 drop_after=12 ;;
  quick) players=2 rate=4mbit secs=36 drop_after=12 ;;
  smoke) players=2 rate=4mbit secs=10 drop_after=4 ;;
  *) echo "mode must be full, quick or smoke" >&2; exit 2 ;;
esac
results=$out/results.tsv
mkdir -p "$out"
record() { printf 'abr\t%s\t%s\n' "$1" "$2" >> "$results"; echo "  abr $1 = $2"; }
bench_field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< "$2"; }
work=$(mktemp -d)
server=
trap 'kill $server 2>/dev/null && wait $server; shaped_link_down; rm -rf "$work"' EXIT  # the server first: a siw device is deleted once unused
shaped_link_up "vbab$$" || exit 1
cpu_ns() { awk '{ print $1 }' "/proc/$1/schedstat"; }
start_server() {  # start_server LOG [ARGS...]
  local log=$1; shift
  port=$(free_port)
  "$build/server/vod-server" --media-dir "$titles" --bind "$link_addr" --port "$port" "$@" 2> "$log" &
  server=$!
  for _ in $(seq 600); do grep -q "title 'Shaped': 3 renditions" "$log" && return 0; kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
  cat "$log" >&2; echo "vod-server did not list the title" >&2; exit 1
}
stop_server() { kill "$server"; wait "$server" 2>/dev/null || true; server=; }
# players NAME [bench options...]: N players for $secs, the link at 40 Mbit/s for the first
# $drop_after s and then at $rate; the BENCH line, and the server's CPU over the run in nanoseconds
# as cpu_ns=.
players() {
  local name=$1 before line pid; shift
  shape 40mbit
  before=$(cpu_ns "$server")
  in_ns "$build/client/vod-client" bench "rdma://$link_addr:$port/Shaped" --clients "$players" --duration "$secs" "$@" \
    > "$work/$name.out" 2> "$work/$name.err" &
  pid=$!
  sleep "$drop_after"
  shape "$rate"
  wait "$pid" || { cat "$work/$name.err" >&2; exit 1; }
  line=$(grep '^BENCH title' "$work/$name.out")
  echo "$line cpu_ns=$(( $(cpu_ns "$server") - before ))"
  sed 's/^/    /' "$work/$name.out" >&2
}

echo "== 17. adaptive bitrate: $players players on a link shaped to $rate (siw across a namespace)"
record players "$players"
record link_rate "$rate"
record seconds "$secs"
record drop_after "$drop_after"
record link_unshaped_mbps "$(link_read_mbps)"
shape "$rate"
record link_shaped_mbps "$(link_read_mbps)"
record read_rtt_us "$(link_read_lat_us)"

start_server "$work/pinned.log"
for run in adaptive top; do
  opts=(); [[ $run == top ]] && opts=(--rendition 360p)
  line=$(players "$run" "${opts[@]}")
  for k in in_time_pct segments late switches switches_per_min switch_first_byte_p50_us switch_first_byte_max_us first_byte_p50_us \
    seconds_360p seconds_270p seconds_180p cpu_ns; do
    record "${run}_$k" "$(bench_field "$k" "$line")"
  done
done
stop_server
# The same adaptive run with the renditions in a segment cache smaller than the title: its segments
# fault in (the server's CPU) whichever rendition a player reads.
start_server "$work/cached.log" --cache-size 16M --segment-size 1M
line=$(players cached)
for k in in_time_pct segments late switches switches_per_min seconds_360p seconds_270p seconds_180p cpu_ns; do
  record "cached_$k" "$(bench_field "$k" "$line")"
done
stop_server
echo "results in $results"
