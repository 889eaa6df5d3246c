#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cache-benchmarks.sh MODE LIBRARY_DIR VIEWERS OUT_DIR: the segment cache against nginx on one library
# of movies (docs/segment-cache.md), in the session guest-benchmarks.sh runs in. LIBRARY_DIR is on the
# guest's own disk (VOD_DISK_DIR, softroce-run --disk: "cold in the guest") or anywhere else (then
# no figure is cold, and the report says so).
#   limit    the disk's own sequential read bandwidth (dd with O_DIRECT, page cache dropped)
#   vod      vod-server --cache-size (a quarter of the library), its indexes built first into its
#            state directory; page cache dropped; then: startup of movies nobody read (cold) and of
#            the same movies again (resident); a cold movie's get; VIEWERS viewers choosing movies
#            by Zipf's law (exponent 1) and jumping every 10 s: chunks in time, hit ratio, disk
#            bytes read per byte served, server CPU
#   nginx    the same library from the same disk, page cache dropped, in a cgroup whose memory.max
#            is the cache's size (its page cache is charged there): the same runs with http-bench
# Appends to OUT_DIR/results.tsv (section, key, value).
set -euo pipefail
mode=$1 lib=$(realpath "$2") viewers=$3 out=$4
addr=${VOD_RDMA_ADDR:?run through tests/softroce/softroce-run}
build=${VOD_BUILD_DIR:-build}
results=$out/results.tsv
record() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$results"; echo "  $1 $2 = $3"; }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< "$2"; }
case $mode in
  full) run_secs=120 starts=10 ;;
  quick) run_secs=60 starts=8 ;;
  smoke) run_secs=3 starts=2 ;;
  *) echo "mode must be full, quick or smoke" >&2; exit 2 ;;
esac
work=$(mktemp -d)
pids=()
cgroup=
trap 'kill ${pids[*]} 2>/dev/null || true; [[ -n $cgroup ]] && rmdir "$cgroup" 2>/dev/null; rm -rf "$work"' EXIT
hz=$(getconf CLK_TCK)
ticks() { local t=0 p; for p in "$@"; do t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat"))); done; echo "$t"; }
drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches; }
# Bytes read from the library's block device so far (0 when it is not on one: 9p, tmpfs).
device=$(lsblk -no PKNAME "$(findmnt -no SOURCE --target "$lib")" 2>/dev/null || true)
[[ -z $device ]] && device=$(basename "$(findmnt -no SOURCE --target "$lib")")
disk_bytes() { [[ -r /sys/block/$device/stat ]] && awk '{ printf "%.0f\n", $3 * 512 }' "/sys/block/$device/stat" || echo 0; }

mapfile -t movies < <(cd "$lib" && ls | grep -E '\.(ts|mp4|mkv)$' | sort)
(( ${#movies[@]} >= starts + 2 )) || { echo "cache-benchmarks: $lib holds ${#movies[@]} movies, too few" >&2; exit 2; }
library=$(cd "$lib" && du -bc "${movies[@]}" | tail -1 | cut -f1)
segment=$((4 << 20)); [[ $mode == smoke ]] && segment=$((1 << 20))
cache=$(( library / 4 / segment * segment ))
rate=$(ffprobe -v error -show_entries format=bit_rate -of csv=p=0 "$lib/${movies[0]}" | awk '{ printf "%.3f", $1 / 1e6 }')
cold=no; [[ -n ${VOD_DISK_DIR:-} && $lib == "$VOD_DISK_DIR"* ]] && cold=yes
record cache_setup movies "${#movies[@]}"
record cache_setup library_mib "$((library >> 20))"
record cache_setup cache_mib "$((cache >> 20))"
record cache_setup segment_kib "$((segment >> 10))"
record cache_setup viewers "$viewers"
record cache_setup movie_mbps "$rate"
record cache_setup run_secs "$run_secs"
record cache_setup starts "$starts"
record cache_setup cold_disk "$cold"
record cache_setup device "${device:-none}"

echo "== 11. the segment cache: ${#movies[@]} movies ($((library >> 20)) MiB), cache $((cache >> 20)) MiB, $viewers viewers by Zipf's law"
drop_caches
# dd of the library's largest files with O_DIRECT (where the file system refuses it, as tmpfs does: 0).
t0=$(date +%s.%N) read_ok=1
for m in "${movies[@]: -3}"; do dd if="$lib/$m" of=/dev/null bs=4M iflag=direct status=none 2> /dev/null || read_ok=0; done
secs=$(echo "$(date +%s.%N) - $t0" | bc)
record cache_limit disk_mbytes_per_s "$(cd "$lib" && du -bc "${movies[@]: -3}" | tail -1 | awk -v s="$secs" -v ok="$read_ok" '{ printf "%.1f", (ok && s > 0 ? $1 / s / 1e6 : 0) }')"

# ---------------------------------------------------------------- vod-server
port=7520 metrics=9520
# One movie pinned whole in memory (beside the cache), as without a cache: its startup is the
# in-memory path's, in the same conditions (a fresh process per start, as every start here).
pinned=${movies[-$((starts + 2))]}
server_args=(--media-dir "$lib" --bind "$addr" --port "$port" --cache-size "$cache" --segment-size "$segment" --state-dir "$work/state"
  --max-clients 5000 --metrics-port "$metrics" --metrics-bind "$addr" --pin "$pinned")
start_server() {
  "$build/server/vod-server" "${server_args[@]}" 2> "$work/server.log" &
  server=$!; pids+=("$server")
  for _ in $(seq 600); do grep -q 'listening on' "$work/server.log" && return; sleep 0.1; done
  echo "cache-benchmarks: vod-server did not start: $(tail -3 "$work/server.log")" >&2; exit 1
}
metric() { curl -s "http://$addr:$metrics/metrics" | awk -v m="$1" '$1 == m { printf "%.0f", $2 }'; }
# The keyframe indexes first (an MPEG-TS index reads the whole file), kept in the state directory:
# what a restarted server finds, and not part of what is measured.
# (The pinned movie is indexed as it is loaded; the others after the server listens.) At most 20 min.
started=$(date +%s.%N)
start_server
until [[ $(grep -c "index of .* ready" "$work/server.log") -ge $(( ${#movies[@]} - 1 )) ]] || (( $(date +%s) - ${started%.*} > 1200 )); do sleep 1; done
record cache_setup index_build_s "$(echo "$(date +%s.%N) - $started" | bc)"
kill "$server"; wait "$server" 2>/dev/null || true
drop_caches
start_server
# Cold: movies nobody has read since the page cache was dropped (the last ones: the Zipf run's
# least popular), each opened once by its own viewer; then the same again, now resident.
cold_movies=("${movies[@]: -$starts}")
for phase in cold resident pinned; do
  samples=() list=("${cold_movies[@]}")
  [[ $phase == pinned ]] && list=($(for _ in "${cold_movies[@]}"; do echo "$pinned"; done))
  for m in "${list[@]}"; do
    line=$("$build/client/vod-client" bench "rdma://$addr:$port/$m" --clients 1 --duration 1 --pattern sequential --rate "$rate" 2> /dev/null | grep '^BENCH')
    samples+=("$(field after_connect_p50_us "$line")")
  done
  sorted=$(printf '%s\n' "${samples[@]}" | sort -n)
  record cache_vod_startup_after_connect_us "${phase}_p50" "$(awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }' <<< "$sorted")"
  record cache_vod_startup_after_connect_us "${phase}_p99" "$(tail -n 1 <<< "$sorted")"
done
# A cold movie's goodput: one nobody read yet, whole, as fast as it goes.
goodput_movie=${movies[-$((starts + 1))]}
t0=$(date +%s.%N)
"$build/client/vod-client" get "rdma://$addr:$port/$goodput_movie" -o /dev/null --quiet --chunk-kib 1024 --depth 16
record cache_vod_cold_get mbytes_per_s "$(echo "scale=1; $(stat -c %s "$lib/$goodput_movie") / ($(date +%s.%N) - $t0) / 1000000" | bc)"
# The viewers: Zipf's law over the catalog (its first movie the most popular), a jump every 10 s.
# Segments asked for (by a request, or as its read-ahead): resident (hits), or read from disk
# (misses when asked for, read-ahead fills when not yet).
asked() { echo $(( $(metric vod_server_cache_hits_total) + $(metric vod_server_cache_misses_total) + $(metric vod_server_cache_readahead_fills_total) )); }
r0=$(asked) h0=$(metric vod_server_cache_hits_total) d0=$(metric vod_server_cache_disk_read_bytes_total)
b0=$(disk_bytes) c0=$(ticks "$server")
line=$("$build/client/vod-client" bench "rdma://$addr:$port" --zipf 1 --clients "$viewers" --duration "$run_secs" --pattern jump:10 --rate "$rate" \
  --chunk-kib 256 --readahead-seconds 2 --readahead-kib 4096 --depth 8 2> "$work/bench.err" | grep '^BENCH')
c1=$(ticks "$server") b1=$(disk_bytes)
r1=$(asked) h1=$(metric vod_server_cache_hits_total) d1=$(metric vod_server_cache_disk_read_bytes_total)
served=$(awk -v g="$(field goodput_mbps "$line")" -v s="$(field seconds "$line")" 'BEGIN { printf "%d", g * 1e6 / 8 * s }')
record cache_vod in_time "$(field in_time "$line")"
record cache_vod late "$(field late "$line")"
record cache_vod viewers_late "$(field viewers_late "$line")"
record cache_vod served_bytes "$served"
record cache_vod hit_ratio "$(awk -v h=$((h1 - h0)) -v r=$((r1 - r0)) 'BEGIN { printf "%.3f", (r > 0 ? h / r : 0) }')"
record cache_vod disk_bytes "$((b1 - b0))"
record cache_vod server_disk_bytes "$((d1 - d0))"
record cache_vod cpu_s "$(echo "scale=3; ($c1 - $c0) / $hz" | bc)"
record cache_vod evictions "$(metric vod_server_cache_evictions_total)"
kill "$server"; wait "$server" 2>/dev/null || true

# ---------------------------------------------------------------- nginx, in a cgroup of the cache's size
source "$(dirname "${BASH_SOURCE[0]}")/nginx-peer.sh"
drop_caches
limit=none
if { mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup; } 2>/dev/null &&
   echo +memory > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null && mkdir -p /sys/fs/cgroup/vod-bench-nginx 2>/dev/null; then
  cgroup=/sys/fs/cgroup/vod-bench-nginx
  echo "$cache" > "$cgroup/memory.max" && limit=$((cache >> 20))
  echo $$ > "$cgroup/cgroup.procs"  # nginx, started below, is born in it; this shell moves back after
fi
record cache_nginx memory_limit_mib "$limit"
start_nginx_peer "$work/nginx" "$addr" 8090 "$lib"
pids+=("$nginx_master")
for _ in $(seq 300); do curl -s -o /dev/null -I "http://$addr:8090/${movies[0]}" && break; sleep 0.1; done  # a loaded guest starts it slowly
[[ -n $cgroup ]] && echo $$ > /sys/fs/cgroup/cgroup.procs
nginx_procs() { echo "$nginx_master $(pgrep -P "$nginx_master" | tr '\n' ' ')"; }
for phase in cold resident; do
  samples=()
  for m in "${cold_movies[@]}"; do
    line=$("$build/bench/http-bench" --host "$addr" --port 8090 --path "/$m" --clients 1 --duration 1 --rate "$rate" | grep '^BENCH')
    samples+=("$(field after_connect_p50_us "$line")")
  done
  sorted=$(printf '%s\n' "${samples[@]}" | sort -n)
  record cache_nginx_startup_after_connect_us "${phase}_p50" "$(awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }' <<< "$sorted")"
  record cache_nginx_startup_after_connect_us "${phase}_p99" "$(tail -n 1 <<< "$sorted")"
done
t0=$(date +%s.%N)
curl -s -o /dev/null "http://$addr:8090/$goodput_movie"
record cache_nginx_cold_get mbytes_per_s "$(echo "scale=1; $(stat -c %s "$lib/$goodput_movie") / ($(date +%s.%N) - $t0) / 1000000" | bc)"
paths=(); for m in "${movies[@]}"; do paths+=(--path "/$m"); done
procs=$(nginx_procs)
b0=$(disk_bytes) c0=$(ticks $procs)
line=$("$build/bench/http-bench" --host "$addr" --port 8090 "${paths[@]}" --zipf 1 --clients "$viewers" --duration "$run_secs" --pattern jump:10 \
  --rate "$rate" --chunk-kib 256 | grep '^BENCH')
c1=$(ticks $procs) b1=$(disk_bytes)
record cache_nginx in_time "$(field in_time "$line")"
record cache_nginx late "$(field late "$line")"
record cache_nginx viewers_late "$(field viewers_late "$line")"
record cache_nginx served_bytes "$(awk -v g="$(field goodput_mbps "$line")" -v s="$(field seconds "$line")" 'BEGIN { printf "%d", g * 1e6 / 8 * s }')"
record cache_nginx disk_bytes "$((b1 - b0))"
record cache_nginx cpu_s "$(echo "scale=3; ($c1 - $c0) / $hz" | bc)"
kill "$nginx_master" 2>/dev/null || true
wait "$nginx_master" 2>/dev/null || true
