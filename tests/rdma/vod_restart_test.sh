#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# VoD core: the server is killed and restarted under a 'vod-client get'; the client reconnects with
# backoff, re-drives its Reads against the new registration (new rkeys) and the download completes
# byte-identical. The stream's state lives in the client, so the server needs none.
source "$(dirname "$0")/vod_test_lib.sh"
export VOD_POISON_BUFFERS=1   # zero copy: a Read landing in a buffer handed back aborts the client
media=$work/media
mkdir -p "$media"
"$build/tests/rdma/make_pattern" $((160 * 1024 * 1024 + 99)) 9 "$media/movie.bin"
export VOD_TEST_PORT=$((20000 + RANDOM % 20000))   # the restarted server must come back on the same port
start_server "$media"

step "get at full speed, paced down to ~10 MB/s so the restart lands mid-download"
"$client_bin" get "$(uri movie.bin)" -o "$work/out" --quiet --chunk-kib 128 --depth 2 --readahead-kib 256 --reconnect-for 60 --log-level info 2> "$work/client.err" &
client=$!
cleanup_hooks+=("kill -KILL $client 2>/dev/null")
sleep 3
size_at_kill=$(stat -c %s "$work/out")
step "SIGKILL the server after $size_at_kill bytes; restart it"
crash_and_restart_server "$media"
rc=0; wait "$client" || rc=$?
cat "$work/client.err"
[[ $rc -eq 0 ]] || fail "get exited $rc across the restart"
grep -q "reconnected to $addr:$port" "$work/client.err" || fail "the client did not report a reconnect"
[[ $size_at_kill -lt $(stat -c %s "$media/movie.bin") ]] || fail "the download finished before the restart; the test proved nothing"
cmp "$media/movie.bin" "$work/out" || fail "the download differs after the restart"
pass "byte-identical across a server restart (killed at $size_at_kill of $(stat -c %s "$media/movie.bin") bytes)"
stop_server
