#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/compare-builds.sh BUILD_A BUILD_B [ROUNDS]: two builds of vod-server and vod-client measured
# in one Soft-RoCE session, alternately (A B A B ...), so that a change's cost is a ratio to its
# baseline on the same machine in the same run, not to a figure from another day:
#   - the cache's hit path: a 128 MiB movie served from the segment cache (--cache-size 512M), read
#     once so that every segment is resident, then `vod-client get` of it ROUNDS times (MB/s, median);
#   - a fleet's open: one member registered in a real etcd, `vod-client get` of a 64 KiB movie by an
#     rdma+etcd:// URI ROUNDS times, one process each (the member list, the placement, the connect
#     and the read: ms, median).
# Run it through the harness, e.g. for a baseline worktree built beside this one:
#   tests/softroce/softroce-run -- bench/compare-builds.sh /work/base/build build 15
# Prints one line per figure with both medians and B/A.
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: bench/compare-builds.sh BUILD_A BUILD_B [ROUNDS]" >&2; exit 2; }
a=$(realpath "$1") b=$(realpath "$2") rounds=${3:-15}
addr=${VOD_RDMA_ADDR:?run through tests/softroce/softroce-run}
for d in "$a" "$b"; do
  [[ -x $d/server/vod-server && -x $d/client/vod-client ]] || { echo "$d has no server/vod-server and client/vod-client" >&2; exit 2; }
done
command -v etcd > /dev/null || { echo "etcd is not installed (scripts/install-deps.sh)" >&2; exit 2; }
work=$(mktemp -d /dev/shm/compare-builds.XXXXXX)
pids=()
trap 'kill ${pids[*]} 2> /dev/null || true; rm -rf "$work"' EXIT
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
now_ns() { date +%s%N; }

mkdir -p "$work/media"
head -c $((128 << 20)) /dev/urandom > "$work/media/movie.bin"
head -c $((64 << 10)) /dev/urandom > "$work/media/small.bin"
etcd_port=$((30000 + RANDOM % 10000)) peer_port=$((40000 + RANDOM % 10000))
etcd --name cmp --data-dir "$work/etcd" --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
  --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
  --initial-cluster "cmp=http://127.0.0.1:$peer_port" > "$work/etcd.log" 2>&1 &
pids+=($!)
for _ in $(seq 300); do ETCDCTL_API=3 etcdctl --endpoints "127.0.0.1:$etcd_port" endpoint health > /dev/null 2>&1 && break; sleep 0.2; done

declare -A port
start() {  # start A|B BUILD: its vod-server with a cache, in the fleet under /cmp-A or /cmp-B
  local which=$1 build=$2
  port[$which]=$((20000 + RANDOM % 10000))
  "$build/server/vod-server" --media-dir "$work/media" --bind "$addr" --port "${port[$which]}" --cache-size 512M --state-dir "$work/state-$which" \
    --cluster "etcd://127.0.0.1:$etcd_port/cmp-$which" 2> "$work/server-$which.log" &
  pids+=($!)
  for _ in $(seq 600); do grep -q 'registered in' "$work/server-$which.log" && return 0; sleep 0.1; done
  echo "the $which server did not register: $(tail -n 3 "$work/server-$which.log")" >&2
  exit 1
}
start A "$a"
start B "$b"
declare -A client=([A]=$a/client/vod-client [B]=$b/client/vod-client)
for w in A B; do "${client[$w]}" get "rdma://$addr:${port[$w]}/movie.bin" -o /dev/null --quiet; done  # every segment resident

echo "compare-builds: A=$a B=$b, $rounds rounds each, alternately"
for ((i = 0; i < rounds; ++i)); do
  for w in A B; do
    t0=$(now_ns)
    "${client[$w]}" get "rdma://$addr:${port[$w]}/movie.bin" -o /dev/null --quiet
    t1=$(now_ns)
    echo "$(( (128 << 20) / ((t1 - t0) / 1000) ))" >> "$work/hit-$w"  # MB/s (bytes per µs), the process's start included
    t0=$(now_ns)
    "${client[$w]}" get "rdma+etcd://127.0.0.1:$etcd_port/small.bin?prefix=/cmp-$w" -o /dev/null --quiet
    t1=$(now_ns)
    echo "$(( (t1 - t0) / 1000000 ))" >> "$work/open-$w"  # ms
  done
  echo "  round $((i + 1))/$rounds"
done
for figure in "hit:cache hit path, get of a resident 128 MiB movie (MB/s)" "open:fleet open, a 64 KiB get by rdma+etcd:// (ms)"; do
  key=${figure%%:*}
  ma=$(median < "$work/$key-A") mb=$(median < "$work/$key-B")
  printf '%s: A %s, B %s, B/A %.3f\n' "${figure#*:}" "$ma" "$mb" "$(echo "$mb / $ma" | bc -l)"
done
