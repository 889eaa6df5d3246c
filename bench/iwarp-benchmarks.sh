#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# iwarp-benchmarks.sh MODE MEDIA_DIR MOVIE OUT_DIR: siw (iWARP) beside rxe (RoCE) in the same guest
# (softroce-run --device both: VOD_RDMA_ADDR is rxe's address, VOD_IWARP_ADDR siw's). For each device:
#   - ib_read_bw at the goodput runs' chunk size (256 KiB), one QP;
#   - goodput of 1 and 4 `vod-client get`s of MOVIE at full speed;
#   - seek p50 (1 viewer, a jump every 0.5 s), the warm start (the movie opened again and again in one
#     process) and the cold start (a fresh process's open to its first 16 KiB);
#   - vod-server's own CPU (utime+stime: the emulated NIC's kernel threads are left out on both
#     devices) while 25 viewers jump;
#   - connects per second with and without per-connection isolation, with tokens on both: shared
#     rkeys (no isolation), a protection domain per connection (--isolation pd), and on rxe a memory
#     window per connection (--isolation windows); and the memory each isolated connection pins
#     (the server's VmPin with every viewer connected, less before, per viewer).
# Appends to OUT_DIR/results.tsv (section, key, value); bench/iwarp-report.sh makes the section.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/perftest.sh"
mode=$1 media=$(realpath "$2") movie=$3 out=$4
rxe=${VOD_RDMA_ADDR:?run through tests/softroce/softroce-run --device both}
siw=${VOD_IWARP_ADDR:?run through tests/softroce/softroce-run --device both}
build=${VOD_BUILD_DIR:-build}
results=$out/results.tsv
mkdir -p "$out"
record() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$results"; echo "  $1 $2 = $3"; }
bench_field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< "$2"; }
case $mode in
  full) ib_iters=400 seek_secs=30 zap_secs=20 fresh_n=20 jumpers=25 run_secs=20 clients=30 secs=8 ;;  # siw: ~70 QPs per process
  quick) ib_iters=200 seek_secs=15 zap_secs=8 fresh_n=10 jumpers=25 run_secs=10 clients=20 secs=4 ;;
  smoke) ib_iters=20 seek_secs=2 zap_secs=2 fresh_n=1 jumpers=2 run_secs=2 clients=2 secs=1 ;;
  *) echo "mode must be full, quick or smoke" >&2; exit 2 ;;
esac
work=$(mktemp -d)
server=
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
hz=$(getconf CLK_TCK)
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
vm_pin_kib() { awk '/^VmPin/ { print $2 }' "/proc/$1/status"; }
rate=$(ffprobe -v error -show_entries format=bit_rate -of csv=p=0 "$media/$movie" | awk '{ printf "%.3f", $1 / 1e6 }')
size_bytes=$(stat -c %s "$media/$movie")
printf '1 %s\n' "$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" > "$work/keys"
chmod 600 "$work/keys"
token=$("$build/server/vod-token" --secret "$work/keys" --all --ttl 1h)
record iwarp movie_mib "$(( size_bytes >> 20 ))"
record iwarp clients "$clients"
record iwarp jumpers "$jumpers"
port=7600
start_server() {  # start_server ADDR LOG [ARGS...]
  local addr=$1 log=$2; shift 2
  port=$((port + 1))
  "$build/server/vod-server" --media-dir "$media" --bind "$addr" --port "$port" "$@" 2> "$log" &
  server=$!
  for _ in $(seq 600); do grep -q 'listening on' "$log" && return 0; kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
  cat "$log" >&2; echo "vod-server did not start" >&2; exit 1
}
stop_server() { kill "$server"; wait "$server" 2>/dev/null || true; server=; }

for dev in rxe siw; do
  addr=$rxe; [[ $dev == siw ]] && addr=$siw
  echo "== 12. $dev ($addr): ib_read_bw, goodput, seek, start, CPU under $jumpers jumping viewers"
  record iwarp_ib_read_bw_mbytes_per_s "$dev" "$(perftest_bandwidth 262144 "$ib_iters" "$addr")"
  start_server "$addr" "$work/$dev.log"
  for n in 1 4; do
    t0=$(date +%s.%N); gets=()
    for _ in $(seq "$n"); do "$build/client/vod-client" get "rdma://$addr:$port/$movie" -o /dev/null --quiet --chunk-kib 256 --depth 16 & gets+=($!); done
    wait "${gets[@]}"
    record iwarp_goodput_mbytes_per_s "${dev}_$n" "$(echo "scale=2; $n * $size_bytes / ($(date +%s.%N) - $t0) / 1000000" | bc)"
  done
  line=$("$build/client/vod-client" bench "rdma://$addr:$port/$movie" --clients 1 --duration "$seek_secs" --pattern jump:0.5 --rate "$rate" \
    --chunk-kib 256 --depth 8 2> /dev/null | grep '^BENCH')
  record iwarp_seek_p50_us "$dev" "$(bench_field seek_p50_us "$line")"
  line=$("$build/client/vod-client" bench "rdma://$addr:$port/$movie" --clients 1 --duration "$zap_secs" --pattern zap:0.5 --rate "$rate" \
    --chunk-kib 256 --depth 8 2> /dev/null | grep '^BENCH')
  record iwarp_warm_start_p50_us "$dev" "$(bench_field startup_p50_us "$line")"
  line=$("$build/bench/read-latency" --host "$addr" --port "$port" --name "$movie" --size 16384 --fresh "$fresh_n" --gap-ms 100 | grep '^READLAT_FRESH')
  record iwarp_cold_start_p50_us "$dev" "$(bench_field vod_p50_us "$line")"
  "$build/client/vod-client" bench "rdma://$addr:$port/$movie" --clients "$jumpers" --duration "$run_secs" --pattern jump:3 --rate "$rate" \
    --chunk-kib 256 --depth 8 > "$work/jump.out" 2> "$work/jump.err" &
  b=$!
  for _ in $(seq 3000); do grep -q 'viewers connected' "$work/jump.err" && break; kill -0 "$b" 2>/dev/null || break; sleep 0.05; done
  s0=$(ticks "$server")
  for _ in $(seq 30000); do grep -q '^BENCH' "$work/jump.out" && break; kill -0 "$b" 2>/dev/null || break; sleep 0.02; done
  s1=$(ticks "$server")
  wait "$b" || true
  line=$(grep '^BENCH' "$work/jump.out" || true)
  record iwarp_jumping_server_cpu_s "$dev" "$(echo "scale=3; ($s1 - $s0) / $hz" | bc)"
  record iwarp_jumping_late "$dev" "$(bench_field late "$line")"
  record iwarp_jumping_in_time "$dev" "$(bench_field in_time "$line")"
  stop_server

  echo "== 12. $dev: connects per second with and without isolation ($clients viewers, tokens on both)"
  configs="shared pd"; [[ $dev == rxe ]] && configs="shared pd windows"
  for config in $configs; do
    start_server "$addr" "$work/$dev-$config.log" --auth-secret "$work/keys" --isolation "$config"
    pin0=$(vm_pin_kib "$server")
    "$build/client/vod-client" bench "rdma://$addr:$port/$movie?token=$token" --clients "$clients" --duration "$secs" --pattern sequential \
      --rate 2 --chunk-kib 256 --depth 8 > "$work/c.out" 2> "$work/c.err" &
    b=$!
    for _ in $(seq 3000); do grep -q 'viewers connected' "$work/c.err" && break; kill -0 "$b" 2>/dev/null || break; sleep 0.05; done
    pin1=$(vm_pin_kib "$server")
    wait "$b" || true
    connect_s=$(sed -n 's/.*viewers connected in \([0-9.]*\) s.*/\1/p' "$work/c.err")
    record iwarp_connects_per_s "${dev}_$config" "$(awk -v n="$clients" -v s="$connect_s" 'BEGIN { if (s + 0 > 0) printf "%.1f", n / s }')"
    record iwarp_pinned_kib_per_connection "${dev}_$config" "$(( (pin1 - pin0) / clients ))"
    record iwarp_startup_p50_us "${dev}_$config" "$(bench_field startup_p50_us "$(grep '^BENCH' "$work/c.out" || true)")"
    stop_server
  done
done
