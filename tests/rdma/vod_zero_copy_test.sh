#!/usr/bin/env bash
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
stop_server
