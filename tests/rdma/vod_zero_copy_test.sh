#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Zero copy to the consumer: the library's direct transfers (zero_copy_test.cpp, with every buffer
# the pool gets back poisoned and checked), and vod-client get with --zero-copy auto and off:
# byte-exact both ways, to a file and through a pipe, and bytes_copied ÷ bytes_delivered from the
# client's own figures proves which path ran.
source "$(dirname "$0")/vod_test_lib.sh"
export VOD_POISON_BUFFERS=1   # a pool that finds its poison overwritten aborts the process
media=$work/media
mkdir -p "$media"
"$build/tests/rdma/make_pattern" $((48 * 1024 * 1024 + 5)) 1 "$media/pattern-a.bin"
start_server "$media"

step "the library: sequential, unaligned, seeking and closing reads into registered buffers, direct and forced off"
VOD_TEST_URI=$(uri) "$build/tests/rdma/vod_zero_copy_tests"
pass "libvodclient's direct transfers"

# copied_ratio LOG: bytes copied ÷ bytes delivered from get's summary line.
copied_ratio() {
  sed -n 's/.*delivered \([0-9]*\) B (copied \([0-9]*\) B, \([0-9]*\) direct reads).*/\1 \2 \3/p' "$1" | tail -n 1 |
    awk '{ if ($1 == 0) print "none"; else printf "%.4f %d\n", $2 / $1, $3 }'
}
for mode in auto off; do
  step "get --zero-copy $mode to a file, and through a pipe"
  "$client_bin" get "$(uri pattern-a.bin)" -o "$work/out-$mode" --quiet --zero-copy "$mode" --log-level info 2> "$work/get-$mode.err"
  cmp "$media/pattern-a.bin" "$work/out-$mode" || fail "get --zero-copy $mode: the file differs"
  "$client_bin" get "$(uri pattern-a.bin)" -o - --quiet --zero-copy "$mode" --chunk-kib 1024 | cmp - "$media/pattern-a.bin" ||
    fail "get --zero-copy $mode: the pipe differs"
  read -r ratio direct < <(copied_ratio "$work/get-$mode.err")
  echo "get --zero-copy $mode: bytes copied / delivered = $ratio, $direct direct Reads"
  if [[ $mode == auto ]]; then
    awk -v r="$ratio" 'BEGIN { exit !(r <= 0.05) }' || fail "get --zero-copy auto copied $ratio of the bytes it delivered (goal: at most 0.05)"
    [[ $direct -gt 0 ]] || fail "get --zero-copy auto made no direct Read"
  else
    awk -v r="$ratio" 'BEGIN { exit !(r == 1) }' || fail "get --zero-copy off copied $ratio of its bytes, not all of them"
    [[ $direct -eq 0 ]] || fail "get --zero-copy off made $direct direct Reads"
  fi
  pass "get --zero-copy $mode: byte-exact, copied $ratio of the bytes"
done
"$client_bin" get "$(uri pattern-a.bin)" -o - --zero-copy sometimes 2> "$work/bad.err" >/dev/null && fail "--zero-copy sometimes was accepted"
grep -q -- "--zero-copy must be auto" "$work/bad.err" || fail "a bad --zero-copy value got no clear error: $(cat "$work/bad.err")"
pass "a bad --zero-copy value is refused with what to use"

# vod-proxy: bodies from registered blocks, both ways; a client that leaves mid-body; clients that
# never read hold at most --zero-copy-buffers blocks (the metric says so), and the stall limit
# closes them and gives the blocks back.
for mode in auto off; do
  http_port=$(free_port)
  "$build/proxy/vod-proxy" --server "$(uri)" --listen "127.0.0.1:$http_port" --zero-copy "$mode" --zero-copy-buffers 8 \
    --stall-timeout 4 --log-level warn 2> "$work/proxy-$mode.log" &
  proxy_pid=$!
  cleanup_hooks+=("kill $proxy_pid 2>/dev/null")
  base=http://127.0.0.1:$http_port
  for _ in $(seq 600); do curl -s -o /dev/null "$base/" && break; sleep 0.1; done
  metric() { curl -s "$base/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
  step "vod-proxy --zero-copy $mode: a whole body and a range, byte-exact"
  curl -s -o "$work/body" "$base/movies/pattern-a.bin"
  cmp "$media/pattern-a.bin" "$work/body" || fail "proxy --zero-copy $mode: the body differs"
  curl -s -H "Range: bytes=1234567-9999999" -o "$work/range" "$base/movies/pattern-a.bin"
  dd if="$media/pattern-a.bin" iflag=skip_bytes,count_bytes skip=1234567 count=$((9999999 - 1234567 + 1)) status=none | cmp - "$work/range" ||
    fail "proxy --zero-copy $mode: the range differs"
  delivered=$(metric vod_proxy_delivered_bytes_total); copied=$(metric vod_proxy_copied_bytes_total)
  ratio=$(awk -v c="$copied" -v d="$delivered" 'BEGIN { printf "%.4f", c / d }')
  echo "vod-proxy --zero-copy $mode: copied $copied of $delivered bytes delivered ($ratio)"
  if [[ $mode == auto ]]; then
    awk -v r="$ratio" 'BEGIN { exit !(r <= 0.05) }' || fail "vod-proxy --zero-copy auto copied $ratio of its bytes"
  else
    [[ $copied == "$delivered" ]] || fail "vod-proxy --zero-copy off copied $copied of $delivered bytes, not all"
  fi
  pass "vod-proxy --zero-copy $mode: byte-exact, copied $ratio"

  step "vod-proxy --zero-copy $mode: a client that closes mid-body, then ten that never read"
  curl -s "$base/movies/pattern-a.bin" | head -c 3000000 > /dev/null || true
  for i in $(seq 10); do
    exec {fd}<>/dev/tcp/127.0.0.1/"$http_port"
    printf 'GET /movies/pattern-a.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' >&"$fd"
    eval "never_read_$i=$fd"
  done
  sleep 2
  held=$(curl -s "$base/metrics" | awk '$1 == "vod_proxy_registered_buffers{state=\"held\"}" { print $2 }')
  allocated=$(curl -s "$base/metrics" | awk '$1 == "vod_proxy_registered_buffers{state=\"allocated\"}" { print $2 }')
  echo "ten stalled clients: $held registered blocks held, $allocated allocated (bound 8)"
  [[ -n $held && $held -le 8 && $allocated -le 8 ]] || fail "registered blocks beyond the bound: $held held, $allocated allocated"
  curl -s -o "$work/body2" "$base/movies/pattern-a.bin"  # still served, in plain memory beyond the bound
  cmp "$media/pattern-a.bin" "$work/body2" || fail "a body served while the registered blocks are all held differs"
  for _ in $(seq 100); do
    held=$(curl -s "$base/metrics" | awk '$1 == "vod_proxy_registered_buffers{state=\"held\"}" { print $2 }')
    [[ $held == 0 ]] && break
    sleep 0.2
  done
  [[ $held == 0 ]] || fail "the stall limit did not give back the blocks: $held still held"
  for i in $(seq 10); do eval "exec {never_read_$i}>&-"; done
  pass "vod-proxy --zero-copy $mode: blocks held stay within the bound, and the stall limit gives them back"
  kill "$proxy_pid"; wait "$proxy_pid" 2>/dev/null || true
done
stop_server
