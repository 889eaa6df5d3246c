#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# udp-benchmarks.sh MODE MEDIA_DIR MOVIE LOSS_TS OUT_DIR: the Write-Record part of the benchmark
# suite, in the session guest-benchmarks.sh runs in (so everything is measured in one run).
#   1. server CPU to send N HD streams (20 in full mode), each paced at the movie's bitrate:
#      vod-server by Write-Record (N `vod-client play --transport udp`), VLC's RTP/UDP output of the
#      same file to N destinations (#duplicate of rtp{mux=ts}, one VLC process: its best case), and
#      nginx sendfile to N curl --limit-rate clients
#   2. loss recovery in a network namespace over a veth with netem at 0.1, 1 and 5% loss both ways:
#      time until every byte of LOSS_TS is in place, goodput, repair bytes, CPU on both ends
#   3. buffering time: from the request to the first 2 s of MOVIE in hand (UDP, RDMA, HTTP)
# Appends to OUT_DIR/results.tsv (section, key, value). UDP_PHASES picks parts (default "cpu loss
# buffering"); scripts/bench.sh runs the cpu part natively, in a network namespace of its own (UDP
# needs no RDMA, and CPU time under TCG emulation misstates a sender's cost), and the rest in the guest.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/nginx-peer.sh"
phases=${UDP_PHASES:-cpu loss buffering}
has() { [[ " $phases " == *" $1 "* ]]; }
mode=$1 media=$(realpath "$2") movie=$3 loss_ts=$(realpath "$4") out=$5
addr=${VOD_RDMA_ADDR:?run through tests/softroce/softroce-run}
build=${VOD_BUILD_DIR:-build}
results=$out/results.tsv
record() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$results"; echo "  $1 $2 = $3"; }
hz=$(getconf CLK_TCK)
proc_ticks() { local t=0; for p in "$@"; do t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0))); done; echo "$t"; }
case $mode in
  full) streams=20; secs=20; losses="0.1 1 5"; tries=5 ;;
  quick) streams=10; secs=10; losses="1 5"; tries=3 ;;
  smoke) streams=2; secs=3; losses="1"; tries=1 ;;
  *) echo "mode must be full, quick or smoke" >&2; exit 2 ;;
esac
work=$(mktemp -d)
pids=()
ns=vodbench$$
cleanup() {
  kill ${pids[*]} 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  ip link del vodb0 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
client=$build/client/vod-client
rate=$(ffprobe -v error -show_entries format=bit_rate -of csv=p=0 "$media/$movie" | awk '{ printf "%.3f", $1 / 1e6 }')
record udp streams "$streams"
record udp stream_mbps "$rate"

start_nginx_peer "$work/nginx" "$addr" 8083 "$media"
pids+=("$nginx_master")

if has cpu; then
record udp cpu_where "$([[ ${VOD_RDMA_GUEST:-} == 1 ]] && echo guest || echo native)"
"$build/server/vod-server" --no-rdma --media-dir "$media" --bind "$addr" --udp-port 7471 --udp-max-rate 2000 2> "$work/server.log" &
server=$!; pids+=("$server")
for _ in $(seq 600); do grep -q 'listening on' "$work/server.log" && break; sleep 0.1; done

echo "== udp 1. server CPU for $streams streams of $movie at $rate Mbit/s, $secs s"
players=()
for i in $(seq "$streams"); do
  "$client" play "rdma://$addr/$movie" --transport udp > /dev/null 2> "$work/play$i.log" & players+=($!)
done
sleep 3  # the players' start-up (filling their read-ahead) is not what is measured, as for VLC
p0=$(proc_ticks "$server")
sleep "$secs"
p1=$(proc_ticks "$server")
kill "${players[@]}" 2>/dev/null || true; wait "${players[@]}" 2>/dev/null || true
record udp_cpu_s vod "$(echo "scale=3; ($p1 - $p0) / $hz" | bc)"

# VLC: one process, the file demuxed once, N RTP destinations. Multicast groups on lo, which
# nobody joins: no receiver CPU in the way and no ICMP port-unreachable back.
ip link set lo multicast on
ip route replace 239.255.42.0/24 dev lo
dups=""
for i in $(seq "$streams"); do dups+="${dups:+,}dst=rtp{dst=239.255.42.$i,port=5004,mux=ts,ttl=1}"; done
vlc_home=$(mktemp -d); chown nobody "$vlc_home"; cp "$media/$movie" "$vlc_home/movie.ts"; chmod 644 "$vlc_home/movie.ts"
HOME=$vlc_home setpriv --reuid=nobody --regid=nogroup --clear-groups cvlc --loop --intf dummy --miface lo "$vlc_home/movie.ts" \
  --sout "#duplicate{$dups}" --sout-keep > "$work/vlc.log" 2>&1 &
vlc=$!; pids+=("$vlc")
sleep 2  # VLC's start-up is not what is measured
p0=$(proc_ticks "$vlc"); sleep "$secs"; p1=$(proc_ticks "$vlc")
kill "$vlc" 2>/dev/null; wait "$vlc" 2>/dev/null || true
record udp_cpu_s vlc_rtp "$(echo "scale=3; ($p1 - $p0) / $hz" | bc)"
rm -rf "$vlc_home"

nginx_procs="$nginx_master $(pgrep -P "$nginx_master" | tr '\n' ' ')"
bytes_per_s=$(awk -v r="$rate" 'BEGIN { printf "%d", r * 1e6 / 8 }')
curls=()
p0=$(proc_ticks $nginx_procs)
for i in $(seq "$streams"); do curl -s --limit-rate "$bytes_per_s" -o /dev/null "http://$addr:8083/$movie" & curls+=($!); done
sleep "$secs"
p1=$(proc_ticks $nginx_procs)
kill "${curls[@]}" 2>/dev/null || true; wait "${curls[@]}" 2>/dev/null || true
record udp_cpu_s nginx "$(echo "scale=3; ($p1 - $p0) / $hz" | bc)"
record udp cpu_seconds "$secs"
kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true
fi

if has loss; then
echo "== udp 2. loss recovery: $(basename "$loss_ts") by Write-Record over a veth with netem"
# 203.0.113.0/24 (TEST-NET-3): CI runs the smoke beside the loss test, whose veth has 198.51.100.0/24.
ip netns add "$ns"
ip link add vodb0 type veth peer name vodb1
ip link set vodb1 netns "$ns"
ip addr add 203.0.113.1/24 dev vodb0; ip link set vodb0 up
ip -n "$ns" addr add 203.0.113.2/24 dev vodb1; ip -n "$ns" link set vodb1 up; ip -n "$ns" link set lo up
mkdir -p "$work/loss"; cp "$loss_ts" "$work/loss/movie.ts"
loss_size=$(stat -c %s "$work/loss/movie.ts")
"$build/server/vod-server" --no-rdma --udp-port 7472 --bind 203.0.113.1 --media-dir "$work/loss" 2> "$work/loss-server.log" &
lserver=$!; pids+=("$lserver")
for _ in $(seq 600); do grep -q 'listening on' "$work/loss-server.log" && break; sleep 0.1; done
record udp_loss size_bytes "$loss_size"
for loss in 0 $losses; do
  tc qdisc replace dev vodb0 root netem loss "${loss}%" delay 1ms
  ip netns exec "$ns" tc qdisc replace dev vodb1 root netem loss "${loss}%" delay 1ms
  p0=$(proc_ticks "$lserver")
  TIMEFORMAT='%R %U %S'
  { time ip netns exec "$ns" "$client" get "rdma://203.0.113.1/movie.ts" -o "$work/got.ts" -q --transport udp --udp-port 7472 \
      --udp-rate 200 --log-level info 2> "$work/loss-client.log" || true; } 2> "$work/time.txt"
  p1=$(proc_ticks "$lserver")
  cmp -s "$work/loss/movie.ts" "$work/got.ts" && exact=yes || exact=no
  read -r real user sys < <(tail -n 1 "$work/time.txt")
  repair=$(sed -n 's/.*repair requests (\([0-9]*\) bytes).*/\1/p' "$work/loss-client.log" | tail -n 1)
  record udp_loss_seconds "$loss" "$real"
  record udp_loss_exact "$loss" "$exact"
  record udp_loss_goodput_mbps "$loss" "$(echo "scale=2; 8 * $loss_size / $real / 1000000" | bc)"
  record udp_loss_repair_bytes "$loss" "${repair:-0}"
  record udp_loss_server_cpu_s "$loss" "$(echo "scale=3; ($p1 - $p0) / $hz" | bc)"
  record udp_loss_client_cpu_s "$loss" "$(echo "$user + $sys" | bc)"
  rm -f "$work/got.ts"
done
kill "$lserver" 2>/dev/null; wait "$lserver" 2>/dev/null || true
fi

if has buffering; then
"$build/server/vod-server" --media-dir "$media" --bind "$addr" --port 7480 --udp-port 7471 2> "$work/server.log" &
server=$!; pids+=("$server")
for _ in $(seq 600); do grep -q 'listening on' "$work/server.log" && break; sleep 0.1; done
echo "== udp 3. buffering time: request to the first 2 s of $movie in hand (median of $tries)"
two_s=$(awk -v r="$rate" 'BEGIN { printf "%d", 2 * r * 1e6 / 8 }')
record udp buffer_bytes "$two_s"
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
stamp() { date +%s.%N; }
for how in udp rdma http; do
  for _ in $(seq "$tries"); do
    t0=$(stamp)
    case $how in
      udp) { "$client" play "rdma://$addr:7480/$movie" --unpaced --transport udp 2> /dev/null || true; } | head -c "$two_s" > /dev/null ;;
      rdma) { "$client" play "rdma://$addr:7480/$movie" --unpaced 2> /dev/null || true; } | head -c "$two_s" > /dev/null ;;
      http) curl -s -r "0-$((two_s - 1))" -o /dev/null "http://$addr:8083/$movie" || true ;;
    esac
    echo "$(stamp) - $t0" | bc
  done | median > "$work/median"
  record udp_buffering_s "$how" "$(cat "$work/median")"
done
kill "$server" 2>/dev/null || true
fi
kill "$nginx_master" 2>/dev/null || true
