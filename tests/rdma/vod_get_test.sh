#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# VoD core: byte-exact 'vod-client get' of generated movies: 0 bytes, 1 byte, a size that is not a
# multiple of the chunk, real media in three containers, ranges (get --range), and a movie of more
# than 1 GiB, registered whole, read across the 1 GiB mark to its end.
source "$(dirname "$0")/vod_test_lib.sh"
# The big one lives in the build tree (host disk), not in the guest's memory-backed TMPDIR; the
# test_data fixture made it natively (make-test-data.sh). The media directory is there too, so that
# it can be linked in.
big=$build/test-data/pattern-1100MiB.bin
[[ -f $big ]] || fail "$big is missing: the test_data fixture makes it (ctest -R test_data_fixture)"
host_media get-media
pattern=$build/tests/rdma/make_pattern
: > "$media/zero.bin"
"$pattern" 1 1 "$media/one.bin"
"$pattern" $((5 * 1024 * 1024 + 12345)) 2 "$media/odd-size.bin"
for f in test-480p-60s.ts test-480p-60s.mp4 test-480p-60s.mkv; do cp "$test_media/$f" "$media/"; done
ln "$big" "$media/big.bin" || fail "cannot hard-link $big into $media"
ln -s odd-size.bin "$media/link.bin"      # a symlink that stays inside is served like the file
ln -s "$big" "$media/outside.bin"         # one that leaves the media directory is skipped
mkdir -p "$media/sub dir/deeper" "$media/.hidden dir"
"$pattern" 70001 4 "$media/sub dir/deeper/nested #1.bin"  # a folder is scanned: the movie is its path
: > "$media/.hidden"                      # a hidden file is skipped
: > "$media/.hidden dir/x.bin"            # and so is a hidden folder

start_server "$media"
grep -q "generation 1: 9 movies" "$server_log" || fail "expected 9 movies: $(grep generation "$server_log")"
grep -q "skipping outside.bin: a symlink to .*, outside the media directory" "$server_log" || fail "the symlink out was not refused"
"$client_bin" list "$(uri)" > "$work/list"
grep -q "^sub dir/deeper/nested #1.bin " "$work/list" || fail "vod-client list does not show the nested path: $(cat "$work/list")"
"$client_bin" get "$(uri "sub%20dir/deeper/nested%20%231.bin")" -o "$work/out"
cmp "$media/sub dir/deeper/nested #1.bin" "$work/out" || fail "the nested movie differs"
"$client_bin" get "$(uri link.bin)" -o "$work/out" --quiet
cmp "$media/odd-size.bin" "$work/out" || fail "the symlink inside differs"
pass "a nested movie and a symlink inside byte-exact; the symlink out, hidden files and folders skipped"


for f in zero.bin one.bin odd-size.bin test-480p-60s.ts test-480p-60s.mp4 test-480p-60s.mkv; do
  step "get $f"
  "$client_bin" get "$(uri "$f")" -o "$work/out" --chunk-kib 64
  cmp "$media/$f" "$work/out" || fail "$f differs"
  pass "$f byte-identical ($(stat -c %s "$work/out") bytes)"
done

step "play --start 30 into a player: the bytes from the keyframe ffprobe finds, decodable"
ts=$media/test-480p-60s.ts
# ffprobe's keyframe at or before 30 s, and the frames the file decodes to from it, found natively
# before the guest started (make-expectations.sh): the played bytes must be exactly those.
pos=$(cat "$(expected test-480p-60s.ts.keyframe-30s)")
frames=$(cat "$(expected test-480p-60s.ts.from-30s.video-frames)")
"$client_bin" play "$(uri test-480p-60s.ts)" --start 30 --unpaced > "$work/played.ts"
tail -c +$((pos + 1)) "$ts" | cmp - "$work/played.ts" || fail "play --start 30 did not deliver the file from byte $pos"
[[ $frames -ge 750 ]] || fail "the file decodes to only $frames frames from the 30 s keyframe on"
pass "play --start 30: the file from byte $pos (ffprobe's keyframe), whose $frames frames decode"

step "get --range: closed, open and suffix ranges byte-exact; a range past the end and a malformed one refused"
f=$media/odd-size.bin
size=$(stat -c %s "$f")
# same_bytes FIRST LENGTH: $work/out is exactly LENGTH bytes of $f from byte FIRST (cmp, no pipe
# whose writer pipefail would blame for the reader's early exit).
same_bytes() { [[ $(stat -c %s "$work/out") -eq $2 ]] && cmp -s -n "$2" -i "$1:0" "$f" "$work/out"; }
"$client_bin" get "$(uri odd-size.bin)" -o "$work/out" --quiet --range 1000-2000
same_bytes 1000 1001 || fail "--range 1000-2000 is not bytes 1000..2000 ($(stat -c %s "$work/out") bytes)"
"$client_bin" get "$(uri odd-size.bin)" -o "$work/out" --quiet --range $((size - 70000))-
same_bytes $((size - 70000)) 70000 || fail "--range FIRST- is not the file's tail"
"$client_bin" get "$(uri odd-size.bin)" -o "$work/out" --quiet --range=-12345 --chunk-kib 8
same_bytes $((size - 12345)) 12345 || fail "--range=-12345 is not the last 12345 bytes"
expect "a range past the end" 6 "lies past the end of 'odd-size.bin' ($size bytes)" "$client_bin" get "$(uri odd-size.bin)" -o "$work/x" --range "$size-"
expect "a malformed range" 2 "is not FIRST-LAST" "$client_bin" get "$(uri odd-size.bin)" -o "$work/x" --range 5-x
pass "ranges byte-exact; refusals with exit 6 and 2"

step "big.bin (1100 MiB, registered whole): from 1000 MiB to its end, across the 1 GiB mark, and its first MiB, through a pipe"
# Compared against the pattern made again as it streams, not the file: a 1.1 GB read back over the
# guest's 9p root once returned end-of-file 35 MiB early. The whole 1100 MiB took 90-140 s to
# stream under TCG; these ranges hold what is particular to a movie over 1 GiB (offsets past 2^30,
# the end of a region that size), and the long read's throughput is a benchmark's figure.
big_size=$((1100 * 1024 * 1024)) from=$((1000 * 1024 * 1024))
start=$(date +%s.%N)
"$client_bin" get "$(uri big.bin)" -o - --quiet --chunk-kib 1024 --depth 16 --range "$from-" |
  "$pattern" $((big_size - from)) 3 --check "$from" || fail "big.bin from byte $from differs from the pattern it was made from"
secs=$(echo "$(date +%s.%N) - $start" | bc)
"$client_bin" get "$(uri big.bin)" -o - --quiet --range 0-1048575 | "$pattern" 1048576 3 --check || fail "big.bin's first MiB differs"
pass "big.bin byte-identical: its last $(( (big_size - from) >> 20 )) MiB in ${secs}s, and its first MiB"
stop_server
