#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Write-Record over UDP, natively on loopback: no RDMA device anywhere (vod-server --no-rdma).
#   - list, and get of every movie byte-exact (0 B, 1 B, 5 MiB + 12345, 20 MiB, TS, MP4, Matroska)
#   - play decodes every frame (ffprobe), play --start 30 from the keyframe
#   - rdmasrc transport=udp: filesink byte-exact, and decoding
#   - vod-proxy --transport udp: whole body and a range, byte-exact
#   - hostile traffic during a get: a flood of garbage, truncated, malformed and forged-cookie
#     requests at the server from 16 source ports, and datagrams sprayed at the client's socket: the
#     get stays byte-exact, no flooding address ever gets more bytes than it sent, and the server
#     keeps serving
#   - abuse by clients that follow the protocol (issue 29): 256 ports of one address ask for 16 MiB
#     ranges at 1 bit/s and at 1 Mbit/s with a new session each time, and 8 low-numbered ports of 4
#     more addresses keep asking for 16 MiB at 10 Gbit/s; an honest get during it and one after
#     it are byte-exact within 10 s each, and the server's anonymous memory grows by less than 50 MB
#   - the server's rate limit holds (--udp-max-rate), errors and exit statuses of the client
#   - a segment cache smaller than the library (--cache-size, no RDMA): every movie byte-exact, play --start 30
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../free_port.sh"
build=${VOD_BUILD_DIR:?CTest sets VOD_BUILD_DIR}
source "$(dirname "${BASH_SOURCE[0]}")/../test_media.sh"
media_src=$test_media
server_bin=$build/server/vod-server client_bin=$build/client/vod-client
work=$(mktemp -d)
pids=()
cleanup() {
  local rc=$?
  kill "${pids[@]}" 2>/dev/null || true
  if [[ $rc -ne 0 && -f $work/server.log ]]; then echo "--- server log (last 30 lines)"; tail -n 30 "$work/server.log"; fi
  rm -rf "$work"
}
trap cleanup EXIT
step() { echo "--- $*"; }
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

media=$work/media
mkdir -p "$media"
for f in test-480p-60s.ts test-480p-60s.mp4 test-480p-60s.mkv; do cp "$media_src/$f" "$media/"; done
"$build/tests/rdma/make_pattern" 0 1 "$media/empty.bin"
"$build/tests/rdma/make_pattern" 1 2 "$media/one.bin"
"$build/tests/rdma/make_pattern" $((5 * 1024 * 1024 + 12345)) 3 "$media/odd.bin"
"$build/tests/rdma/make_pattern" $((20 * 1024 * 1024)) 4 "$media/big.bin"

udp=$(free_port)
start_server() {
  : > "$work/server.log"  # emptied here, not by the child's redirection, which may come after the wait reads the last log
  "$server_bin" --no-rdma --udp-port "$udp" --bind 127.0.0.1 --media-dir "$media" "$@" 2> "$work/server.log" &
  server_pid=$!
  pids+=("$server_pid")
  for _ in $(seq 300); do grep -q 'listening on' "$work/server.log" && return 0; sleep 0.1; done
  fail "vod-server --no-rdma did not start"
}
start_server
uri() { echo "rdma://127.0.0.1/$1"; }
C=(--transport udp --udp-port "$udp")

step "list over UDP"
"$client_bin" list "rdma://127.0.0.1" "${C[@]}" | tee "$work/list"
for f in test-480p-60s.ts test-480p-60s.mp4 test-480p-60s.mkv empty.bin one.bin odd.bin big.bin; do
  grep -q "^$f " "$work/list" || fail "list lacks $f"
done
pass "the catalog over UDP lists all 7 files"

step "get over UDP, byte-exact"
for f in empty.bin one.bin odd.bin big.bin test-480p-60s.ts test-480p-60s.mp4 test-480p-60s.mkv; do
  "$client_bin" get "$(uri "$f")" -o "$work/$f" -q "${C[@]}" || fail "get $f exited $?"
  cmp "$media/$f" "$work/$f" || fail "$f differs"
done
pass "7 files byte-identical"

step "play over UDP decodes every frame; play --start 30 starts at a keyframe"
"$client_bin" play "$(uri test-480p-60s.ts)" --unpaced "${C[@]}" > "$work/play.ts"
cmp "$media/test-480p-60s.ts" "$work/play.ts" || fail "play output differs"
frames=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$work/play.ts" | sed -n 1p)
[[ $frames == 1500 ]] || fail "play gave $frames frames"
"$client_bin" play "$(uri test-480p-60s.ts)" --unpaced --start 30 "${C[@]}" > "$work/play30.ts"
first=$(ffprobe -v error -select_streams v:0 -show_entries frame=key_frame -of csv=p=0 "$work/play30.ts" 2>/dev/null | sed -n 1p | tr -d ,)
[[ $first == 1 ]] || fail "play --start 30 does not start at a keyframe"
pass "play: $frames frames; --start 30 from a keyframe"

step "rdmasrc transport=udp"
export GST_PLUGIN_PATH=$build/client/gst GST_REGISTRY=$work/gst-registry.bin
gst-launch-1.0 -q rdmasrc uri="$(uri test-480p-60s.mp4)" transport=udp udp-port="$udp" ! filesink location="$work/gst.mp4"
cmp "$media/test-480p-60s.mp4" "$work/gst.mp4" || fail "rdmasrc transport=udp: filesink output differs"
gst-launch-1.0 -q rdmasrc uri="$(uri test-480p-60s.mkv)" transport=udp udp-port="$udp" ! matroskademux ! h264parse ! avdec_h264 ! \
  fakesink > /dev/null || fail "rdmasrc transport=udp: decoding failed"
pass "rdmasrc over UDP: filesink byte-exact, Matroska decodes"

step "vod-proxy --transport udp"
http=$(free_port)
"$build/proxy/vod-proxy" --server rdma://127.0.0.1 --transport udp --udp-port "$udp" --listen "127.0.0.1:$http" 2> "$work/proxy.log" &
pids+=($!)
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$http/" && break; sleep 0.1; done
curl -s -o "$work/proxy.ts" "http://127.0.0.1:$http/movies/test-480p-60s.ts"
cmp "$media/test-480p-60s.ts" "$work/proxy.ts" || fail "proxy over UDP: body differs"
curl -s -H "Range: bytes=1000000-1999999" -o "$work/range" "http://127.0.0.1:$http/movies/big.bin"
dd if="$media/big.bin" iflag=skip_bytes,count_bytes skip=1000000 count=1000000 status=none | cmp - "$work/range" || fail "proxy over UDP: range differs"
pass "vod-proxy over UDP: whole body and a range byte-exact"

step "hostile traffic during a get"
"$client_bin" get "$(uri big.bin)" -o "$work/under-attack.bin" -q "${C[@]}" --udp-rate 40 &
getter=$!
client_port=
for _ in $(seq 50); do
  client_port=$(ss -uanp 2>/dev/null | awk -v pid="pid=$getter," '$0 ~ pid { split($4, a, ":"); print a[length(a)]; exit }')
  [[ -n $client_port ]] && break
  sleep 0.1
done
[[ -n $client_port ]] || fail "could not find the client's UDP port"
"$build/tests/udp/udp_hostile" spray --target "127.0.0.1:$client_port" --seconds 3 > "$work/spray.txt" &
sprayer=$!
"$build/tests/udp/udp_hostile" flood --server "127.0.0.1:$udp" --seconds 3 --sources 16 > "$work/flood.txt"
wait "$sprayer"
wait "$getter" || fail "the get under attack exited with an error"
cmp "$media/big.bin" "$work/under-attack.bin" || fail "the get under attack is not byte-exact"
cat "$work/flood.txt" "$work/spray.txt"
sent=$(sed -n 's/.*sent_bytes=\([0-9]*\).*/\1/p' "$work/flood.txt")
received=$(sed -n 's/.*received_bytes=\([0-9]*\).*/\1/p' "$work/flood.txt")
((received <= sent)) || fail "the server sent $received bytes to addresses that proved nothing, which sent $sent: an amplifier"
kill -0 "$server_pid" || fail "the server died under the flood"
"$client_bin" get "$(uri one.bin)" -o "$work/after.bin" -q "${C[@]}"
cmp "$media/one.bin" "$work/after.bin" || fail "the server does not serve after the flood"
pass "byte-exact under a flood and a spray; flooders got $received bytes for $sent sent; still serving"

step "abuse by clients that follow the protocol, from other addresses"
# Loopback has all of 127/8: the abusers are 127.0.0.2 (slow) and 127.0.0.3-6 (greedy), the honest
# client 127.0.0.1. Limits are per address, so what they do costs the honest client its fair share.
rss_anon() { awk '/^RssAnon:/ {print $2}' "/proc/$server_pid/status"; }
rss_before=$(rss_anon)
"$build/tests/udp/udp_hostile" abuse --server "127.0.0.1:$udp" --seconds 15 --slow-ports 256 --greedy-ports 8 \
  --slow-from 127.0.0.2 --greedy-from 127.0.0.3 --greedy-addresses 4 --movie big.bin > "$work/abuse.txt" &
abuser=$!
sleep 3  # the 264 handshakes, and their ranges queued
timed_get() {  # FILE OUT: prints the seconds it took; fails the step if it takes more than 10 s or differs
  local start rc=0
  start=$(date +%s.%N)
  timeout 10 "$client_bin" get "$(uri "$1")" -o "$2" -q "${C[@]}" 2> "$work/get.err" || rc=$?
  [[ $rc == 0 ]] || fail "an honest get of $1 ($3) failed or took over 10 s (exit $rc): $(cat "$work/get.err")"
  cmp "$media/$1" "$2" || fail "an honest get of $1 ($3) is not byte-exact"
  echo "$(date +%s.%N) - $start" | bc
}
during=$(timed_get test-480p-60s.ts "$work/abused.ts" "under abuse")
kill -0 "$abuser" 2>/dev/null || fail "the abuse ended before the honest get did: nothing was measured"
wait "$abuser" || fail "udp_hostile abuse failed"
cat "$work/abuse.txt"
cookies=$(sed -n 's/.* cookies=\([0-9]*\).*/\1/p' "$work/abuse.txt")
data=$(sed -n 's/.* data_datagrams=\([0-9]*\).*/\1/p' "$work/abuse.txt")
((cookies >= 264 && data > 0)) || fail "the abusers did not get going (cookies=$cookies, data datagrams=$data): the step measured nothing"
after=$(timed_get test-480p-60s.mkv "$work/after-abuse.mkv" "after the abuse")
kill -0 "$server_pid" || fail "the server died under the abuse"
growth=$(( $(rss_anon) - rss_before ))
echo "honest get of 8 MB: $during s under abuse, $after s after it; server anonymous memory grew by $growth kB"
((growth < 50 * 1024)) || fail "the server's anonymous memory grew by $growth kB under the abuse (bound: 50 MB)"
pass "under abuse by 264 ports of 5 addresses an honest get took $during s, after it $after s; the server grew by $growth kB"

step "the server's rate limit holds"
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
start_server --udp-max-rate 40
start=$(date +%s.%N)
"$client_bin" get "$(uri big.bin)" -o "$work/limited.bin" -q "${C[@]}" --udp-rate 1000
secs=$(echo "$(date +%s.%N) - $start" | bc)
cmp "$media/big.bin" "$work/limited.bin" || fail "rate-limited get differs"
mbps=$(echo "scale=1; 20 * 1048576 * 8 / $secs / 1000000" | bc)
echo "20 MiB in $secs s: $mbps Mbit/s with --udp-max-rate 40 (the client asked for 1000)"
(( $(echo "$mbps <= 40 * 1.25" | bc) )) || fail "the server sent at $mbps Mbit/s, over its 40 Mbit/s limit"
pass "rate limit: $mbps Mbit/s under a 40 Mbit/s limit"

step "--udp-zero-copy: MSG_ZEROCOPY sends byte-exact, each notified before its memory goes"
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
start_server --udp-zero-copy
grep -q "MSG_ZEROCOPY sends of loaded movies" "$work/server.log" || fail "the server did not take --udp-zero-copy: $(grep udp "$work/server.log" | head -3)"
for f in odd.bin big.bin test-480p-60s.ts; do
  "$client_bin" get "$(uri "$f")" -o "$work/zc-$f" -q "${C[@]}" || fail "get $f with --udp-zero-copy exited $?"
  cmp "$media/$f" "$work/zc-$f" || fail "$f differs with --udp-zero-copy"
done
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
zc=$(sed -n 's/.*MSG_ZEROCOPY: \([0-9]*\) sends of [0-9]* bytes, \([0-9]*\) completed (\([0-9]*\) copied by the kernel), at most \([0-9]*\) pinned.*/\1 \2 \3 \4/p' "$work/server.log")
read -r zc_sends zc_done zc_copied zc_pinned <<< "$zc"
[[ -n $zc ]] && ((zc_sends > 0 && zc_done == zc_sends && zc_pinned <= 256)) ||
  fail "zero-copy sends: '${zc:-no summary at exit}' (expected every send notified, at most 256 pinned)"
pass "3 movies byte-identical; $zc_sends zero-copy sends, all notified ($zc_copied copied by the kernel on loopback), at most $zc_pinned pinned"
start_server

step "errors: an unknown movie, a server that is not there"
rc=0; "$client_bin" get "$(uri nope.ts)" -o "$work/x" "${C[@]}" 2> "$work/err" || rc=$?
[[ $rc == 3 ]] && grep -q "no movie 'nope.ts'" "$work/err" || fail "unknown movie over UDP: exit $rc: $(cat "$work/err")"
rc=0; "$client_bin" list rdma://127.0.0.1 --transport udp --udp-port 9 2> "$work/err" || rc=$?
[[ $rc == 4 ]] && grep -q "nothing listens" "$work/err" || fail "no server: exit $rc: $(cat "$work/err")"
pass "unknown movie: exit 3 listing what exists; no server: exit 4, 'nothing listens'"

step "a segment cache smaller than the library, no RDMA: every movie byte-exact over UDP, play decodes, seeks by the lazy index"
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
start_server --cache-size 2M --segment-size 256K --cache-grace 100 --cache-read-deadline 500 --state-dir "$work/state" --udp-zero-copy
grep -q "segment cache: 8 slots of 256 KiB" "$work/server.log" || fail "no segment cache: $(grep cache "$work/server.log" | head -3)"
for f in one.bin odd.bin big.bin test-480p-60s.ts test-480p-60s.mkv; do
  "$client_bin" get "$(uri "$f")" -o "$work/cached-$f" -q "${C[@]}" || fail "get $f from the cache exited $?"
  cmp "$media/$f" "$work/cached-$f" || fail "$f from the cache differs"
done
for _ in $(seq 100); do grep -q "index of test-480p-60s.ts ready" "$work/server.log" && break; sleep 0.1; done
"$client_bin" play "$(uri test-480p-60s.ts)" --unpaced --start 30 "${C[@]}" > "$work/cached30.ts"
first=$(ffprobe -v error -select_streams v:0 -show_entries frame=key_frame -of csv=p=0 "$work/cached30.ts" 2>/dev/null | sed -n 1p | tr -d ,)
[[ $first == 1 ]] || fail "play --start 30 from the cache does not start at a keyframe"
pass "5 movies (20 MiB and more through a 2 MiB cache) byte-identical over UDP; --start 30 from a keyframe"
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
# The catalog and the indexes live in memory and may go zero-copy; the movies' 30 MiB and more must not.
zc_bytes=$(sed -n 's/.*MSG_ZEROCOPY: [0-9]* sends of \([0-9]*\) bytes.*/\1/p' "$work/server.log")
[[ -n $zc_bytes ]] && ((zc_bytes < 1048576)) || fail "cached movies were sent zero-copy (their slots are reused in place): $(grep MSG_ZEROCOPY "$work/server.log")"
pass "with --udp-zero-copy the cache's slots were never pinned: $zc_bytes bytes (catalog and indexes) went zero-copy, no movie bytes"

step "a library of 1500 files under an open-files limit of 1024 (hard): listed at once, probed after start; serves the first, a middle and the last byte-exact"
# Each cached movie once held two descriptors for the server's life (one on file systems that refuse
# O_DIRECT), so such a library could not start. Now descriptors are opened per fault, at most a
# quarter of the limit kept.
many=$work/many
mkdir -p "$many"
for i in $(seq -w 1 1500); do head -c $((1000 + 10#$i)) /dev/urandom > "$many/f$i.bin"; done
cp "$media_src/test-480p-60s.mp4" "$many/movie.mp4"  # listed last: probed only after the listen
start=$SECONDS
: > "$work/server.log"
# --probe-budget 0: nothing is probed before the listen (by default, what 2 s do not reach), as a
# library of thousands of files on a slow disk would have it.
prlimit --nofile=1024:1024 "$server_bin" --no-rdma --udp-port "$udp" --bind 127.0.0.1 --media-dir "$many" --cache-size 8M --segment-size 64K \
  --probe-budget 0 2> "$work/server.log" &
server_pid=$!
pids+=("$server_pid")
for _ in $(seq 1200); do grep -q 'listening on' "$work/server.log" && break; kill -0 "$server_pid" 2> /dev/null || break; sleep 0.1; done
grep -q 'listening on' "$work/server.log" || fail "vod-server with 1500 cached files and 1024 open files did not start: $(grep -m 3 -i 'error\|open' "$work/server.log")"
for f in f0001.bin f0750.bin f1500.bin; do
  "$client_bin" get "$(uri "$f")" -o "$work/many-$f" -q "${C[@]}" || fail "get $f of 1500 exited $?"
  cmp "$many/$f" "$work/many-$f" || fail "$f of 1500 differs"
done
grep -q '1501 movies listed without a probe' "$work/server.log" || fail "the scan probed before the listen: $(grep -m 2 'library' "$work/server.log")"
# Probed after start: the catalog lists the MP4 as media once the indexer reached it (a described
# copy replaced the raw listing), and its bytes are the same either way.
for _ in $(seq 600); do "$client_bin" list "rdma://127.0.0.1" "${C[@]}" 2> /dev/null | grep -q '^movie.mp4 .* mp4 *h264' && break; sleep 0.1; done
"$client_bin" list "rdma://127.0.0.1" "${C[@]}" | grep '^movie.mp4 ' | tee "$work/probed-later"
grep -q ' mp4 *h264' "$work/probed-later" || fail "movie.mp4 was not probed after start: $(grep -m 3 'movie.mp4\|republished' "$work/server.log")"
"$client_bin" get "$(uri movie.mp4)" -o "$work/many-movie.mp4" -q "${C[@]}" || fail "get movie.mp4 of 1500 exited $?"
cmp "$many/movie.mp4" "$work/many-movie.mp4" || fail "movie.mp4 differs"
fds=$(ls "/proc/$server_pid/fd" | wc -l)
((fds < 1024)) || fail "the server holds $fds descriptors"
pass "listening $((SECONDS - start)) s after start with 1501 files, none probed first; the MP4 described after start; 4 of them byte-exact; $fds descriptors open"
