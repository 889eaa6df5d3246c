#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A title played as one stream (TitleReader, adaptive bitrate over the transport's Reads), natively
# over Write-Record on loopback (vod-server --no-rdma): a 30 s ladder of three MPEG-TS renditions
# (vod-media ladder, remuxed to TS with their two audio streams).
#  - pinned (--rendition 120p) the stream is the rendition's file, byte for byte, with no switch;
#  - unpaced, loopback's goodput has headroom for every rendition: it starts at the lowest and steps
#    up one rendition at a time after sustained headroom (120p -> 180p -> 240p), each switch logged
#    with its reason, and the stream decodes (ffprobe) with every frame, 40 ms after the one before
#    across the switches, the pictures changing size at each, and every PID's continuity counters
#    continuous (a TS parser here);
#  - rdmasrc with the title's URI: rendition=120p is the file byte for byte; adaptive, its two
#    switches are element messages on the bus and mark buffers DISCONT, and avdec_h264 decodes it;
#  - a rendition that is not in the title, and --start on a title, are refused with the reason.
source "$(dirname "$0")/../hls/native_proxy_lib.sh"
source "$(dirname "$0")/../hls/title_fixture.sh"
dir=$work/media/Films/Ladder

step "a ladder of three MPEG-TS renditions"
make_title "$work/ladder" 30 426x240 240p,180p,120p
mkdir -p "$dir"
for r in 240p 180p 120p; do
  ffmpeg -v error -i "$work/ladder/ladder - $r.mp4" -map 0:v -map 0:a -c copy -f mpegts "$dir/Ladder - $r.ts"
done
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
want=$(ffprobe -v error -select_streams v:0 -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$dir/Ladder - 240p.ts" | awk 'NF { print; exit }')
ffprobe -v error -select_streams v:0 -show_entries frame=pts_time,width -of csv=p=0 "$work/abr.ts" > "$work/frames" 2> "$work/frames.err"
[[ ! -s $work/frames.err ]] || fail "decoding the stream: $(head -3 "$work/frames.err")"
awk -F, -v want="$want" 'NF >= 2 { if (n && ($1 - last > 0.041 || $1 <= last)) { print "a gap or a step back at " last " -> " $1; bad = 1 }
                   if (n && $2 != width) sizes = sizes " " $2; last = $1; width = $2; n++ }
         END { print n " frames, widths changing to" sizes; if (bad || n != want || sizes != " 320 426") exit 1 }' "$work/frames" ||
  fail "the stream is not continuous ($want frames wanted)"
/usr/bin/python3 - "$work/abr.ts" <<'PY' || fail "continuity counters"
import sys
data = open(sys.argv[1], "rb").read()
last, bad = {}, 0
for at in range(0, len(data) - 187, 188):
    p = data[at:at + 188]
    if p[0] != 0x47:
        sys.exit(f"no sync byte at {at}")
    pid, cc, payload = ((p[1] & 0x1f) << 8) | p[2], p[3] & 0x0f, p[3] & 0x10
    if pid == 0x1fff:
        continue
    if pid in last:
        want = (last[pid] + 1) % 16 if payload else last[pid]
        if cc != want:
            bad += 1
            print(f"PID {pid:#x} at byte {at}: counter {cc}, {want} expected")
    if payload:
        last[pid] = cc
print(f"{len(data) // 188} packets, {len(last)} PIDs, {bad} counter breaks")
sys.exit(1 if bad else 0)
PY
pass "2 steps up (120p, 180p, 240p); $want frames 40 ms apart; continuity counters continuous"

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
play --start 5 > /dev/null 2> "$work/bad.log" && fail "--start on a title played"
grep -q -- "--start does not apply to a title" "$work/bad.log" || fail "$(tail -2 "$work/bad.log")"
pass "an unknown rendition and --start are refused"
