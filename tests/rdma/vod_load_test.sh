#!/usr/bin/env bash
# VoD core under load: 50 concurrent clients stream, each on its own connection; half of them are
# killed with SIGKILL mid-read, and the other half still receive every byte exactly. The server's
# CPU time over the run is printed (Soft-RoCE answers Reads in the kernel, not in the server).
source "$(dirname "$0")/vod_test_lib.sh"
media=$work/media
mkdir -p "$media"
"$build/tests/rdma/make_pattern" $((4 * 1024 * 1024 + 333)) 5 "$media/movie.bin"
start_server "$media"
ticks_before=$(server_cpu_ticks "$server_pid")

clients=${VOD_LOAD_CLIENTS:-50}
step "$clients clients, each paced at 1 Mbit/s over a 4 MiB movie (about 34 s)"
pids=()
for i in $(seq "$clients"); do
  "$client_bin" play "$(uri movie.bin)" --rate 1 --burst 0 --chunk-kib 64 --readahead-kib 256 > "$work/out.$i" 2> "$work/err.$i" &
  pids+=($!)
done
cleanup_hooks+=("kill -KILL ${pids[*]} 2>/dev/null")
# Wait until every client is connected and has data, then kill the even ones.
for _ in $(seq 300); do
  connected=$(grep -c 'accept .*movie' "$server_log" || true)
  [[ $connected -ge $clients ]] && break
  sleep 0.1
done
[[ $connected -ge $clients ]] || fail "only $connected of $clients clients were accepted"
# ... and every client has received its first bytes.
for i in $(seq "$clients"); do
  for _ in $(seq 100); do [[ -s $work/out.$i ]] && break; sleep 0.1; done
done
killed=0
for i in $(seq 2 2 "$clients"); do
  kill -KILL "${pids[$((i - 1))]}" 2>/dev/null || fail "client $i ended before it was killed: $(cat "$work/err.$i")"
  killed=$((killed + 1))
done
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
for _ in $(seq 100); do [[ $(grep -c 'disconnect ' "$server_log") -ge $clients ]] && break; sleep 0.1; done
[[ $(grep -c 'disconnect ' "$server_log") -ge $clients ]] || fail "the server logged $(grep -c 'disconnect ' "$server_log") disconnects, expected $clients"
"$client_bin" get "$(uri movie.bin)" -o "$work/after" && cmp "$media/movie.bin" "$work/after" || fail "serving after the load"
ticks_after=$(server_cpu_ticks "$server_pid")
hz=$(getconf CLK_TCK)
echo "server CPU while $clients clients streamed: $(echo "scale=3; ($ticks_after - $ticks_before) / $hz" | bc) s"
pass "server still serving; every disconnect logged"
stop_server
