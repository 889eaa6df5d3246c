#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# vod-proxy's HLS over RDMA (tests/hls/hls_checks.sh, as the native test runs it over UDP): the TS
# movie's playlists pass the RFC 8216 checks, its map and byte-range segments tile the file byte for
# byte, ffmpeg -ss 30 on the playlist gives the file's video frames; the MKV movie's fMP4 pieces hold
# the file's video packets one for one; a live channel (the TS movie replayed) as LL-HLS: its
# playlists pass the checker, a blocking reload lists the hinted part, a segment is its parts byte for
# byte, and ffmpeg decodes 4 s of the live playlist without an error. Whole-movie decodes are left to
# the native tests (TCG is slow); the players' real-time checks too, so it runs beside other tests.
source "$(dirname "$0")/vod_test_lib.sh"
source "$(dirname "$0")/../hls/hls_checks.sh"
media=$work/media
mkdir -p "$media"
for f in test-480p-60s.ts test-480p-60s.mkv; do cp "$test_media/$f" "$media/"; done
start_server "$media" --live "cam=file:$media/test-480p-60s.ts"
http_port=$(free_port)
base=http://127.0.0.1:$http_port
"$build/proxy/vod-proxy" --server "$(uri)" --listen "127.0.0.1:$http_port" 2> "$work/proxy.log" &
proxy_pid=$!
cleanup_hooks+=("kill $proxy_pid 2>/dev/null; echo '--- proxy log (last 20 lines)'; grep -v 'INFO access' $work/proxy.log | tail -n 20")
for _ in $(seq 600); do curl -s -o /dev/null "$base/" && break; sleep 0.1; done

step "the TS movie: playlists, byte ranges, a seek"
HLS_DECODE=0 hls_check_ts_movie "$base" "$media/test-480p-60s.ts" "$work"
step "the Matroska movie: fMP4 remuxed on the fly"
HLS_DECODE=0 hls_check_fmp4_movie "$base" "$media/test-480p-60s.mkv" "$work"
grep -q "hls: 'test-480p-60s.mkv': 15 segments" "$work/proxy.log" || fail "the proxy's log does not show the MKV movie's facts read"
grep -q "connect from .*: movie" "$server_log" || fail "the proxy never connected to the server for a movie"

step "a live channel as LL-HLS, over the proxy's one RDMA session of it"
live=$base/hls/live/cam
code=$(curl -s --max-time 30 -o "$work/live0.m3u8" -w '%{http_code}' "$live/index.m3u8" || true)
[[ $code == 200 ]] || fail "the live playlist: HTTP $code: $(cat "$work/live0.m3u8")"
for i in 1 2 3 4 5 6; do
  curl -s --max-time 10 -o "$work/live$i.m3u8" "$live/index.m3u8" || fail "live playlist $i"
  /usr/bin/python3 "$(dirname "$0")/../hls/check_playlist.py" "$work/live$i.m3u8" "live playlist $i" > "$work/check.out" || { cat "$work/check.out"; fail "live playlist $i breaks the rules"; }
  sleep 0.5
done
# segment_and_parts PLAYLIST: the hint's segment, reloaded by blocking until its part and then the
# segment exist, fetched whole and part by part: the parts joined must be the segment. Returns 2
# when its parts had left the playlist (listed only within three target durations of the end) or
# the live window (the proxy's 404 says so): a stalled guest once fed the packager 8 s of the
# channel at once, and the window slid past the segment between its blocking reload and its parts.
segment_and_parts() {
  local hint p rc code
  hint=$(sed -n 's/^#EXT-X-PRELOAD-HINT:TYPE=PART,URI="part-\([0-9]*\)\.\([0-9]*\)\.ts"$/\1 \2/p' "$1")
  read -r msn part <<< "$hint"
  [[ -n $msn && -n $part ]] || fail "no preload hint: $(cat "$1")"
  curl -s --max-time 20 -o "$work/blocked.m3u8" "$live/index.m3u8?_HLS_msn=$msn&_HLS_part=$part" || fail "the blocking reload"
  # It must hold until the playlist has that part or later: its own hint is past the part (a burst
  # may have moved the part out of the listing already).
  local after bmsn bpart
  after=$(sed -n 's/^#EXT-X-PRELOAD-HINT:TYPE=PART,URI="part-\([0-9]*\)\.\([0-9]*\)\.ts"$/\1 \2/p' "$work/blocked.m3u8")
  read -r bmsn bpart <<< "$after"
  [[ -n $bmsn && -n $bpart ]] && { ((bmsn > msn)) || ((bmsn == msn && bpart > part)); } ||
    fail "the blocking reload for part $msn.$part answered before it was made: $(cat "$work/blocked.m3u8")"
  curl -s --max-time 20 -o "$work/done.m3u8" "$live/index.m3u8?_HLS_msn=$msn" || fail "the blocking reload for segment $msn"
  if ! grep -q "^seg-$msn.ts$" "$work/done.m3u8"; then
    local first; first=$(sed -n 's/^#EXT-X-MEDIA-SEQUENCE:\([0-9]*\)$/\1/p' "$work/done.m3u8")
    [[ -n $first && $first -gt $msn ]] || fail "the blocking reload for segment $msn does not list it: $(cat "$work/done.m3u8")"
    echo "    segment $msn had left the live window (it begins at $first) by the time its blocking reload was answered; again with the newest segment"
    return 2
  fi
  reload_msn=$msn
  # The newest complete segment that playlist lists: the furthest from leaving the window.
  msn=$(sed -n 's/^seg-\([0-9]*\)\.ts$/\1/p' "$work/done.m3u8" | tail -n 1)
  : > "$work/joined.ts"
  local parts; parts=$(sed -n "s/^#EXT-X-PART:.*URI=\"\(part-$msn\.[0-9]*\.ts\)\".*/\1/p" "$work/done.m3u8")
  if [[ -z $parts ]]; then  # more than three target durations behind the end already: its parts are no longer listed
    echo "    the playlist answered for segment $msn lists no parts of it any more (it hinted $(sed -n 's/^#EXT-X-PRELOAD-HINT:TYPE=PART,URI="\(.*\)"$/\1/p' "$work/done.m3u8")); again with the newest segment"
    return 2
  fi
  # The parts and the segment in one curl, over one connection: milliseconds, not a process start
  # per file, for the window to move in.
  local args=() n=0 codes
  for p in $parts; do
    args+=(-o "$work/part-$n.ts" "$live/$p")
    n=$((n + 1))
  done
  args+=(-o "$work/seg.ts" "$live/seg-$msn.ts")
  rc=0
  codes=$(curl -s --max-time 20 -w '%{http_code}\n' "${args[@]}") || rc=$?
  [[ $rc == 0 ]] || fail "fetching segment $msn and its $n parts: curl exit $rc"
  local i=0 file
  for code in $codes; do
    file=$([[ $i -lt $n ]] && echo "$work/part-$i.ts" || echo "$work/seg.ts")
    if [[ $code == 404 ]] && grep -q "has left the live window" "$file"; then
      echo "    segment $msn: $(head -c 200 "$file"); again with the newest segment"
      return 2
    fi
    [[ $code == 200 ]] || fail "segment $msn, file $((i + 1)) of $((n + 1)) ($file): HTTP $code: $(head -c 300 "$file")"
    [[ $i -lt $n ]] && cat "$file" >> "$work/joined.ts"
    i=$((i + 1))
  done
  [[ $i == $((n + 1)) ]] || fail "curl answered $i of $((n + 1)) transfers for segment $msn"
  cmp -s "$work/seg.ts" "$work/joined.ts" || fail "seg-$msn.ts differs from its parts joined"
}
rc=2
for attempt in 1 2 3; do
  rc=0
  segment_and_parts "$work/$([[ $attempt == 1 ]] && echo live6.m3u8 || echo done.m3u8)" || rc=$?
  [[ $rc == 2 ]] || break
done
[[ $rc == 0 ]] || fail "three segments in a row left the live window before their parts could be read"
timeout 120 ffmpeg -v error -i "$live/index.m3u8" -t 4 -f framemd5 "$work/live.md5" 2> "$work/ffmpeg.err" || { cat "$work/ffmpeg.err"; fail "ffmpeg on the live playlist"; }
[[ ! -s $work/ffmpeg.err ]] || { cat "$work/ffmpeg.err"; fail "ffmpeg reported errors on the live playlist"; }
frames=$(grep -c '^0,' "$work/live.md5" || true)
((frames >= 60)) || fail "ffmpeg decoded $frames video frames of 4 s of the live channel"
pass "6 playlists pass the checker; the reload for part $reload_msn.$part lists it; seg-$msn.ts ($(stat -c %s "$work/seg.ts") bytes) is its parts; ffmpeg decoded $frames frames"
kill "$proxy_pid"; wait "$proxy_pid" 2>/dev/null || true  # its live session would hold the server's drain
stop_server
