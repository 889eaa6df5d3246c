#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# VoD core under load: 50 concurrent clients stream, each on its own connection; half of them are
# killed with SIGKILL mid-read, and the other half still receive every byte exactly. Nothing is
# asserted on time, so it runs beside other tests. The server's CPU time over the run is printed
# (Soft-RoCE answers Reads in the kernel, not in the server).
source "$(dirname "$0")/vod_test_lib.sh"
media=$work/media
mkdir -p "$media"
"$build/tests/rdma/make_pattern" $((4 * 1024 * 1024 + 333)) 5 "$media/movie.bin"
start_server "$media"
ticks_before=$(server_cpu_ticks "$server_pid")

clients=${VOD_LOAD_CLIENTS:-50}
step "$clients clients, each paced at 1.5 Mbit/s over a 4 MiB movie (about 22 s)"
pids=()
for i in $(seq "$clients"); do
  "$client_bin" play "$(uri movie.bin)" --rate 1.5 --burst 0 --chunk-kib 64 --readahead-kib 256 > "$work/out.$i" 2> "$work/err.$i" &
  pids+=($!)
done
cleanup_hooks+=("kill -KILL ${pids[*]} 2>/dev/null")
# Each even client is killed as soon as it has its first bytes, whichever comes first, so it dies
# mid-read however slowly a loaded guest starts 50 processes (the bound is generous: 50 starts took
# seconds under TCG, and 120 s is far beyond that).
killed=0 alive=$(seq 2 2 "$clients")
for _ in $(seq 1200); do
  left=
  for i in $alive; do
    if [[ -s $work/out.$i ]]; then
      kill -KILL "${pids[$((i - 1))]}" 2>/dev/null || fail "client $i ended before it was killed: $(cat "$work/err.$i")"
      killed=$((killed + 1))
    else
      left+=" $i"
    fi
  done
  alive=$left
  [[ -z $alive ]] && break
  sleep 0.1
done
[[ -z $alive ]] || fail "clients$alive received nothing in 120 s"
step "killed $killed clients mid-read; waiting for the other $((clients - killed))"
failed=0
for i in $(seq 1 2 "$clients"); do
  if ! wait "${pids[$((i - 1))]}"; then
    echo "client $i failed: $(cat "$work/err.$i")"
    failed=$((failed + 1))
  elif ! cmp -s "$media/movie.bin" "$work/out.$i"; then
    echo "client $i: output differs ($(stat -c %s "$work/out.$i") bytes)"
    failed=$((failed + 1))
  fi
done
for i in $(seq 2 2 "$clients"); do wait "${pids[$((i - 1))]}" 2>/dev/null || true; done
[[ $failed -eq 0 ]] || fail "$failed surviving clients did not get the movie byte-exact"
pass "$((clients - killed)) surviving clients byte-exact while $killed were killed mid-read"

# The server noticed every departure, and still serves.
for _ in $(seq 600); do [[ $(grep -c 'disconnect ' "$server_log") -ge $clients ]] && break; sleep 0.1; done
[[ $(grep -c 'disconnect ' "$server_log") -ge $clients ]] || fail "the server logged $(grep -c 'disconnect ' "$server_log") disconnects, expected $clients"
"$client_bin" get "$(uri movie.bin)" -o "$work/after" && cmp "$media/movie.bin" "$work/after" || fail "serving after the load"
ticks_after=$(server_cpu_ticks "$server_pid")
hz=$(getconf CLK_TCK)
echo "server CPU while $clients clients streamed: $(echo "scale=3; ($ticks_after - $ticks_before) / $hz" | bc) s"
pass "server still serving; every disconnect logged"
stop_server
