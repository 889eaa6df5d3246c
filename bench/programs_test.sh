#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# rdma_bench_programs: every benchmark program runs once, in its smallest mode, so that bench/ cannot
# rot while the suite itself (scripts/bench.sh) stays out of the test command. A few seconds each, in
# the Soft-RoCE session; no figure is bounded (they are benchmarks), but each run must deliver data:
#   - vod-client bench, sequential and jumping viewers, and http-bench against nginx on the same
#     movie: chunks delivered (in time or late) by every run
#   - vod-client bench of a live channel: records delivered; zap: a startup figure
#   - read-latency: a Read's latency at fixed and random offsets, over new connections, and from
#     fresh processes (libvodclient against the bare raw-verbs path)
#   - placement-balance: a fleet's balance and movement on a small library
source "$(dirname "$0")/../tests/rdma/vod_test_lib.sh"
source "$(dirname "$0")/nginx-peer.sh"
media=$work/media
mkdir -p "$media"
movie=test-480p-60s.ts
cp "$test_media/$movie" "$media/"
start_server "$media" --live "cam=file:$media/$movie"
http_port=$(free_port)
chmod o+x "$work"  # nginx's worker (www-data) must reach the media: mktemp -d makes $work 0700
start_nginx_peer "$work/nginx" "$addr" "$http_port" "$media"
cleanup_hooks+=("kill $nginx_master 2>/dev/null")
rate=$(ffprobe -v error -show_entries format=bit_rate -of csv=p=0 "$media/$movie" | awk '{ printf "%.3f", $1 / 1e6 }')
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< "$2"; }
number() { [[ $2 =~ ^[0-9]+(\.[0-9]+)?$ ]] || fail "$1: '$2' is not a figure"; }
delivered() {  # delivered LABEL BENCH_LINE: chunks in time or late, at least one
  local in_time late
  in_time=$(field in_time "$2") late=$(field late "$2")
  number "$1 in_time" "$in_time"
  (( in_time + late > 0 )) || fail "$1 delivered no chunk: $2"
  echo "    $1: $in_time chunks in time, $late late"
}

step "vod-client bench and http-bench: 2 viewers, sequential and jumping, 3 s each"
for pattern in sequential jump:1; do
  line=$("$client_bin" bench "$(uri "$movie")" --clients 2 --duration 3 --pattern "$pattern" --rate "$rate" \
    --chunk-kib 256 --readahead-seconds 2 --readahead-kib 4096 --depth 8 2> "$work/bench.err" | grep '^BENCH') ||
    fail "vod-client bench $pattern printed no BENCH line: $(tail -n 3 "$work/bench.err")"
  delivered "vod $pattern" "$line"
  line=$("$build/bench/http-bench" --host "$addr" --port "$http_port" --path "/$movie" --clients 2 --duration 3 --pattern "$pattern" \
    --rate "$rate" --chunk-kib 256 | grep '^BENCH') || fail "http-bench $pattern printed no BENCH line"
  delivered "nginx $pattern" "$line"
done
pass "vod-client bench and http-bench delivered chunks in every run"

step "vod-client bench of a live channel (2 viewers, 3 s), and zap (a new open every 0.5 s, 3 s)"
line=$("$client_bin" bench "$(uri live/cam)" --pattern live --clients 2 --duration 3 2> "$work/live.err" | grep '^BENCH live') ||
  fail "the live bench printed no BENCH line: $(tail -n 3 "$work/live.err")"
records=$(field records "$line")
number "live records" "$records"
(( records > 0 )) || fail "the live bench delivered no record: $line"
number "live latency p50" "$(field latency_p50_us "$line")"
line=$("$client_bin" bench "$(uri "$movie")" --clients 1 --duration 3 --pattern zap:0.5 --rate "$rate" 2> "$work/zap.err" | grep '^BENCH') ||
  fail "the zap bench printed no BENCH line: $(tail -n 3 "$work/zap.err")"
number "zap startup p50" "$(field startup_p50_us "$line")"
delivered "zap" "$line"
pass "live: $records records; zap: startup p50 $(field startup_p50_us "$line") us"

step "read-latency: 16 KiB Reads at fixed and random offsets, over new connections, from fresh processes"
line=$("$build/bench/read-latency" --host "$addr" --port "$port" --name "$movie" --size 16384 --count 20 | grep '^READLAT ')
for f in fixed_p50_us random_p50_us; do number "read-latency $f" "$(field "$f" "$line")"; done
line=$("$build/bench/read-latency" --host "$addr" --port "$port" --name "$movie" --size 16384 --count 4 --gap-ms 100 --new-connections | grep '^READLAT_FIRST')
number "read-latency first_p50_us" "$(field first_p50_us "$line")"
line=$("$build/bench/read-latency" --host "$addr" --port "$port" --name "$movie" --size 16384 --fresh 2 --gap-ms 100 | grep '^READLAT_FRESH')
for f in bare_p50_us vod_p50_us; do number "read-latency --fresh $f" "$(field "$f" "$line")"; done
pass "read-latency: every mode printed its figures"

step "placement-balance on 100 movies and 1000 viewers"
"$build/bench/placement-balance" --movies 100 --viewers 1000 > "$work/placement.txt"
[[ $(grep -c '^RESULT placement_balance ' "$work/placement.txt") -ge 2 ]] || fail "placement-balance: $(cat "$work/placement.txt")"
number "placement join_moved" "$(field join_moved "$(grep '^RESULT placement_movement' "$work/placement.txt" | head -n 1)")"
pass "placement-balance printed its balance and movement"
kill "$nginx_master" 2>/dev/null || true
stop_server
