#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The segment cache's start: a library ten times the guest's memory (sparse files that begin with
# real MPEG-TS) reaches "listening" without reading movie bodies (the page cache holds only their
# headers); keyframe indexes are built after start, published in place (a client seeks with one),
# kept in --state-dir, reused after a kill -9, and rebuilt for a file that changed.
source "$(dirname "$0")/vod_test_lib.sh"
ts=$test_media/test-480p-60s.ts

step "a library of 10 x 4 GiB (10x the guest's memory), sparse, each starting and ending with a real TS"
# On the host's file system (the guest's root over 9p), whose pages the guest's cache shows.
big=$build/test-data/cache-start-library
rm -rf "$big"
mkdir -p "$big"
for i in $(seq -w 1 10); do cp "$ts" "$big/huge$i.ts"; done
# The same ten files at their real size first: the figure a library 550 times larger is compared with.
sync
echo 3 > /proc/sys/vm/drop_caches
started=$(date +%s.%N)
start_server "$big" --cache-size 64M --state-dir ""
small_secs=$(echo "$(date +%s.%N) - $started" | bc)
stop_server
# 4 GiB each: the real TS at the start and again at the end (where a TS probe looks for the last
# timestamps), a hole between.
ts_size=$(stat -c %s "$ts")
for f in "$big"/huge*.ts; do
  truncate -s 4G "$f"
  dd if="$ts" of="$f" bs=1M oflag=seek_bytes seek=$(( (4 << 30) - ts_size )) conv=notrunc status=none
done
library=$(( $(stat -c %s "$big"/huge*.ts | paste -sd+ | bc) ))
memory=$(awk '/MemTotal/ { printf "%d", $2 * 1024 }' /proc/meminfo)
[[ $library -ge $((10 * memory)) ]] || fail "the library ($library bytes) is not 10x the guest's memory ($memory)"
sync
echo 3 > /proc/sys/vm/drop_caches
started=$(date +%s.%N)
start_server "$big" --cache-size 64M --state-dir "$work/state-big"
secs=$(echo "$(date +%s.%N) - $started" | bc)
resident=0
read_whole=0
for f in "$big"/huge*.ts; do
  pages=$(fincore --bytes --noheadings --output RES "$f" | tr -d ' ')
  resident=$((resident + pages))
  [[ $pages -gt $((64 << 20)) ]] && read_whole=$((read_whole + 1))
done
# The indexer starts after "listening" and reads one file at a time: at most one may have grown.
[[ $read_whole -le 1 ]] || fail "$read_whole files have more than 64 MiB in the page cache after start: their bodies were read"
grep -q "listening on" "$server_log" || fail "no listening line"
listening_line=$(grep -n "listening on" "$server_log" | cut -d: -f1)
first_index=$(grep -n "index of" "$server_log" | head -1 | cut -d: -f1 || true)  # none yet is fine
[[ -z $first_index || $listening_line -lt $first_index ]] || fail "an index was built before the server was listening"
pass "$((library >> 30)) GiB listed in ${secs}s (the same files at $(($(stat -c %s "$ts") >> 20)) MiB each: ${small_secs}s); $((resident >> 20)) MiB of it in the page cache"
stop_server
rm -rf "$big"

step "indexes are built after start, published in place, and a client seeks with them"
media=$work/media
mkdir -p "$media"
cp "$ts" "$media/a.ts"
cp "$test_media/test-480p-60s.mp4" "$media/b.mp4"
state=$work/state
start_server "$media" --cache-size 16M --segment-size 1M --state-dir "$state"
grep -q "a.ts: mpegts h264, 60 s, index pending" "$server_log" || fail "a.ts was not listed with its index pending: $(grep a.ts "$server_log")"
for _ in $(seq 300); do
  [[ $(grep -c "index of .* ready" "$server_log") -ge 2 ]] && break
  sleep 0.1
done
[[ $(grep -c "index of .* ready" "$server_log") -ge 2 ]] || fail "the indexes were not ready within 30 s: $(grep cache "$server_log")"
[[ $(find "$state/indexes" -name '*.rvki' | wc -l) -eq 2 ]] || fail "the state directory holds $(ls "$state/indexes")"
pos=$(cat "$(expected test-480p-60s.ts.keyframe-30s)")  # ffprobe's last keyframe at or before 30 s, found natively
"$client_bin" play "$(uri a.ts)" --start 30 --unpaced > "$work/played.ts"
tail -c +$((pos + 1)) "$ts" | cmp - "$work/played.ts" || fail "play --start 30 did not start at the keyframe the index gives (byte $pos)"
pass "both indexes ready after start and kept; play --start 30 starts at byte $pos, ffprobe's keyframe"

step "kill -9 and restart: the kept indexes are used; a file whose mtime changed is indexed again"
export VOD_TEST_PORT=$port
kill -KILL "$server_pid"; wait "$server_pid" 2>/dev/null || true
server_pid=
touch -d '2001-01-01' "$media/a.ts"
sleep 1
start_server "$media" --cache-size 16M --segment-size 1M --state-dir "$state"
grep -q "b.mp4: mp4 h264, 60 s, [0-9]* keyframes from the state directory" "$server_log" || fail "b.mp4's kept index was not used: $(grep b.mp4 "$server_log")"
grep -q "a.ts: mpegts h264, 60 s, index pending" "$server_log" || fail "a.ts changed but its stale index was used: $(grep a.ts "$server_log")"
for _ in $(seq 300); do
  grep -q "index of a.ts ready" "$server_log" && break
  sleep 0.1
done
grep -q "index of a.ts ready" "$server_log" || fail "a.ts was not indexed again"
[[ $(find "$state/indexes" -name '*.rvki' | wc -l) -eq 2 ]] || fail "the stale index was not replaced: $(ls "$state/indexes")"
"$client_bin" play "$(uri a.ts)" --start 30 --unpaced > "$work/played.ts"
tail -c +$((pos + 1)) "$ts" | cmp - "$work/played.ts" || fail "after the rebuild, play --start 30 did not start at byte $pos"
pass "b.mp4 from the state directory, a.ts rebuilt (its mtime changed) and seekable"
stop_server
