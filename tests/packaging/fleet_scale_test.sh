#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A fleet at scale natively, over Write-Record (no RDMA device: vod-server --no-rdma, clients with
# --transport udp), with a real etcd on loopback.
# Placement: four members, six bench processes of 15 viewers each choosing 12 movies by Zipf's law,
# started half a second apart. With bounded loads (the default, epsilon 0.15) the busiest member
# carries less than with the rendezvous order alone (epsilon=0), measured in the same run with the
# same choices; both ratios are printed (the goal itself is a benchmark's, docs/benchmarks.md 14).
# Failover: two members holding the same movie. A get paced by the server (--udp-rate) loses the
# member serving it, three ways:
#  - kill -9: nothing completes any more; the client's deadline (?failover-ms, 1 s by default) finds
#    it long before the lease expires or Write-Record's ten repairs give up (about 15 s);
#  - SIGSTOP: the process no longer answers (its heartbeat stops too);
#  - SIGTERM: the member marks itself draining in its status words, the client moves at once, and
#    the member exits as soon as no request came for a second, long before --drain-seconds.
# Every output is byte-exact, and the time from the failure to the client's "reconnected" line is
# printed; the bound on it is generous (see below), the figure itself belongs to the benchmark.
source "$(dirname "$0")/fleet_lib.sh"

mkdir -p "$work/media" "$work/library"
head -c $((3 * 1024 * 1024 + 7)) /dev/urandom > "$work/media/movie.bin"
for i in $(seq -w 1 12); do head -c $((1024 * 1024 + i)) /dev/urandom > "$work/library/title-$i.bin"; done
udp_port=$(free_port) rdma_port=$(free_port)
start_etcd

declare -A server_pid
start_server() {  # start_server N [MEDIA]: a member on 127.0.0.N with a 10 s lease (a dead member's record outlives the failover)
  local n=$1 media=${2:-$work/media}
  : > "$work/server-$n.log"
  "$build/server/vod-server" --no-rdma --media-dir "$media" --bind "127.0.0.$n" --port "$rdma_port" --udp-port "$udp_port" \
    --cluster "etcd://127.0.0.1:$etcd_port/failover" --cluster-ttl 10 --drain-seconds 30 2> "$work/server-$n.log" &
  server_pid[$n]=$!
  pids+=("${server_pid[$n]}")
  for _ in $(seq 100); do grep -q 'listening on' "$work/server-$n.log" && break; sleep 0.1; done
  for _ in $(seq 100); do [[ -n $(etcdctl get --print-value-only "/failover/members/127.0.0.$n:$rdma_port") ]] && return 0; sleep 0.1; done
  fail "member $n did not register"
}
ms_of() { date -d "$1" +%s%3N; }  # a log line's UTC stamp, in ms since the epoch

# failover HOW: a paced get (the server sends at 4 Mbit/s: about 6 s for the movie) loses its member
# after 1 MiB, by HOW (kill, stop or term); prints the ms from the failure to "reconnected".
failover() {
  local how=$1 out=$work/$1.bin log=$work/get-$1.log
  start_server 11
  start_server 12
  "$build/client/vod-client" get "rdma+etcd://127.0.0.1:$etcd_port/movie.bin?prefix=/failover" -o "$out" --transport udp \
    --udp-port "$udp_port" --udp-rate 4 --quiet --log-level info --connect-timeout 2 2> "$log" &
  local get=$!
  for _ in $(seq 300); do (($(stat -c %s "$out" 2> /dev/null || echo 0) >= 1024 * 1024)) && break; sleep 0.05; done
  local member
  member=$(grep -o "'movie.bin' on 127\.0\.0\.[0-9]*" "$log" | head -n 1 | sed 's/.*\.//')
  [[ -n $member ]] || fail "$how: the get did not say which member it reads from: $(head -n 5 "$log")"
  local at
  at=$(date +%s%3N)
  case $how in
    kill) kill -KILL "${server_pid[$member]}" ;;
    stop) kill -STOP "${server_pid[$member]}" ;;
    term) kill -TERM "${server_pid[$member]}" ;;
  esac
  wait "$get" || fail "$how: the get failed: $(tail -n 3 "$log")"
  cmp "$work/media/movie.bin" "$out" || fail "$how: the output differs from the movie"
  local line
  line=$(grep -m 1 "reconnected to" "$log") || fail "$how: the get never reconnected: $(grep -i -m 3 "lost\|cluster" "$log")"
  local took=$(($(ms_of "${line%% *}") - at))
  echo "FIGURE fleet_udp_failover how=$how reconnected_ms=$took"
  echo "    $how of member $member: reconnected after ${took} ms ($(grep -o -m 1 "lost ([^;]*" "$log" | cut -c 1-160))"
  # The deadline is 1 s and a reconnect over loopback takes milliseconds: 2 s here. 10 s is 5 times
  # that, for a loaded machine, and still below the 15 s that Write-Record's own repairs take to
  # give up, which is what a client without the deadline waits.
  ((took < 10000)) || fail "$how: $took ms from the failure to the reconnect"
  if [[ $how == term ]]; then
    grep -q "draining" "$log" || fail "term: the client did not say the member was draining: $(grep -m 2 lost "$log")"
    # The member stays while its viewers read the drain, then exits: no request for a second.
    for _ in $(seq 100); do kill -0 "${server_pid[$member]}" 2> /dev/null || break; sleep 0.1; done
    ! kill -0 "${server_pid[$member]}" 2> /dev/null || fail "term: the draining member was still up 10 s after its viewer left"
  fi
  for n in 11 12; do
    kill -CONT "${server_pid[$n]}" 2> /dev/null || true
    kill -KILL "${server_pid[$n]}" 2> /dev/null || true
    wait "${server_pid[$n]}" 2> /dev/null || true
  done
  etcdctl del --prefix /failover/ > /dev/null
}

step "placement: 90 Zipf viewers from six processes over four members, with bounded loads and without"
for n in 21 22 23 24; do start_server "$n" "$work/library"; done
# zipf_run EPSILON: six bench processes (15 viewers each, 1 Mbit/s, 8 s, Zipf s = 1 over the fleet's
# 12 movies, seeds 1-6) half a second apart; prints the viewers per member, most first.
zipf_run() {
  local eps=$1 benches=()
  for p in 1 2 3 4 5 6; do
    "$build/client/vod-client" bench "rdma+etcd://127.0.0.1:$etcd_port/?prefix=/failover&epsilon=$eps" --clients 15 --duration 8 \
      --zipf 1 --seed "$p" --rate 1 --chunk-kib 64 --readahead-kib 64 --depth 2 --transport udp --udp-port "$udp_port" \
      --log-level info > "$work/zipf-$eps-$p.out" 2> "$work/zipf-$eps-$p.log" &
    benches+=($!)
    sleep 0.5
  done
  for b in "${benches[@]}"; do wait "$b" || fail "a Zipf bench with epsilon=$eps failed: $(grep -h -v ' INFO ' "$work"/zipf-"$eps"-*.log | tail -n 3)"; done
  cat "$work"/zipf-"$eps"-*.log | grep -o "' on 127\.0\.0\.[0-9]*:[0-9]* (" | awk '{ print $3 }' | sort | uniq -c | sort -rn
}
zipf_run 0.15 > "$work/zipf-bounded"
zipf_run 0 > "$work/zipf-unbounded"
ratio() { awk '{ n += $1; if ($1 > m) m = $1; k++ } END { if (k < 4) { k = 4 } printf "%.2f", m / (n / k) }' "$1"; }
total=$(awk '{ n += $1 } END { print n + 0 }' "$work/zipf-bounded")
[[ $total -eq 90 && $(awk '{ n += $1 } END { print n + 0 }' "$work/zipf-unbounded") -eq 90 ]] ||
  fail "not every viewer was placed: $(tr '\n' ' ' < "$work/zipf-bounded") / $(tr '\n' ' ' < "$work/zipf-unbounded")"
bounded=$(ratio "$work/zipf-bounded") unbounded=$(ratio "$work/zipf-unbounded")
echo "    bounded loads: $(tr -s ' \n' ' ' < "$work/zipf-bounded")-> busiest / average $bounded"
echo "    rendezvous alone: $(tr -s ' \n' ' ' < "$work/zipf-unbounded")-> busiest / average $unbounded"
echo "FIGURE fleet_zipf viewers=90 processes=6 members=4 bounded_max_over_avg=$bounded unbounded_max_over_avg=$unbounded"
# The same choices, so the same run's rendezvous order is the baseline: with a fifth of the viewers
# on the most popular title, bounded loads must do better than it.
awk -v b="$bounded" -v u="$unbounded" 'BEGIN { exit !(b < u) }' || fail "bounded loads ($bounded) did not beat the rendezvous order alone ($unbounded)"
for n in 21 22 23 24; do kill -KILL "${server_pid[$n]}"; wait "${server_pid[$n]}" 2> /dev/null || true; done
etcdctl del --prefix /failover/ > /dev/null
pass "the busiest member carries $bounded x the average with bounded loads, $unbounded x with the rendezvous order alone"

step "kill -9 of the member serving a paced get"
failover kill
pass "kill -9: byte-exact on the other member"
step "SIGSTOP of the member serving a paced get"
failover stop
pass "SIGSTOP: byte-exact on the other member"
step "SIGTERM (a drain) of the member serving a paced get"
failover term
pass "drain: the viewer moved before the member stopped, byte-exact, and the member exited once it was left"
