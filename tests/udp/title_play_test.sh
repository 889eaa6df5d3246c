#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A title played as one stream (TitleReader, adaptive bitrate over the transport's Reads), natively
# over Write-Record on loopback (vod-server --no-rdma): a 30 s ladder of three renditions
# (vod-media ladder) as MPEG-TS (remuxed with their two audio streams) and as MP4.
#  - pinned (--rendition 120p) the stream is the rendition's file, byte for byte, with no switch;
#  - unpaced, loopback's goodput has headroom for every rendition: it starts at the lowest and steps
#    up one rendition at a time after sustained headroom (120p -> 180p -> 240p), each switch logged
#    with its reason, and the stream decodes (ffprobe) with every frame, 40 ms after the one before
#    across the switches, the pictures changing size at each, and every PID's continuity counters
#    continuous (a TS parser here);
#  - a title of the same renditions as MP4: each segment remuxed to MPEG-TS on the client; the same
#    steps up, frames and counters, and both audio streams with every packet;
#  - rdmasrc with the title's URI: rendition=120p is the file byte for byte; adaptive, its two
#    switches are element messages on the bus and mark buffers DISCONT, and avdec_h264 decodes it;
#  - a rendition that is not in the title, and a --start past its end, are refused with the reason;
#  - --start 10: the stream starts with the file's tables, then the segment at 10 s, and decodes
#    with every frame from there and continuous counters.
source "$(dirname "$0")/../hls/native_proxy_lib.sh"
source "$(dirname "$0")/../hls/title_fixture.sh"
dir=$work/media/Films/Ladder
# check_stream FILE: every frame of the title (as many as its 240p rendition has), 40 ms after the
# one before, the width changing 214 -> 320 -> 426; every PID's continuity counters continuous.
check_stream() {
  local stream=$1
  want=$(ffprobe -v error -select_streams v:0 -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$dir/Ladder - 240p.ts" | awk 'NF { print; exit }')
  ffprobe -v error -select_streams v:0 -show_entries frame=pts_time,width -of csv=p=0 "$stream" > "$work/frames" 2> "$work/frames.err"
  [[ ! -s $work/frames.err ]] || fail "decoding the stream: $(head -3 "$work/frames.err")"
  awk -F, -v want="$want" 'NF >= 2 { if (n && ($1 - last > 0.041 || $1 <= last)) { print "a gap or a step back at " last " -> " $1; bad = 1 }
                     if (n && $2 != width) sizes = sizes " " $2; last = $1; width = $2; n++ }
           END { print n " frames, widths changing to" sizes; if (bad || n != want || sizes != " 320 426") exit 1 }' "$work/frames" ||
    fail "the stream is not continuous ($want frames wanted)"
  /usr/bin/python3 "$(dirname "$0")/ts_continuity.py" "$stream" || fail "continuity counters"
}

step "a ladder of three MPEG-TS renditions"
make_title "$work/ladder" 30 426x240 240p,180p,120p
mkdir -p "$dir"
for r in 240p 180p 120p; do
  ffmpeg -v error -i "$work/ladder/ladder - $r.mp4" -map 0:v -map 0:a -c copy -f mpegts "$dir/Ladder - $r.ts"
done
mkdir -p "$work/media/Films/Mp4"  # the same renditions as MP4: a title of its own
for r in 240p 180p 120p; do cp "$work/ladder/ladder - $r.mp4" "$work/media/Films/Mp4/Mp4 - $r.mp4"; done
start_server_and_proxy "$work/media" --
for _ in $(seq 100); do grep -q "title 'Films/Ladder': 3 renditions" "$work/server.log" && break; sleep 0.1; done
grep -q "title 'Films/Ladder': 3 renditions (240p, 180p, 120p)" "$work/server.log" || fail "the server lists no title: $(grep -i title "$work/server.log")"
udp=$(grep -o 'UDP [0-9]* with' "$work/server.log" | grep -o '[0-9]*')
play() { "$build/client/vod-client" play "rdma://127.0.0.1/Films/Ladder" --transport udp --udp-port "$udp" --log-level info "$@"; }
pass "the server lists the title"

step "pinned: the rendition's own bytes"
play --rendition 120p --unpaced > "$work/pinned.ts" 2> "$work/pinned.log" || fail "play --rendition: $(tail -3 "$work/pinned.log")"
cmp "$work/pinned.ts" "$dir/Ladder - 120p.ts" || fail "the pinned stream is not the 120p file"
grep -q '0 switches' "$work/pinned.log" || fail "a pinned stream switched: $(grep -E 'switch|segments' "$work/pinned.log")"
pass "--rendition 120p is the 120p file byte for byte, with 0 switches"

step "adaptive: it steps up, and the stream decodes continuously"
play --unpaced > "$work/abr.ts" 2> "$work/abr.log" || fail "play: $(tail -3 "$work/abr.log")"
grep -q 'switch 120p -> 180p at .*: sustained headroom' "$work/abr.log" && grep -q 'switch 180p -> 240p at .*: sustained headroom' "$work/abr.log" ||
  fail "no step up from 120p to 180p to 240p: $(grep -E 'abr|segments' "$work/abr.log")"
grep -E 'abr: switch|segments \(' "$work/abr.log"
check_stream "$work/abr.ts"
pass "2 steps up (120p, 180p, 240p); $want frames 40 ms apart; continuity counters continuous"

step "a title of MP4 renditions: each segment remuxed to MPEG-TS on the client"
grep -q "title 'Films/Mp4': 3 renditions" "$work/server.log" || fail "the server lists no MP4 title"
"$build/client/vod-client" play "rdma://127.0.0.1/Films/Mp4" --transport udp --udp-port "$udp" --log-level info --unpaced > "$work/mp4.ts" \
  2> "$work/mp4.log" || fail "play of the MP4 title: $(tail -3 "$work/mp4.log")"
grep -q 'switch 120p -> 180p at .*: sustained headroom' "$work/mp4.log" && grep -q 'switch 180p -> 240p at' "$work/mp4.log" ||
  fail "no step up: $(grep -E 'abr|segments' "$work/mp4.log")"
check_stream "$work/mp4.ts"
for k in 0 1; do  # both audio languages, every packet of each
  got=$(ffprobe -v error -select_streams "a:$k" -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$work/mp4.ts" | awk 'NF { print; exit }')
  want=$(ffprobe -v error -select_streams "a:$k" -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$work/ladder/ladder - 240p.mp4")
  [[ $got == "$want" ]] || fail "audio $k: $got packets of $want"
done
pass "3 MP4 renditions, 2 steps up, remuxed segment by segment: every frame 40 ms apart, continuous counters, both audio streams whole"

step "rdmasrc with the title's URI: the switches on the bus, DISCONT buffers, and pinned byte for byte"
export GST_PLUGIN_PATH=$build/client/gst GST_REGISTRY=$work/gst-registry.bin
uri="rdma://127.0.0.1/Films/Ladder"
gst-launch-1.0 -q rdmasrc uri="$uri" transport=udp udp-port="$udp" rendition=120p ! filesink location="$work/gst-pinned.ts" ||
  fail "rdmasrc rendition=120p"
cmp "$work/gst-pinned.ts" "$dir/Ladder - 120p.ts" || fail "rdmasrc rendition=120p is not the 120p file"
gst-launch-1.0 -m -v rdmasrc uri="$uri" transport=udp udp-port="$udp" ! identity silent=false ! tsdemux ! h264parse ! avdec_h264 ! \
  fakesink sync=false > "$work/gst.log" 2>&1 || fail "rdmasrc with the title: $(tail -5 "$work/gst.log")"
switches=$(grep -c 'rdmasrc-rendition-switch, from=(string)[0-9p]*, to=(string)[0-9p]*, reason=(string)"sustained\\ headroom"' "$work/gst.log" || true)
[[ $switches -eq 2 ]] || fail "rdmasrc posted $switches switches: $(grep -m3 rendition-switch "$work/gst.log")"
discont=$(grep -c 'identity0: last-message = chain .*flags: [0-9a-f]* discont' "$work/gst.log" || true)
[[ $discont -ge 2 ]] || fail "no DISCONT buffer after the switches ($discont): $(grep -m3 'identity0' "$work/gst.log")"
pass "rdmasrc: rendition=120p byte for byte; adaptive: 2 switches posted on the bus, $discont DISCONT buffers, decoded by tsdemux and avdec_h264"

step "what cannot be played is refused with the reason"
play --rendition 4k > /dev/null 2> "$work/bad.log" && fail "an unknown rendition played"
grep -q "title 'Films/Ladder' has no rendition '4k'; it has 240p, 180p, 120p" "$work/bad.log" || fail "$(tail -2 "$work/bad.log")"
play --start 99 > /dev/null 2> "$work/bad.log" && fail "--start past the title's end played"
grep -q -- "title 'Films/Ladder' is 30.0 s long: it has no 99.0 s" "$work/bad.log" || fail "$(tail -2 "$work/bad.log")"
pass "an unknown rendition and a start past the end are refused"

step "--start: the title from its segment at 10 s, the file's tables first"
play --start 10 --unpaced > "$work/start.ts" 2> "$work/start.log" || fail "play --start 10: $(tail -3 "$work/start.log")"
file_first=$(ffprobe -v error -select_streams v:0 -show_entries frame=pts_time -of csv=p=0 -read_intervals '%+#1' "$dir/Ladder - 240p.ts" | awk 'NF { print; exit }')
ffprobe -v error -select_streams v:0 -show_entries frame=pts_time -of csv=p=0 "$work/start.ts" > "$work/start.frames" 2> "$work/start.err"
[[ ! -s $work/start.err ]] || fail "decoding the stream from 10 s: $(head -3 "$work/start.err")"
frames=$(ffprobe -v error -select_streams v:0 -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$dir/Ladder - 240p.ts" | awk 'NF { print; exit }')
awk -v first="$file_first" -v want=$((frames - 250)) 'NF { if (!n) t0 = $1; else if ($1 - last > 0.041 || $1 <= last) bad = 1; last = $1; n++ }
  END { printf "%d frames from %.3f s (the file from %.3f s)\n", n, t0 - first, first; if (bad || n != want || t0 - first < 9.99 || t0 - first > 10.01) exit 1 }' \
  "$work/start.frames" || fail "the stream from --start 10 is not the title's last 20 s"
/usr/bin/python3 "$(dirname "$0")/ts_continuity.py" "$work/start.ts" || fail "continuity counters from --start 10"
pass "--start 10: every frame from the keyframe at 10 s, decodable from its first packet, counters continuous"
