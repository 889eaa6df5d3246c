#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The first end-to-end proof (Foundation issue): one process registers a buffer and advertises it in
# accept private data; another connects, decodes the descriptor and RDMA-Reads the whole buffer in
# pipelined chunks; the bytes must be identical. Malformed and unknown-movie requests must be
# rejected with their reasons. Runs where VOD_RDMA_ADDR is an address on an RDMA device.
set -euo pipefail
peer=$1
addr=${VOD_RDMA_ADDR:?run through tests/softroce/softroce-run}
work=$(mktemp -d)
server_pid=
cleanup() {
  [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
step() { echo "--- $*"; }

start_server() {
  local file=$1
  : > "$work/serve.out"
  "$peer" serve --file "$file" --bind "$addr" --port 0 > "$work/serve.out" 2> "$work/serve.err" &
  server_pid=$!
  for _ in $(seq 300); do
    port=$(sed -n 's/^READY port=//p' "$work/serve.out")
    [[ -n $port ]] && return 0
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.err"; echo "FAIL: server exited before listening"; exit 1; }
    sleep 0.1
  done
  echo "FAIL: server did not listen within 30 s"; exit 1
}

stop_server() {
  kill -TERM "$server_pid"
  local rc=0
  wait "$server_pid" || rc=$?
  server_pid=
  sed 's/^/    server: /' "$work/serve.err"
  [[ $rc -eq 0 ]] || { echo "FAIL: server exited $rc after SIGTERM"; exit 1; }
}

# Sizes: not a multiple of any chunk, and bigger than the ring so slots are reused many times.
head -c $((5 * 1024 * 1024 + 12345)) /dev/urandom > "$work/movie.bin"
start_server "$work/movie.bin"
step "server on $addr:$port"

for spec in "65536 8" "8192 16" "1048576 4"; do
  read -r chunk depth <<< "$spec"
  step "fetch with $depth reads of $chunk bytes in flight"
  "$peer" fetch --host "$addr" --port "$port" --name movie.bin --out "$work/out.bin" --chunk "$chunk" --depth "$depth"
  cmp "$work/movie.bin" "$work/out.bin"
  echo "PASS: byte-identical ($(stat -c %s "$work/out.bin") bytes)"
done

expect_reject() {
  local label=$1 pattern=$2; shift 2
  local rc=0 out
  out=$("$@") || rc=$?
  echo "$out"
  [[ $rc -eq 3 ]] || { echo "FAIL: $label: expected a reject (exit 3), got exit $rc"; exit 1; }
  grep -q -- "$pattern" <<< "$out" || { echo "FAIL: $label: reject does not match '$pattern'"; exit 1; }
  echo "PASS: $label rejected with its reason"
}

step "malformed connect requests"
# Bad magic, then a valid header with an unknown request kind, then an unsupported version.
expect_reject "bad magic" "reject code 3 (malformed request): connect request: magic 0xdeadbeef" \
  "$peer" raw --host "$addr" --port "$port" --hex "deadbeef01010038"
# 56 bytes: the 8-byte header, kind 9, and 47 zero bytes.
good="52564f440101003809$(printf '00%.0s' $(seq 47))"
expect_reject "unknown kind" "reject code 3 (malformed request): connect request: unknown request kind 9" \
  "$peer" raw --host "$addr" --port "$port" --hex "$good"
expect_reject "version 255" "reject code 2 (unsupported version): connect request: protocol version 255 not supported" \
  "$peer" raw --host "$addr" --port "$port" --hex "52564f44ff010038"
expect_reject "empty private data" "reject code 3 (malformed request)" \
  "$peer" raw --host "$addr" --port "$port" --hex ""

step "unknown movie"
expect_reject "unknown movie" "reject code 1 (unknown movie): no movie with that name; this server has 'movie.bin'" \
  "$peer" fetch --host "$addr" --port "$port" --name nosuch.mp4 --out "$work/none"

step "the server still serves after every reject"
"$peer" fetch --host "$addr" --port "$port" --name movie.bin --out "$work/out.bin" --chunk 262144 --depth 16
cmp "$work/movie.bin" "$work/out.bin" && echo "PASS: byte-identical after rejects"
stop_server

step "a one-byte movie"
head -c 1 /dev/urandom > "$work/tiny.bin"
start_server "$work/tiny.bin"
"$peer" fetch --host "$addr" --port "$port" --name tiny.bin --out "$work/tiny.out" --chunk 65536 --depth 16
cmp "$work/tiny.bin" "$work/tiny.out" && echo "PASS: one byte"
stop_server
echo "PASS: smoke exchange"
