#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# vod-proxy's HLS of movies, natively on loopback (vod-server --no-rdma, vod-proxy --transport udp):
#   - the playlist checker fails on playlists that break the rules it checks (it can fail)
#   - the TS movies (one with a name that needs encoding) pass hls_check_ts_movie, the MP4, fragmented
#     MP4 and Matroska movies hls_check_fmp4_movie (tests/hls/hls_checks.sh); a segment asked for again
#     comes from the cache
#   - a HEAD, eight clients asking at once during the first fetch, the Host check, CORS off by default
#     and exactly the --cors-origin origins, and the refusals (MP4, live without its session, unknown, bad name) saying why
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/native_proxy_lib.sh"
source "$here/hls_checks.sh"

step "the checker fails on broken playlists"
bad() {  # bad NAME TEXT: the checker must refuse TEXT
  printf '%b' "$2" > "$work/bad.m3u8"
  if /usr/bin/python3 "$here/check_playlist.py" "$work/bad.m3u8" "$1" > "$work/bad.out"; then fail "the checker passed a playlist with $1"; fi
  grep -q FAIL "$work/bad.out" || fail "the checker said nothing about $1"
}
good='#EXTM3U\n#EXT-X-VERSION:4\n#EXT-X-TARGETDURATION:4\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXTINF:4.000,\n#EXT-X-BYTERANGE:100@0\na.ts\n#EXT-X-ENDLIST\n'
printf '%b' "$good" > "$work/good.m3u8"
/usr/bin/python3 "$here/check_playlist.py" "$work/good.m3u8" good > /dev/null || fail "the checker refused a good playlist"
bad "no #EXTM3U" "${good#\#EXTM3U\\n}"
bad "a segment longer than the target" "${good/EXTINF:4.000/EXTINF:4.600}"
bad "byte ranges at version 3" "${good/VERSION:4/VERSION:3}"
bad "VOD without ENDLIST" "${good%\#EXT-X-ENDLIST\\n}"
bad "no target duration" "${good/\#EXT-X-TARGETDURATION:4\\n/}"
bad "a map at version 4" "${good/\#EXTINF/#EXT-X-MAP:URI=\"a.ts\",BYTERANGE=\"10@0\"\\n#EXTINF}"
bad "a variant without BANDWIDTH" '#EXTM3U\n#EXT-X-STREAM-INF:CODECS="avc1.64001e"\nindex.m3u8\n'
bad "PART-HOLD-BACK under 3 parts" '#EXTM3U\n#EXT-X-VERSION:6\n#EXT-X-TARGETDURATION:1\n#EXT-X-PART-INF:PART-TARGET=0.2\n#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=0.4\n#EXT-X-PART:DURATION=0.2,URI="p0"\n'
pass "the checker refuses 8 kinds of broken playlist"

media=$work/media
mkdir -p "$media"
cp "$test_media/test-480p-60s.ts" "$test_media/test-480p-60s.mp4" "$test_media/test-480p-60s.mkv" "$media/"
cp "$test_media/test-480p-60s.fragmented.mp4" "$test_media/small.webm" "$media/"
head -c 100000 /dev/urandom > "$media/noise.bin"
cp "$test_media/test-480p-60s.ts" "$media/a movie & more"  # no extension: the segments' URI is movie.ts all the same
start_server_and_proxy "$media" --live "cam=file:$media/test-480p-60s.ts" -- --cors-origin https://player.example --log-level debug

step "eight clients at once ask for a playlist not made yet: one fetch, eight answers"
curls=()
for i in $(seq 8); do curl -s -o "$work/m$i" -w '%{http_code}\n' "$base/hls/test-480p-60s.ts/master.m3u8" > "$work/c$i" & curls+=($!); done
wait "${curls[@]}"
for i in $(seq 8); do [[ $(cat "$work/c$i") == 200 ]] && cmp -s "$work/m1" "$work/m$i" || fail "client $i got $(cat "$work/c$i") or another playlist"; done
[[ $(grep -c "hls: 'test-480p-60s.ts'" "$work/proxy.log") == 1 ]] || fail "the facts of the movie were fetched $(grep -c "hls: 'test-480p-60s.ts'" "$work/proxy.log") times"
pass "8 identical answers, one fetch of the index and codecs"

step "the TS movies"
hls_check_ts_movie "$base" "$media/test-480p-60s.ts" "$work"
hls_check_ts_movie "$base" "$media/a movie & more" "$work" test-480p-60s.ts

step "the MP4 and Matroska movies, as fMP4"
hls_check_fmp4_movie "$base" "$media/test-480p-60s.mp4" "$work"
hls_check_fmp4_movie "$base" "$media/test-480p-60s.mkv" "$work"
hls_check_fmp4_movie "$base" "$media/test-480p-60s.fragmented.mp4" "$work"
remuxed=$(grep -c "hls: 'test-480p-60s.mp4' seg-3.m4s: .* remuxed" "$work/proxy.log")
curl -sf -o /dev/null "$base/hls/test-480p-60s.mp4/seg-3.m4s" || fail "GET seg-3.m4s again failed"
[[ $(grep -c "hls: 'test-480p-60s.mp4' seg-3.m4s: .* remuxed" "$work/proxy.log") == "$remuxed" ]] || fail "seg-3.m4s was remuxed again, not taken from the cache"
pass "a segment asked for again comes from the cache"

step "HEAD, Host, CORS and the refusals"
curl -sfI "$base/hls/test-480p-60s.ts/index.m3u8" > "$work/head" || fail "HEAD failed"
[[ $(sed -n 's/^Content-Length: \([0-9]*\).*/\1/Ip' "$work/head") == $(curl -sf "$base/hls/test-480p-60s.ts/index.m3u8" | wc -c) ]] ||
  fail "HEAD's Content-Length is not the playlist's length"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: attacker.example' "$base/hls/test-480p-60s.ts/index.m3u8")
[[ $code == 421 ]] || fail "a foreign Host got $code, not 421"
curl -s -D "$work/h" -o /dev/null -H 'Origin: https://player.example' "$base/hls/test-480p-60s.ts/index.m3u8"
grep -qi '^Access-Control-Allow-Origin: https://player.example' "$work/h" || fail "the --cors-origin origin is not allowed"
curl -s -D "$work/h" -o /dev/null -H 'Origin: https://player.example' -r 0-99 "$base/movies/test-480p-60s.ts"
grep -qi '^Access-Control-Expose-Headers:.*Content-Range' "$work/h" || fail "a segment's Range answer does not expose Content-Range to the origin"
curl -s -D "$work/h" -o /dev/null -H 'Origin: https://attacker.example' "$base/hls/test-480p-60s.ts/index.m3u8"
grep -qi '^Access-Control-Allow-Origin' "$work/h" && fail "another origin was allowed"
code=$(curl -s -o /dev/null -w '%{http_code}' -X OPTIONS -H 'Origin: https://player.example' -H 'Access-Control-Request-Method: GET' \
  -H 'Access-Control-Request-Headers: range' "$base/movies/test-480p-60s.ts")
[[ $code == 204 ]] || fail "the preflight of the allowed origin got $code"
expect() {  # expect STATUS PATH WORDS: the answer's status, and its text says WORDS
  local body code
  code=$(curl -s -o "$work/body" -w '%{http_code}' "$base$2")
  [[ $code == "$1" ]] || fail "$2 got $code, not $1: $(cat "$work/body")"
  grep -q "$3" "$work/body" || fail "$2: the answer does not say '$3': $(cat "$work/body")"
}
expect 404 /hls/test-480p-60s.mp4/seg-15.m4s "15 segments, numbered from 0"
expect 404 /hls/test-480p-60s.ts/seg-0.m4s "byte ranges"
expect 404 /hls/test-480p-60s.mp4/movie.ts "init.mp4 and seg-N.m4s"
expect 404 /hls/noise.bin/index.m3u8 "not media"
expect 503 /hls/live/cam/index.m3u8 "udp-group"  # live HLS needs the channel's session: here, multicast (tests/hls/live_hls_test.sh)
expect 404 /hls/live/test-480p-60s.ts/index.m3u8 "is a movie"
expect 404 /hls/nope.ts/index.m3u8 "no movie or live channel 'nope.ts'"
expect 404 /hls/test-480p-60s.ts/x.m3u8 "master.m3u8"
expect 400 /hls/%2e%2e/index.m3u8 "bad name"
kill -0 "$proxy_pid" || fail "vod-proxy died"
pass "HEAD, 421 for a foreign Host, CORS for --cors-origin only (and its preflight), 503/404/400 saying why"
