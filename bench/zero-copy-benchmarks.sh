#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/zero-copy-benchmarks.sh [OUT]: the figures of docs/benchmarks.md section 15, in one run in a
# Soft-RoCE guest (or natively on an RDMA host; scripts/bench.sh runs it in its session), for a
# 128 MiB movie:
#   - bytes copied ÷ bytes delivered for vod-client get, rdmasrc, vod-proxy and vod-mount, zero copy
#     on and off (the clients' own counters: Stats::bytes_copied, the proxy's /metrics, the mount's
#     connection lines);
#   - one client's goodput ÷ ib_read_bw (256 KiB Reads, one QP) in the same run, and how it moves
#     with the Reads in flight and their size;
#   - the client's user and system CPU per GiB, and its context switches per second, on and off;
#   - vod-proxy's CPU per GiB beside nginx's sendfile of the same file (loopback: the kernel copies
#     for both), and the server's context switches beside nginx's.
# Writes OUT/figures.txt (default build/bench-results/zero-copy), one line per run, read by
# bench/zero-copy-report.sh. Needs the default build (cmake --build --preset default).
# ZC_SECTIONS picks parts (default: all of "get depth rdmasrc proxy mount nginx"); ZC_RUNS the runs of
# each row (default 3) and ZC_MIB the movie's size (default 128): scripts/bench.sh smoke makes them small.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(realpath -m "${1:-$root/build/bench-results/zero-copy}")  # relative to the caller's directory
cd "$root"
if [[ -z ${VOD_RDMA_READY:-} ]]; then
  exec tests/softroce/softroce-run --timeout 1500 -- env VOD_BUILD_DIR="$PWD/build" "$root/bench/zero-copy-benchmarks.sh" "$out"
fi
mkdir -p "$out"
source tests/rdma/vod_test_lib.sh
source bench/perftest.sh
source bench/nginx-peer.sh
rusage=bench/run_with_rusage.py
mib=${ZC_MIB:-128} runs=${ZC_RUNS:-3}
size=$((mib * 1024 * 1024))
media=$work/media
mkdir -p "$media"
"$build/tests/rdma/make_pattern" "$size" 4 "$media/movie.bin"
start_server "$media"
gib=$(awk -v s="$size" 'BEGIN { print s / 1073741824 }')
figures=$out/figures.txt
: > "$figures"
record() { echo "$*" | tee -a "$figures"; }
switches() { awk '/^voluntary_ctxt_switches|^nonvoluntary_ctxt_switches/ { n += $2 } END { print n }' "/proc/$1/status"; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
ticks=$(getconf CLK_TCK)
sections=" ${ZC_SECTIONS:-get depth rdmasrc proxy mount nginx} "
want() { [[ $sections == *" $1 "* ]]; }

record "movie_MiB $mib"
record "runs_per_row $runs"
step "ib_read_bw, 256 KiB Reads, one QP"
ib_iters=$((2000 * mib / 128)); ((ib_iters >= 50)) || ib_iters=50  # about four times the movie
ib=$(perftest_bandwidth 262144 "$ib_iters" "$addr")
record "ib_read_bw_MBps $ib"

want get && for mode in auto off; do
  for run in $(seq "$runs"); do
    step "vod-client get --zero-copy $mode (run $run)"
    before=$(switches "$server_pid")
    "$rusage" "$client_bin" get "$(uri movie.bin)" -o /dev/null --quiet --zero-copy "$mode" --log-level info 2> "$work/get.err"
    server_sw=$(( $(switches "$server_pid") - before ))
    read -r _ secs user sys vol invol < <(grep '^RUSAGE' "$work/get.err")
    ratio=$(sed -n 's/.*delivered \([0-9]*\) B (copied \([0-9]*\) B.*/\1 \2/p' "$work/get.err" | awk '{ printf "%.4f", $2 / $1 }')
    record "get $mode run $run: copied/delivered $ratio, $(awk -v s="$size" -v t="$secs" 'BEGIN { printf "%.1f", s / t / 1e6 }') MB/s" \
      "(÷ ib_read_bw $(awk -v s="$size" -v t="$secs" -v ib="$ib" 'BEGIN { printf "%.2f", s / t / 1e6 / ib }')), user $(awk -v u="$user" -v g="$gib" 'BEGIN { printf "%.2f", u / g }') s/GiB," \
      "sys $(awk -v u="$sys" -v g="$gib" 'BEGIN { printf "%.2f", u / g }') s/GiB, client switches/s $(awk -v n=$((vol + invol)) -v t="$secs" 'BEGIN { printf "%.0f", n / t }')," \
      "server switches/s $(awk -v n="$server_sw" -v t="$secs" 'BEGIN { printf "%.1f", n / t }')"
  done
done

# What limits one client: the Reads in flight and their size, zero copy on (one run each).
want depth && for shape in "4 256" "16 256" "32 256" "16 1024" "32 1024"; do
  read -r depth chunk <<< "$shape"
  step "vod-client get --depth $depth --chunk-kib $chunk"
  "$rusage" "$client_bin" get "$(uri movie.bin)" -o /dev/null --quiet --depth "$depth" --chunk-kib "$chunk" --log-level info 2> "$work/get.err"
  read -r _ secs _ _ _ _ < <(grep '^RUSAGE' "$work/get.err")
  record "get depth $depth chunk ${chunk}KiB: $(awk -v s="$size" -v t="$secs" 'BEGIN { printf "%.1f", s / t / 1e6 }') MB/s" \
    "(÷ ib_read_bw $(awk -v s="$size" -v t="$secs" -v ib="$ib" 'BEGIN { printf "%.2f", s / t / 1e6 / ib }'))"
done

export GST_PLUGIN_PATH=$build/client/gst GST_REGISTRY=$work/gst-registry.bin
want rdmasrc && gst-inspect-1.0 rdmasrc > /dev/null  # the registry is built now, not inside the first timed run
want rdmasrc && for zc in true false; do
  for run in $(seq "$runs"); do
    step "rdmasrc zero-copy=$zc ! fakesink (run $run)"
    GST_DEBUG=rdmasrc:4 "$rusage" gst-launch-1.0 -q rdmasrc "uri=$(uri movie.bin)" zero-copy=$zc ! fakesink sync=false 2> "$work/gst.err"
    read -r _ secs user sys _ _ < <(grep '^RUSAGE' "$work/gst.err")
    ratio=$(grep -o 'closing: delivered [0-9]* B (copied [0-9]* B' "$work/gst.err" | tail -n 1 | awk '{ gsub(/[(]/, ""); printf "%.4f", $6 / $3 }')
    record "rdmasrc zero-copy=$zc run $run: copied/delivered $ratio, $(awk -v s="$size" -v t="$secs" 'BEGIN { printf "%.1f", s / t / 1e6 }') MB/s," \
      "user $(awk -v u="$user" -v g="$gib" 'BEGIN { printf "%.2f", u / g }') s/GiB, sys $(awk -v u="$sys" -v g="$gib" 'BEGIN { printf "%.2f", u / g }') s/GiB (the pipeline)"
  done
done

want proxy && for mode in auto off; do
  http_port=$(free_port)
  "$build/proxy/vod-proxy" --server "$(uri)" --listen "127.0.0.1:$http_port" --zero-copy "$mode" --log-level warn 2> "$work/proxy.log" &
  proxy=$!
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$http_port/" && break; sleep 0.1; done
  curl -s -o /dev/null "http://127.0.0.1:$http_port/movies/movie.bin"  # the session opened, the blocks allocated
  for run in $(seq "$runs"); do
    step "vod-proxy --zero-copy $mode, curl of the movie (run $run)"
    c0=$(cpu_ticks "$proxy"); s0=$(switches "$server_pid"); t0=$(date +%s.%N)
    curl -s -o /dev/null "http://127.0.0.1:$http_port/movies/movie.bin"
    t1=$(date +%s.%N); c1=$(cpu_ticks "$proxy"); s1=$(switches "$server_pid")
    metrics=$(curl -s "http://127.0.0.1:$http_port/metrics")
    delivered=$(awk '$1 == "vod_proxy_delivered_bytes_total" { print $2 }' <<< "$metrics")
    copied=$(awk '$1 == "vod_proxy_copied_bytes_total" { print $2 }' <<< "$metrics")
    record "vod-proxy $mode run $run: copied/delivered $(awk -v c="$copied" -v d="$delivered" 'BEGIN { printf "%.4f", c / d }') (since the start), proxy CPU" \
      "$(awk -v c=$((c1 - c0)) -v k="$ticks" -v g="$gib" 'BEGIN { printf "%.2f", c / k / g }') s/GiB, $(awk -v s="$size" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", s / (b - a) / 1e6 }') MB/s," \
      "server switches/s $(awk -v n=$((s1 - s0)) -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", n / (b - a) }')"
  done
  kill "$proxy"; wait "$proxy" 2>/dev/null || true
done

# vod-mount: a cold `cat` of the movie through a fresh mount (page cache on), the daemon's CPU
# (all its threads) and its connections' counters, logged when they close at the unmount.
mnt=$(mktemp -d /tmp/vod-bench-mnt.XXXXXX)
want mount && for mode in auto off; do
  for run in $(seq "$runs"); do
    step "vod-mount --zero-copy $mode, cat of the movie (run $run)"
    "$build/mount/vod-mount" "$(uri)" "$mnt" -f --zero-copy "$mode" --log-level info 2> "$work/mount.log" &
    mpid=$!
    for _ in $(seq 100); do grep -q " $mnt fuse" /proc/mounts && break; sleep 0.1; done
    read -r u0 k0 < <(awk '{ print $14, $15 }' "/proc/$mpid/stat"); t0=$(date +%s.%N)
    cat "$mnt/movie.bin" > /dev/null
    t1=$(date +%s.%N); read -r u1 k1 < <(awk '{ print $14, $15 }' "/proc/$mpid/stat")
    fusermount3 -u "$mnt"; wait "$mpid" || true
    read -r d c r < <(sed -n 's/.* closed: delivered \([0-9]*\) B (copied \([0-9]*\) B, \([0-9]*\) direct reads).*/\1 \2 \3/p' "$work/mount.log" |
      awk '{ d += $1; c += $2; r += $3 } END { print d + 0, c + 0, r + 0 }')
    record "vod-mount $mode run $run: copied/delivered $(awk -v c="$c" -v d="$d" 'BEGIN { printf "%.4f", d ? c / d : -1 }') ($r direct Reads)," \
      "$(awk -v s="$size" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", s / (b - a) / 1e6 }') MB/s, vod-mount user $(awk -v c=$((u1 - u0)) -v k="$ticks" -v g="$gib" 'BEGIN { printf "%.2f", c / k / g }') s/GiB," \
      "sys $(awk -v c=$((k1 - k0)) -v k="$ticks" -v g="$gib" 'BEGIN { printf "%.2f", c / k / g }') s/GiB"
  done
done
rmdir "$mnt"

want nginx && step "nginx (sendfile) of the same file"
want nginx || { stop_server; cat "$figures"; exit 0; }
nginx_port=$(free_port)
start_nginx_peer "$work/nginx" 127.0.0.1 "$nginx_port" "$media"
worker=$(pgrep -P "$nginx_master" | head -n 1)
curl -s -o /dev/null "http://127.0.0.1:$nginx_port/movie.bin"
c0=$(cpu_ticks "$worker"); s0=$(switches "$worker"); t0=$(date +%s.%N)
curl -s -o /dev/null "http://127.0.0.1:$nginx_port/movie.bin"
t1=$(date +%s.%N); c1=$(cpu_ticks "$worker"); s1=$(switches "$worker")
record "nginx sendfile: CPU $(awk -v c=$((c1 - c0)) -v k="$ticks" -v g="$gib" 'BEGIN { printf "%.2f", c / k / g }') s/GiB," \
  "$(awk -v s="$size" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", s / (b - a) / 1e6 }') MB/s, worker switches/s $(awk -v n=$((s1 - s0)) -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", n / (b - a) }')"
kill "$nginx_master" 2>/dev/null || true
stop_server
echo "--- figures ($figures)"
cat "$figures"
