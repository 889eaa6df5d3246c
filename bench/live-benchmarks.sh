#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# live-benchmarks.sh MODE TS_FILE OUT_DIR: the live part of the benchmark suite, in the RDMA session
# that guest-benchmarks.sh runs in (so everything is measured in one run).
#   - the limits: ib_read_lat at a record's size and ib_send_lat for a notification (perftest, -e)
#   - vod-server with TS_FILE as a live channel: for 1, 10, 50, 100 viewers in one bench process,
#     publish-to-delivery latency (p50, p99; the server stamps each notification with CLOCK_REALTIME,
#     and the viewers read the same clock) and the server's CPU
#   - the peer: VLC streaming the same TS live over HTTP (--sout '#std{access=http,mux=ts}'), with
#     the same numbers of curl viewers, and VLC's CPU
# Writes OUT_DIR/live.tsv: system, viewers, seconds, cpu_s, latency_p50_us, latency_p99_us, bytes, records, skips.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/perftest.sh"
mode=$1 ts=$(realpath "$2") out=$3
addr=${VOD_RDMA_ADDR:?run through tests/softroce/softroce-run}
build=${VOD_BUILD_DIR:-build}
mkdir -p "$out"
results=$out/results.tsv live=$out/live.tsv
printf 'system\tviewers\tseconds\tcpu_s\tlatency_p50_us\tlatency_p99_us\tbytes\trecords\tskips\n' > "$live"
record() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$results"; echo "  $1 $2 = $3"; }
hz=$(getconf CLK_TCK)
proc_ticks() { local t=0; for p in "$@"; do t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0))); done; echo "$t"; }
case $mode in
  full) viewers="1 10 50 100"; secs=20 ;;
  quick) viewers="1 10 50"; secs=10 ;;
  smoke) viewers="1 5"; secs=3 ;;
  *) echo "mode must be full, quick or smoke" >&2; exit 2 ;;
esac
work=$(mktemp -d)
pids=()
trap 'kill ${pids[*]} 2>/dev/null || true; rm -rf "$work"' EXIT

echo "== live 1. the limits: ib_read_lat at record sizes, ib_send_lat for a 72-byte notification"
for s in 8192 65536; do
  record live_ib_read_lat_us "$s" "$(perftest_latency ib_read_lat "$s" "$addr")"
done
record live_ib_send_lat_us 72 "$(perftest_latency ib_send_lat 72 "$addr")"
record live setup "$(basename "$ts"), $(ffprobe -v error -show_entries format=bit_rate -of csv=p=0 "$ts" | awk '{ printf "%.2f", $1 / 1e6 }') Mbit/s"

echo "== live 2. vod-server: the TS as a live channel, N viewers in one bench process"
"$build/server/vod-server" --bind "$addr" --port 7480 --live "live=file:$ts" --live-buffer 4 --max-clients 5000 2> "$work/server.log" &
server=$!; pids+=("$server")
for _ in $(seq 300); do grep -q 'listening on' "$work/server.log" && break; sleep 0.1; done
sleep 2  # let the ring fill past a keyframe
for n in $viewers; do
  p0=$(proc_ticks "$server")
  line=$("$build/client/vod-client" bench "rdma://$addr:7480/live/live" --pattern live --clients "$n" --duration "$secs" | grep '^BENCH live')
  p1=$(proc_ticks "$server")
  field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< "$line"; }
  printf 'vod\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$(field seconds)" "$(echo "scale=3; ($p1 - $p0) / $hz" | bc)" \
    "$(field latency_p50_us)" "$(field latency_p99_us)" "$(field bytes)" "$(field records)" "$(field skips)" >> "$live"
  tail -n 1 "$live" | sed 's/^/  /'
done
# The server alone, with no viewer: what the source (pacing, cutting, writing the ring) costs.
p0=$(proc_ticks "$server"); sleep "$secs"; p1=$(proc_ticks "$server")
printf 'vod\t0\t%s\t%s\t\t\t\t\t\n' "$secs" "$(echo "scale=3; ($p1 - $p0) / $hz" | bc)" >> "$live"
kill "$server"; wait "$server" 2>/dev/null || true

echo "== live 3. the peer: VLC streams the same TS live over HTTP to N curl viewers"
vlc_home=$(mktemp -d); chown nobody "$vlc_home"; cp "$ts" "$vlc_home/live.ts"; chmod 644 "$vlc_home/live.ts"
HOME=$vlc_home setpriv --reuid=nobody --regid=nogroup --clear-groups cvlc --loop --intf dummy "$vlc_home/live.ts" \
  --sout "#std{access=http,mux=ts,dst=127.0.0.1:8082/live}" > "$work/vlc.log" 2>&1 &
vlc=$!; pids+=("$vlc")
# An endless stream never completes: wait for its 200, not for curl to finish.
for _ in $(seq 100); do [[ $(curl -s --max-time 1 -o /dev/null -w '%{http_code}' http://127.0.0.1:8082/live || true) == 200 ]] && break; sleep 0.2; done
for n in $viewers; do
  curls=()
  for i in $(seq "$n"); do curl -s -o "$work/peer-$i.ts" --max-time $((secs + 2)) http://127.0.0.1:8082/live & curls+=($!); done
  sleep 1
  p0=$(proc_ticks "$vlc"); start=$(date +%s.%N)
  sleep "$secs"
  p1=$(proc_ticks "$vlc"); elapsed=$(echo "$(date +%s.%N) - $start" | bc)
  wait "${curls[@]}" 2>/dev/null || true
  bytes=$(cat "$work"/peer-*.ts 2>/dev/null | wc -c)
  rm -f "$work"/peer-*.ts
  printf 'vlc\t%s\t%s\t%s\t\t\t%s\t\t\n' "$n" "$elapsed" "$(echo "scale=3; ($p1 - $p0) / $hz" | bc)" "$bytes" >> "$live"
  tail -n 1 "$live" | sed 's/^/  /'
done
p0=$(proc_ticks "$vlc"); sleep "$secs"; p1=$(proc_ticks "$vlc")
printf 'vlc\t0\t%s\t%s\t\t\t\t\t\n' "$secs" "$(echo "scale=3; ($p1 - $p0) / $hz" | bc)" >> "$live"
kill "$vlc" 2>/dev/null; wait "$vlc" 2>/dev/null || true
rm -rf "$vlc_home"
echo "live results in $live"
