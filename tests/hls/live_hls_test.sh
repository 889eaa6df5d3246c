#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# vod-proxy's LL-HLS of a live channel, natively on loopback (vod-server --no-rdma --live-multicast,
# vod-proxy --transport udp --udp-group): the channel is a 12 s file with B-frames and audio,
# looped by the server, so the stream restarts (a discontinuity) during the test.
#   - every playlist fetched over 16 s passes check_playlist.py (RFC 8216 and rfc8216bis's part
#     rules), with the live headers, and one of them carries EXT-X-DISCONTINUITY
#   - a blocking reload for the hinted part waits for it and returns a playlist that lists it; the
#     hinted part itself is answered once made; a complete segment is its parts, byte-exact
#   - ffmpeg and VLC play the live playlist for 10 s and decode it; one server session serves them
#     and a progressive /live/ viewer at once
#   - refusals say why (a part without its segment, a reload too far ahead, a segment that left the
#     window, a movie under the channels' path); packaging stops after --hls-live-idle
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/native_proxy_lib.sh"
metric() { curl -s "http://127.0.0.1:$http/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
checked() {  # checked FILE NAME: the playlist passes the checker
  /usr/bin/python3 "$here/check_playlist.py" "$1" "$2" > "$work/check.out" || { cat "$work/check.out" "$1"; fail "$2 breaks the rules"; }
}
whole_packets() {  # FILE: every 188-byte packet starts with the sync byte
  /usr/bin/python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); sys.exit(0 if d and len(d) % 188 == 0 and all(d[i] == 0x47 for i in range(0, len(d), 188)) else 1)' "$1"
}
frames() { { ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$1" 2> /dev/null || true; } | head -n 1; }

media=$work/media
mkdir -p "$media"
ffmpeg -v error -f lavfi -i "testsrc2=size=320x240:rate=25" -f lavfi -i "sine=f=440:r=48000" -t 12 -c:v libx264 -preset veryfast -g 25 -bf 2 \
  -pix_fmt yuv420p -c:a aac -b:a 64k -f mpegts "$media/cam.ts"
cp "$test_media/test-480p-60s.ts" "$media/"
udp=$(free_port) http=$(free_port)
group=239.255.$((RANDOM % 200 + 1)).$((RANDOM % 200 + 1)):$(free_port)
"$build/server/vod-server" --no-rdma --udp-port "$udp" --bind 127.0.0.1 --media-dir "$media" --live "cam=file:$media/cam.ts" \
  --live-multicast "$group" --live-multicast-interface 127.0.0.1 2> "$work/server.log" &
pids+=($!)
for _ in $(seq 300); do grep -q 'listening on' "$work/server.log" && break; sleep 0.1; done
grep -q 'listening on' "$work/server.log" || fail "vod-server did not start"
"$build/proxy/vod-proxy" --server rdma://127.0.0.1 --transport udp --udp-port "$udp" --udp-group "$group" --udp-interface 127.0.0.1 \
  --listen "127.0.0.1:$http" --hls-live-idle 5 > "$work/proxy.log" 2>&1 &
proxy_pid=$!
pids+=("$proxy_pid")
base=http://127.0.0.1:$http/hls/live/cam
for _ in $(seq 100); do grep -q 'listening on' "$work/proxy.log" && break; sleep 0.1; done

step "the first playlist, once the channel's first segment is complete"
code=$(curl -s --max-time 20 -D "$work/h0" -o "$work/p0.m3u8" -w '%{http_code} %{time_total}' "$base/index.m3u8" || true)
if [[ ${code%% *} == 503 ]] && grep -qi multicast "$work/p0.m3u8"; then echo "SKIP: multicast on loopback does not work here: $(cat "$work/p0.m3u8")"; exit 77; fi
[[ ${code%% *} == 200 ]] || fail "the first playlist: HTTP $code: $(cat "$work/p0.m3u8")"
grep -qi '^Content-Type: application/vnd.apple.mpegurl' "$work/h0" && grep -qi '^Cache-Control: no-cache' "$work/h0" || fail "live playlist headers: $(cat "$work/h0")"
checked "$work/p0.m3u8" first
grep -q '^#EXT-X-PRELOAD-HINT:TYPE=PART' "$work/p0.m3u8" && grep -q 'CAN-BLOCK-RELOAD=YES' "$work/p0.m3u8" || fail "no preload hint or blocking reload: $(cat "$work/p0.m3u8")"
pass "200 in ${code#* } s, $(grep -c '^#EXT-X-PART:' "$work/p0.m3u8") parts; it passes the checker"

step "every playlist for 16 s passes the checker; the stream's restart is a discontinuity"
disc=
for i in $(seq 32); do
  curl -s --max-time 5 -o "$work/p$i.m3u8" "$base/index.m3u8" || fail "playlist $i"
  checked "$work/p$i.m3u8" "playlist $i"
  [[ -z $disc ]] && grep -q '^#EXT-X-DISCONTINUITY$' "$work/p$i.m3u8" && disc=$i
  sleep 0.5
done
[[ -n $disc ]] || fail "no EXT-X-DISCONTINUITY in 16 s of a channel that loops every 12 s: $(cat "$work/p32.m3u8")"
last=$work/p32.m3u8
segments=$(grep -c '^seg-' "$last")
((segments >= 5)) || fail "the window holds $segments segments: $(cat "$last")"
pass "32 playlists pass; playlist $disc has the discontinuity; the window holds $segments segments ($(grep '^#EXT-X-MEDIA-SEQUENCE' "$last"))"

step "a blocking reload waits for the hinted part; the hint is answered once made"
curl -s -o "$work/now.m3u8" "$base/index.m3u8"
hint=$(sed -n 's/^#EXT-X-PRELOAD-HINT:TYPE=PART,URI="\(.*\)"$/\1/p' "$work/now.m3u8")
[[ $hint =~ ^part-([0-9]+)\.([0-9]+)\.ts$ ]] || fail "hint '$hint'"
msn=${BASH_REMATCH[1]} part=${BASH_REMATCH[2]}
out=$(curl -s --max-time 10 -o "$work/blocked.m3u8" -w '%{http_code} %{time_total}' "$base/index.m3u8?_HLS_msn=$msn&_HLS_part=$part")
[[ ${out%% *} == 200 ]] || fail "blocking reload: $out"
grep -q "URI=\"$hint\"" "$work/blocked.m3u8" || grep -q "^seg-$msn.ts$" "$work/blocked.m3u8" || fail "the blocking reload's playlist lacks $hint: $(cat "$work/blocked.m3u8")"
checked "$work/blocked.m3u8" blocked
next=$(sed -n 's/^#EXT-X-PRELOAD-HINT:TYPE=PART,URI="\(.*\)"$/\1/p' "$work/blocked.m3u8")
got=$(curl -s --max-time 10 -D "$work/hp" -o "$work/hinted.ts" -w '%{http_code} %{time_total}' "$base/$next")
[[ ${got%% *} == 200 ]] && whole_packets "$work/hinted.ts" || fail "the hinted part $next: $got"
grep -qi '^Content-Type: video/mp2t' "$work/hp" || fail "part headers: $(cat "$work/hp")"
pass "the reload for $hint came in ${out#* } s and lists it; the hinted $next came in ${got#* } s, $(stat -c %s "$work/hinted.ts") bytes of whole packets"

step "a segment is its parts, byte-exact"
curl -s --max-time 10 -o "$work/complete.m3u8" "$base/index.m3u8?_HLS_msn=$msn"
curl -sf --max-time 10 -o "$work/seg.ts" "$base/seg-$msn.ts" || fail "seg-$msn.ts"
: > "$work/joined.ts"
for p in $(sed -n "s/^#EXT-X-PART:.*URI=\"\(part-$msn\.[0-9]*\.ts\)\".*/\1/p" "$work/complete.m3u8"); do
  curl -sf --max-time 5 "$base/$p" >> "$work/joined.ts" || fail "$p"
done
cmp -s "$work/seg.ts" "$work/joined.ts" || fail "seg-$msn.ts ($(stat -c %s "$work/seg.ts") bytes) differs from its parts joined ($(stat -c %s "$work/joined.ts"))"
n=$(frames "$work/seg.ts")
((n >= 25)) || fail "seg-$msn.ts decodes to $n frames"
pass "seg-$msn.ts: $(stat -c %s "$work/seg.ts") bytes, its parts joined byte-exact; $n frames decode"

step "ffmpeg and VLC play the live playlist for 10 s, with a progressive viewer, on one session"
opened=$(metric vod_proxy_live_sessions_opened_total)
curl -s -N --max-time 10 -o "$work/progressive.ts" "http://127.0.0.1:$http/live/cam" &
pids+=($!)
ffmpeg -v error -i "$base/index.m3u8" -t 10 -f framemd5 "$work/ffmpeg.md5" 2> "$work/ffmpeg.err" &
ff=$!
vlc_home=$(mktemp -d)
chown nobody "$vlc_home"
# VLC's --run-time does not end a live stream's remux: 10 s of it, then SIGINT (VLC closes the file and exits).
HOME=$vlc_home timeout -s INT -k 10 10 setpriv --reuid=nobody --regid=nogroup --clear-groups cvlc --vout=dummy --aout=dummy \
  "$base/index.m3u8" --sout "#std{access=file,mux=ts,dst=$vlc_home/vlc.ts}" > "$work/vlc.log" 2>&1 || true
wait "$ff" || { cat "$work/ffmpeg.err"; fail "ffmpeg failed on the live playlist"; }
sessions=$(metric vod_proxy_live_sessions_opened_total)
[[ $sessions == "$opened" ]] || fail "$((sessions - opened)) more server sessions for ffmpeg, VLC and a progressive viewer of one channel"
[[ ! -s $work/ffmpeg.err ]] || { cat "$work/ffmpeg.err"; fail "ffmpeg reported errors"; }
vf=$(grep -c '^0,' "$work/ffmpeg.md5" || true)
((vf >= 225)) || fail "ffmpeg decoded $vf video frames in 10 s of a 25 fps channel"
vlc_frames=$(frames "$vlc_home/vlc.ts")
rm -rf "$vlc_home"
((${vlc_frames:-0} >= 150)) || { tail -n 20 "$work/vlc.log"; fail "VLC's recording of 10 s decodes to ${vlc_frames:-no} frames"; }
((vlc_frames <= 400)) || fail "VLC's recording of 10 s of a 25 fps channel holds $vlc_frames frames"  # not the window over again
pass "ffmpeg decoded $vf video frames with no error, VLC recorded $vlc_frames; still the one session"

step "refusals say why"
expect() {  # expect STATUS PATH WORDS
  local code
  code=$(curl -s --max-time 10 -o "$work/body" -w '%{http_code}' "http://127.0.0.1:$http$2")
  [[ $code == "$1" ]] || fail "$2 got $code, not $1: $(cat "$work/body")"
  grep -q "$3" "$work/body" || fail "$2: the answer does not say '$3': $(cat "$work/body")"
}
curl -s -o "$work/latest.m3u8" "$base/index.m3u8"
newest=$(sed -n 's/^#EXT-X-PRELOAD-HINT:TYPE=PART,URI="part-\([0-9]*\)\..*/\1/p' "$work/latest.m3u8")
expect 400 "/hls/live/cam/index.m3u8?_HLS_part=1" "needs _HLS_msn"
expect 400 "/hls/live/cam/index.m3u8?_HLS_msn=$((newest + 9))" "more than two segments past the newest"
expect 404 "/hls/live/cam/seg-$((newest - 60)).ts" "left the live window"
expect 404 "/hls/live/cam/part-$((newest + 5)).0.ts" "not in the playlist"
expect 404 "/hls/live/test-480p-60s.ts/index.m3u8" "is a movie"
expect 404 "/hls/live/nope/index.m3u8" "no movie or live channel 'nope'"
pass "400 and 404, each saying why"

step "packaging stops after --hls-live-idle 5 without a request"
for _ in $(seq 100); do grep -q "INFO hls: 'cam': stopped packaging: no HLS request for 5 s" "$work/proxy.log" && break; sleep 0.1; done
grep -q "INFO hls: 'cam': stopped packaging: no HLS request for 5 s" "$work/proxy.log" || fail "no log line for the idle stop"
for _ in $(seq 50); do [[ $(metric vod_proxy_live_channels) == 0 ]] && break; sleep 0.1; done
[[ $(metric vod_proxy_live_channels) == 0 ]] || fail "the channel's session is still open after its last HLS viewer"
kill -0 "$proxy_pid" || fail "vod-proxy died"
pass "stopped, and the channel's session closed"
