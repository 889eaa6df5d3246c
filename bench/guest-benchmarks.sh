#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# guest-benchmarks.sh MODE MEDIA_DIR OUT_DIR [MOVIE]: sections 1-13 of the benchmark suite, in one RDMA
# session (scripts/bench.sh runs it in its Soft-RoCE session). MODE is full, quick or smoke.
# Writes OUT_DIR/results.tsv (section, key, value) and OUT_DIR/sweep.tsv (one row per run).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/nginx-peer.sh"
source "$(dirname "${BASH_SOURCE[0]}")/perftest.sh"
mode=$1 media=$(realpath "$2") out=$3
addr=${VOD_RDMA_ADDR:?run through tests/softroce/softroce-run}
build=${VOD_BUILD_DIR:-build}
mkdir -p "$out"
results=$out/results.tsv sweep=$out/sweep.tsv
: > "$results"
printf 'system\tpattern\tclients\tseconds\tproc_cpu_s\ttotal_cpu_s\tin_time\tlate\tviewers_late\tgoodput_mbps\tseek_p50_us\tseek_p99_us\tstartup_p50_us\n' > "$sweep"
work=$(mktemp -d)
pids=()
trap 'kill ${pids[*]} 2>/dev/null || true; rm -rf "$work"' EXIT
record() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$results"; echo "  $1 $2 = $3"; }
# bench_field KEY LINE: the value of KEY=VALUE in a tool's result line (BENCH, READLAT).
bench_field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< "$2"; }
# vod-client bench's read settings in every run: 256 KiB chunks, 2 s (at most 4 MiB) of read-ahead, 8 Reads deep.
vod_reads=(--chunk-kib 256 --readahead-seconds 2 --readahead-kib 4096 --depth 8)
hz=$(getconf CLK_TCK)

case $mode in
  full) sizes="16384 65536 262144 1048576"; ib_secs=5; sweep_n="1 10 25 50 100"; run_secs=20; jump=5; scale_n="1 100 500 1000"; max_probe="20 25 30 35 40"; cap_secs=8; zap_secs=20; raw_reads=500; seek_secs=30; fresh_n=40 ;;
  quick) sizes="16384 262144"; ib_secs=3; sweep_n="1 10 25"; run_secs=10; jump=3; scale_n="1 100 1000"; max_probe=""; cap_secs=4; zap_secs=8; raw_reads=200; seek_secs=15; fresh_n=20 ;;
  smoke) sizes="16384 262144"; ib_secs=1; sweep_n="2"; run_secs=3; jump=1; scale_n="1 5"; max_probe=""; cap_secs=2; zap_secs=3; raw_reads=40; seek_secs=3; fresh_n=2 ;;
  *) echo "mode must be full, quick or smoke" >&2; exit 2 ;;
esac
movie=${4:-$(cd "$media" && ls test-1080p-*.ts | head -n 1)}
rate=$(ffprobe -v error -show_entries format=bit_rate -of csv=p=0 "$media/$movie" | awk '{ printf "%.3f", $1 / 1e6 }')
record setup movie "$movie"
record setup movie_mbps "$rate"
record setup guest "$(uname -r), $(nproc) vCPU, $(awk '/MemTotal/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo), $(ibv_devinfo | awk '/hca_id/ { print $2 }') $(ibv_devinfo | awk '/active_mtu/ { print "MTU", $2 }')"

proc_ticks() { local t=0; for p in "$@"; do t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat"))); done; echo "$t"; }
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }  # user nice system irq softirq

# perftest sleeps on completion events (-e), as vod-client does: busy-polling both ends on a
# 2-vCPU guest would starve rxe's softirq work and understate the limit.
echo "== 1. the limit: ib_read_bw -R -e and ib_read_lat -R -e on $(ibv_devinfo | awk '/hca_id/ { print $2 }')"
for s in $sizes; do
  # perftest's duration mode refuses events: iterations sized for about $ib_secs s at ~25 MB/s.
  iters=$(( ib_secs * 25000000 / s )); [[ $iters -lt 50 ]] && iters=50
  bw=$(perftest_bandwidth "$s" "$iters" "$addr")
  record ib_read_bw "$s" "${bw:-0}"
  record ib_read_lat_typical_us "$s" "$(perftest_latency ib_read_lat "$s" "$addr")"
done

echo "== vod-server and nginx on the same media"
"$build/server/vod-server" --media-dir "$media" --bind "$addr" --port 7470 --max-clients 5000 2> "$work/server.log" &
server=$!; pids+=("$server")
for _ in $(seq 600); do grep -q 'listening on' "$work/server.log" && break; sleep 0.1; done
start_nginx_peer "$work/nginx" "$addr" 8081 "$media"
pids+=("$nginx_master")
sleep 1
nginx_procs() { echo "$nginx_master $(pgrep -P "$nginx_master" | tr '\n' ' ')"; }
record setup vod_server_rss_idle_kib "$(awk '/VmRSS/ { print $2 }' "/proc/$server/status")"

echo "== 2. goodput at full speed, vs ib_read_bw at the same chunk size"
size_bytes=$(stat -c %s "$media/$movie")
for n in 1 4; do
  start=$(date +%s.%N); gets=()
  for i in $(seq "$n"); do "$build/client/vod-client" get "rdma://$addr/$movie" -o /dev/null --quiet --chunk-kib 256 --depth 16 & gets+=($!); done
  wait "${gets[@]}"
  secs=$(echo "$(date +%s.%N) - $start" | bc)
  record goodput_mbytes_per_s "vod_$n" "$(echo "scale=2; $n * $size_bytes / $secs / 1000000" | bc)"
  start=$(date +%s.%N); gets=()
  for i in $(seq "$n"); do curl -s -o /dev/null "http://$addr:8081/$movie" & gets+=($!); done
  wait "${gets[@]}"
  secs=$(echo "$(date +%s.%N) - $start" | bc)
  record goodput_mbytes_per_s "nginx_$n" "$(echo "scale=2; $n * $size_bytes / $secs / 1000000" | bc)"
done

echo "== 4a. the first Read of a seek, alone: 16 KiB at one offset and at random offsets, back to back (as ib_read_lat) and after 5 and 50 ms idle"
# The last: after 50 ms idle again, spinning on the CQ instead of sleeping on its channel (is it the reader's wake-up?).
for run in 0 5 50 50_busy; do
  gap=${run%_busy}; extra=(); [[ $run == *_busy ]] && extra=(--busy-poll)
  line=$("$build/bench/read-latency" --host "$addr" --port 7470 --name "$movie" --size 16384 --count "$(( gap ? raw_reads / 4 : raw_reads ))" \
    --gap-ms "$gap" "${extra[@]}" | grep '^READLAT')
  for f in fixed_p50_us fixed_p99_us random_p50_us random_p99_us; do record "read_latency_16k_gap${run}ms" "$f" "$(bench_field "$f" "$line")"; done
done

run_one() {  # run_one SYSTEM PATTERN N: one bench run; appends a row to sweep.tsv
  local system=$1 pattern=$2 n=$3 line procs
  if [[ $system == vod ]]; then procs=$server; else procs=$(nginx_procs); fi
  local p0 t0 p1 t1
  p0=$(proc_ticks $procs); t0=$(busy_ticks)
  if [[ $system == vod ]]; then
    # The server's steady state apart from its connects and disconnects: its CPU between the bench
    # saying every viewer is connected and the bench printing its results (before it disconnects).
    "$build/client/vod-client" bench "rdma://$addr/$movie" --clients "$n" --duration "$run_secs" --pattern "$pattern" --rate "$rate" \
      "${vod_reads[@]}" > "$work/run.out" 2> "$work/run.err" &
    local b=$! s0 s1 w0 w1
    for _ in $(seq 6000); do grep -q 'viewers connected' "$work/run.err" && break; kill -0 "$b" 2>/dev/null || break; sleep 0.02; done
    s0=$(proc_ticks $server); w0=$(date +%s.%N)
    for _ in $(seq 30000); do grep -q '^BENCH' "$work/run.out" && break; kill -0 "$b" 2>/dev/null || break; sleep 0.02; done
    s1=$(proc_ticks $server); w1=$(date +%s.%N)
    wait "$b"
    line=$(grep '^BENCH' "$work/run.out")
    record server_steady_cpu_pct "$n-$pattern" "$(echo "scale=3; 100 * ($s1 - $s0) / $hz / ($w1 - $w0)" | bc)"
    record bench_cpu_pct "$n-$pattern" "$(bench_field bench_cpu_s "$line" | awk -v s="$run_secs" '{ printf "%.1f", 100 * $1 / s }')"
  else
    line=$("$build/bench/http-bench" --host "$addr" --port 8081 --path "/$movie" --clients "$n" --duration "$run_secs" --pattern "$pattern" \
      --rate "$rate" --chunk-kib 256 | grep '^BENCH')
  fi
  p1=$(proc_ticks $procs); t1=$(busy_ticks)
  field() { bench_field "$1" "$line"; }
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$system" "$pattern" "$n" "$(field seconds)" \
    "$(echo "scale=3; ($p1 - $p0) / $hz" | bc)" "$(echo "scale=3; ($t1 - $t0) / $hz" | bc)" "$(field in_time)" "$(field late)" \
    "$(field viewers_late)" "$(field goodput_mbps)" "$(field seek_p50_us)" "$(field seek_p99_us)" "$(field startup_p50_us)" >> "$sweep"
  tail -n 1 "$sweep" | sed 's/^/  /'
  if [[ $system == vod && $pattern == sequential ]]; then  # the steps of vod's startup
    record startup_connect_p50_us "$n" "$(field connect_p50_us)"
    record startup_describe_p50_us "$n" "$(field describe_p50_us)"
  fi
}

echo "== 3-5. server CPU, in-time chunks, seek and startup latency vs clients ($run_secs s runs, jumps every $jump s)"
for n in $sweep_n; do
  for pattern in sequential "jump:$jump"; do
    run_one vod "$pattern" "$n"
    run_one nginx "$pattern" "$n"
  done
done

record setup cap_secs "$cap_secs"
echo "== 3b. capacity: N readers at full speed ($cap_secs s), the in-time goal's yardstick, for every N of the sweep"
for n in $sweep_n $max_probe; do
  line=$("$build/client/vod-client" bench "rdma://$addr/$movie" --clients "$n" --duration "$cap_secs" --pattern sequential --rate 10000 \
    "${vod_reads[@]}" 2> /dev/null | grep '^BENCH')
  record fullspeed_mbps "vod_$n" "$(bench_field goodput_mbps "$line")"
  line=$("$build/bench/http-bench" --host "$addr" --port 8081 --path "/$movie" --clients "$n" --duration "$cap_secs" --pattern sequential \
    --rate 10000 --chunk-kib 256 | grep '^BENCH')
  record fullspeed_mbps "nginx_$n" "$(bench_field goodput_mbps "$line")"
done

echo "== 4b. seek at 1 client, a jump every 0.5 s ($seek_secs s): enough seeks for a median (the sweep's 1-client run has a few)"
line=$("$build/client/vod-client" bench "rdma://$addr/$movie" --clients 1 --duration "$seek_secs" --pattern jump:0.5 --rate "$rate" \
  "${vod_reads[@]}" 2> /dev/null | grep '^BENCH')
for k in seek_p50_us seek_p99_us seeks; do record seek_1client "vod_$k" "$(bench_field "$k" "$line")"; done
line=$("$build/bench/http-bench" --host "$addr" --port 8081 --path "/$movie" --clients 1 --duration "$seek_secs" --pattern jump:0.5 \
  --rate "$rate" --chunk-kib 256 | grep '^BENCH')
for k in seek_p50_us seek_p99_us seeks; do record seek_1client "nginx_$k" "$(bench_field "$k" "$line")"; done

echo "== 5b. startup at 1 client, the movie opened again and again in one process (zap every 0.5 s, $zap_secs s)"
line=$("$build/client/vod-client" bench "rdma://$addr/$movie" --clients 1 --duration "$zap_secs" --pattern zap:0.5 --rate "$rate" \
  "${vod_reads[@]}" 2> /dev/null | grep '^BENCH')
for k in startup_p50_us connect_p50_us describe_p50_us after_connect_p50_us; do record startup_zap "$k" "$(bench_field "$k" "$line")"; done
# The same starts without the read engine: a new connection every 0.5 s, its first 16 KiB Read timed.
line=$("$build/bench/read-latency" --host "$addr" --port 7470 --name "$movie" --size 16384 --count "$(( zap_secs * 2 ))" --gap-ms 500 \
  --new-connections | grep '^READLAT_FIRST')
for k in connect_p50_us first_p50_us first_p99_us; do record read_latency_16k_new_connection "$k" "$(bench_field "$k" "$line")"; done

echo "== 5c. a fresh process's first open, from the open call to the first 16 KiB: libvodclient against a bare raw-verbs program ($fresh_n processes each)"
line=$("$build/bench/read-latency" --host "$addr" --port 7470 --name "$movie" --size 16384 --fresh "$fresh_n" --gap-ms 100 | grep '^READLAT_FRESH')
for k in count bare_p50_us vod_p50_us ratio bare_p90_us vod_p90_us bare_exec_p50_us vod_exec_p50_us; do record fresh_open "$k" "$(bench_field "$k" "$line")"; done

echo "== 6. scale: vod-server RSS with connected, nearly idle clients"
for n in $scale_n; do
  "$build/client/vod-client" bench "rdma://$addr/$movie" --clients "$n" --duration 4 --pattern sequential --rate 0.01 \
    --chunk-kib 64 --readahead-kib 64 --depth 1 > "$work/scale.out" 2>&1 &
  b=$!
  for _ in $(seq 3000); do grep -q 'viewers connected' "$work/scale.out" && break; kill -0 "$b" 2>/dev/null || break; sleep 0.1; done
  s0=$(proc_ticks "$server")
  sleep 1
  record scale_rss_kib "$n" "$(awk '/VmRSS/ { print $2 }' "/proc/$server/status")"
  for _ in $(seq 600); do grep -q '^BENCH' "$work/scale.out" && break; kill -0 "$b" 2>/dev/null || break; sleep 0.05; done
  record scale_server_steady_cpu_s "$n" "$(echo "scale=3; ($(proc_ticks "$server") - $s0) / $hz" | bc)"
  wait "$b" || true
  record scale_bench_cpu_s "$n" "$(sed -n 's/.* bench_cpu_s=\([^ ]*\).*/\1/p' "$work/scale.out")"
done
for n in $max_probe; do
  run_one vod sequential "$n"
done
kill "$server" "$nginx_master" 2>/dev/null || true
# Live, in the same session: the 480p TS as a channel, against VLC's HTTP live output.
live_ts=${VOD_LIVE_TS:-$media/live.ts}
[[ -f $live_ts ]] && "$(dirname "${BASH_SOURCE[0]}")/live-benchmarks.sh" "$mode" "$live_ts" "$out"
# Write-Record: server CPU for HD streams against VLC's RTP output and nginx, loss recovery, buffering.
"$(dirname "${BASH_SOURCE[0]}")/udp-benchmarks.sh" "$mode" "$media" "$movie" "$([[ -f $live_ts ]] && echo "$live_ts" || echo "$media/$movie")" "$out"
# Access control: connects per second and startup with and without tokens and memory windows.
"$(dirname "${BASH_SOURCE[0]}")/auth-benchmarks.sh" "$mode" "$media" "$movie" "$out"
# vod-mount: sequential reads and first frame through the file system, against get, proxy and nginx.
"$(dirname "${BASH_SOURCE[0]}")/mount-benchmarks.sh" "$mode" "$media" "$movie" "$out"
# The segment cache against nginx on a library four times the cache: on the guest's own disk when
# softroce-run gave it one (scripts/bench.sh does), else on copies of the movie here (not cold).
cache_lib=${VOD_DISK_DIR:-}
if [[ -z $cache_lib ]]; then
  cache_lib=$work/cache-library
  mkdir -p "$cache_lib"
  chmod o+x "$work"  # nginx's worker (www-data) must reach the library: mktemp -d makes $work 0700
  copies=40; [[ $mode == smoke ]] && copies=6
  for i in $(seq -w 1 "$copies"); do cp "$media/$movie" "$cache_lib/movie-$i.${movie##*.}"; done
fi
# Viewers: the in-time section's capacity rule, the largest N of the sweep whose total bitrate is
# within 0.9 x what N readers at full speed got.
cache_n=1
for n in $sweep_n; do
  fs=$(awk -F'\t' -v k="vod_$n" '$1 == "fullspeed_mbps" && $2 == k { print $3 }' "$results" | tail -n 1)
  awk -v n="$n" -v r="$rate" -v f="${fs:-0}" 'BEGIN { exit !(n * r <= 0.9 * f) }' && cache_n=$n
done
"$(dirname "${BASH_SOURCE[0]}")/cache-benchmarks.sh" "$mode" "$cache_lib" "$cache_n" "$out"
# HLS from vod-proxy against nginx serving ffmpeg's HLS files of the same movie.
"$(dirname "${BASH_SOURCE[0]}")/hls-benchmarks.sh" "$mode" "$media" "$movie" "$out"
# iWARP: siw beside rxe, when the session brought siw up (softroce-run --device both).
if [[ -n ${VOD_IWARP_ADDR:-} ]]; then
  "$(dirname "${BASH_SOURCE[0]}")/iwarp-benchmarks.sh" "$mode" "$media" "$movie" "$out"
else
  echo "== 12. iWARP: skipped, no siw in this session (softroce-run --device both brings it up)"
fi
echo "results in $out"
