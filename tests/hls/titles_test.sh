#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Titles, natively (vod-server --no-rdma: Write-Record over UDP on loopback). In a tree with spaces
# and non-ASCII letters, `vod-media ladder` makes a title of three renditions from a source with two
# audio languages, beside two sidecar subtitles; a pair of movies with different GOPs stands beside it.
#  - the server lists the title (three renditions, two audio and two subtitle tracks, languages in
#    BCP 47), and says the pair's first keyframe that differs; vod-client list shows the title;
#  - /hls/TITLE/master.m3u8 passes the playlist checker with a variant per rendition (CODECS,
#    RESOLUTION, FRAME-RATE), and every variant's media playlist lists the same segments;
#  - ffmpeg decodes every variant through the master playlist, every frame, and each audio track,
#    a rendition of its own (EXT-X-MEDIA), with its language;
#  - the sidecars are a subtitles group of segmented WebVTT that ffmpeg reads back;
#  - each rendition has an I-frame playlist whose entries decode to exactly one keyframe each;
#  - /dash/TITLE/manifest.mpd reads in ffmpeg's DASH demuxer with no error line: every representation
#    decodes, the audio languages and the WebVTT text tracks are there;
#  - segment 1 of the top rendition followed by segment 2 of the bottom one decodes in one decoder
#    with continuous timestamps (the SPS and PPS in band, as a player's new init segment gives them);
#  - the pair is not a title (no master.m3u8 of its folder), and each of its files still plays alone.
source "$(dirname "$0")/native_proxy_lib.sh"
source "$(dirname "$0")/title_fixture.sh"
here=$(cd "$(dirname "$0")" && pwd)
media=$work/media
title="Films/Läder (2024)"
dir=$media/$title

step "vod-media ladder: three renditions with forced, aligned keyframes"
make_title "$dir" 12 426x240 240p,180p,120p,1080p
grep -q '1080p left out: taller than' "$work/ladder.log" || fail "the ladder did not say it left 1080p out: $(cat "$work/ladder.log")"
grep -q 'ladder: 100%' "$work/ladder.log" || fail "the ladder showed no progress"
for r in 240p 180p 120p; do [[ -s "$dir/Läder (2024) - $r.mp4" ]] || fail "no $r rendition"; done
for r in 240p 120p; do
  "$build/media/vod-media" index "$dir/Läder (2024) - $r.mp4" | awk '!/^#/ { print $1 }' > "$work/keyframes-$r"
done
cmp -s "$work/keyframes-240p" "$work/keyframes-120p" || fail "the renditions' keyframes differ"
[[ $(wc -l < "$work/keyframes-240p") -ge 6 ]] || fail "expected a keyframe every 2 s in 12 s (the source has one): $(cat "$work/keyframes-240p")"
mkdir -p "$media/Films/Pair"
ffmpeg -v error -y -f lavfi -i testsrc2=size=320x180:rate=25 -t 12 -c:v libx264 -preset ultrafast -g 50 "$media/Films/Pair/Pair - hi.mp4"
ffmpeg -v error -y -f lavfi -i testsrc2=size=160x90:rate=25 -t 12 -c:v libx264 -preset ultrafast -g 37 -keyint_min 37 -sc_threshold 0 \
  "$media/Films/Pair/Pair - lo.mp4"
pass "3 renditions, keyframes at the same $(wc -l < "$work/keyframes-240p") times; 1080p left out (no upscaling)"

start_server_and_proxy "$media" --
udp=$(grep -o 'UDP [0-9]* with' "$work/server.log" | grep -o '[0-9]*')

step "the server lists the title and says why the pair is not one"
grep -q "title 'Films/Läder (2024)': 3 renditions (240p, 180p, 120p), 2 audio and 2 subtitle tracks" "$work/server.log" ||
  fail "no title in the server's log"
grep -q "'Films/Pair' is served as separate movies, not as a title: keyframes are not aligned: keyframe 1 is at" "$work/server.log" ||
  fail "the misaligned pair was not refused with its first differing keyframe"
"$build/client/vod-client" list rdma://127.0.0.1 --transport udp --udp-port "$udp" > "$work/list"
grep -q '^1 titles$' "$work/list" && grep -Eq '^Films/Läder \(2024\) +240p 180p 120p +en de +en sv$' "$work/list" ||
  fail "vod-client list: $(cat "$work/list")"
pass "title 'Films/Läder (2024)' with audio en, de and subtitles en, sv; the pair refused at keyframe 1"

step "the multivariant playlist: a variant per rendition, each listing the same segments"
hls=$base/hls/$(urlname "Films")/$(urlname "Läder (2024)")
curl -sf "$hls/master.m3u8" -o "$work/master.m3u8" || fail "no master.m3u8 of the title"
/usr/bin/python3 "$here/check_playlist.py" "$work/master.m3u8" "title master.m3u8"
[[ $(grep -c '^#EXT-X-STREAM-INF:' "$work/master.m3u8") -eq 3 ]] || fail "$(cat "$work/master.m3u8")"
grep -q 'RESOLUTION=426x240,FRAME-RATE=25.000,' "$work/master.m3u8" && grep -q 'CODECS="avc1.64[0-9a-f]*,mp4a.40.2"' "$work/master.m3u8" ||
  fail "the variants lack RESOLUTION, FRAME-RATE or CODECS: $(cat "$work/master.m3u8")"
variants=()
while read -r uri; do variants+=("$uri"); done < <(grep -v '^#' "$work/master.m3u8")
for i in "${!variants[@]}"; do
  curl -sf "$hls/${variants[$i]}" -o "$work/variant-$i.m3u8" || fail "no ${variants[$i]}"
  /usr/bin/python3 "$here/check_playlist.py" "$work/variant-$i.m3u8" "${variants[$i]}"
done
/usr/bin/python3 "$here/check_playlist.py" --same-segments "$work"/variant-*.m3u8
pass "3 variants, checked, with the same $(grep -c '^#EXTINF' "$work/variant-0.m3u8") segments"

step "ffmpeg decodes every variant, every frame"
want=$(ffprobe -v error -select_streams v:0 -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$dir/Läder (2024) - 240p.mp4")
for i in "${!variants[@]}"; do
  frames=$(ffmpeg -v error -i "$hls/${variants[$i]}" -map 0:v:0 -f framemd5 - 2> "$work/decode.err" | grep -vc '^#')
  [[ ! -s $work/decode.err && $frames == "$want" ]] || fail "${variants[$i]}: $frames frames of $want: $(head -3 "$work/decode.err")"
done
pass "${#variants[@]} variants, $want frames each, no decoder error"

step "the audio tracks are renditions of their own, each decoded whole, with its language"
grep -q '^#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="en (1)",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,CHANNELS="1",URI="audio-0/index.m3u8"$' \
  "$work/master.m3u8" && grep -q 'LANGUAGE="de",DEFAULT=NO,.*URI="audio-1/index.m3u8"$' "$work/master.m3u8" &&
  [[ $(grep -c ',AUDIO="audio",SUBTITLES="subs"$' "$work/master.m3u8") -eq 3 ]] || fail "no audio group in $(cat "$work/master.m3u8")"
want_audio=$(ffprobe -v error -select_streams a:0 -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$dir/Läder (2024) - 240p.mp4")
for k in 0 1; do
  curl -sf "$hls/audio-$k/index.m3u8" -o "$work/audio-$k.m3u8" || fail "no audio-$k/index.m3u8"
  /usr/bin/python3 "$here/check_playlist.py" "$work/audio-$k.m3u8" "audio-$k/index.m3u8"
  packets=$(ffprobe -v error -select_streams a:0 -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$hls/audio-$k/index.m3u8" 2> "$work/audio.err" | awk 'NF { print; exit }')
  [[ ! -s $work/audio.err && $packets -ge $((want_audio - 2)) && $packets -le $want_audio ]] || fail "audio-$k: $packets packets of $want_audio: $(head -3 "$work/audio.err")"
  { curl -sf "$hls/audio-$k/init.mp4" && curl -sf "$hls/audio-$k/seg-0.m4s"; } > "$work/audio-$k.mp4"
  language=$(ffprobe -v error -show_entries stream=codec_type:stream_tags=language -of csv=p=0 "$work/audio-$k.mp4")
  [[ $language == "audio,$( ((k == 0)) && echo eng || echo ger)" ]] || fail "audio-$k holds $language"
done
/usr/bin/python3 "$here/check_playlist.py" --same-segments "$work/variant-0.m3u8" "$work"/audio-*.m3u8
pass "audio-0 (en) and audio-1 (de): $want_audio packets each, alone in their segments, the variants' segment times"

step "the sidecar subtitles are a WebVTT group at the title's segment times"
grep -q '^#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="en (1)",LANGUAGE="en",DEFAULT=NO,AUTOSELECT=YES,URI="subtitles-0/index.m3u8"$' \
  "$work/master.m3u8" && grep -q 'TYPE=SUBTITLES,.*LANGUAGE="sv",.*URI="subtitles-1/index.m3u8"$' "$work/master.m3u8" &&
  [[ $(grep -c ',SUBTITLES="subs"$' "$work/master.m3u8") -eq 3 ]] || fail "no subtitles group in $(cat "$work/master.m3u8")"
for k in 0 1; do
  curl -sf "$hls/subtitles-$k/index.m3u8" -o "$work/subtitles-$k.m3u8" || fail "no subtitles-$k/index.m3u8"
  /usr/bin/python3 "$here/check_playlist.py" "$work/subtitles-$k.m3u8" "subtitles-$k/index.m3u8"
  curl -sf "$hls/subtitles-$k/seg-0.vtt" -o "$work/seg-$k.vtt" || fail "no subtitles-$k/seg-0.vtt"
  # The cue, at the movie's time; X-TIMESTAMP-MAP puts that time 0 where the fMP4 segments have it.
  cue=$( ((k == 0)) && echo Hello || echo Hej)
  [[ $(head -2 "$work/seg-$k.vtt") == $'WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:900000,LOCAL:00:00:00.000' ]] &&
    grep -qx '00:00:01.000 --> 00:00:04.000' "$work/seg-$k.vtt" && grep -qx "$cue" "$work/seg-$k.vtt" || fail "subtitles-$k/seg-0.vtt: $(cat "$work/seg-$k.vtt")"
  ffmpeg -v error -i "$hls/subtitles-$k/index.m3u8" -f webvtt - > "$work/read-$k.vtt" 2> "$work/read.err" || true
  [[ ! -s $work/read.err ]] && grep -qx "$cue" "$work/read-$k.vtt" || fail "ffmpeg reads subtitles-$k: $(head -3 "$work/read.err")"
  [[ $(curl -s -o /dev/null -w '%{http_code}' "$hls/subtitles-$k/seg-3.vtt") == 404 ]] || fail "a segment past the last answered"
done
/usr/bin/python3 "$here/check_playlist.py" --same-segments "$work/variant-0.m3u8" "$work"/subtitles-*.m3u8
pass "subtitles-0 (en, from .srt) and subtitles-1 (sv, from .vtt): checked, their cues read back by ffmpeg"

step "I-frame playlists: every entry is one keyframe, alone"
[[ $(grep -c '^#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=[0-9]*,CODECS="avc1\.[0-9a-f]*",RESOLUTION=[0-9x]*,URI="video-[0-9]*p/iframes.m3u8"$' \
  "$work/master.m3u8") -eq 3 ]] || fail "no I-frame streams in $(cat "$work/master.m3u8")"
curl -sf "$hls/video-180p/iframes.m3u8" -o "$work/iframes.m3u8" || fail "no video-180p/iframes.m3u8"
/usr/bin/python3 "$here/check_playlist.py" "$work/iframes.m3u8" "video-180p/iframes.m3u8"
grep -qx '#EXT-X-I-FRAMES-ONLY' "$work/iframes.m3u8" || fail "not an I-frame playlist: $(head "$work/iframes.m3u8")"
entries=$(grep -c '^iframe-[0-9]*\.m4s$' "$work/iframes.m3u8")
[[ $entries -eq $(wc -l < "$work/keyframes-240p") ]] || fail "$entries entries for $(wc -l < "$work/keyframes-240p") keyframes"
curl -sf "$hls/video-180p/init.mp4" -o "$work/iframe-init.mp4"
for ((i = 0; i < entries; i++)); do
  { cat "$work/iframe-init.mp4" && curl -sf "$hls/video-180p/iframe-$i.m4s"; } > "$work/iframe.mp4"
  frames=$(ffprobe -v error -select_streams v:0 -show_entries frame=key_frame,pict_type -of csv=p=0 "$work/iframe.mp4" 2> "$work/iframe.err")
  [[ $(wc -l <<< "$frames") -eq 1 && $frames == 1,I* && ! -s $work/iframe.err ]] || fail "iframe-$i.m4s decodes to '$frames' $(head -2 "$work/iframe.err")"
done
pass "3 I-frame streams; video-180p's $entries entries each decode to exactly one keyframe"

step "DASH: the same segments in a manifest that ffmpeg's DASH demuxer reads without an error line"
dash=$base/dash/$(urlname "Films")/$(urlname "Läder (2024)")
curl -sf "$dash/manifest.mpd" -o "$work/manifest.mpd" || fail "no manifest.mpd"
grep -q 'type="static"' "$work/manifest.mpd" && [[ $(grep -c 'segmentAlignment="true" startWithSAP="1"' "$work/manifest.mpd") -eq 3 ]] &&
  [[ $(grep -c '<Representation id="[0-9]*p"' "$work/manifest.mpd") -eq 3 ]] && grep -q 'contentType="text" mimeType="text/vtt".* lang="sv"' "$work/manifest.mpd" ||
  fail "manifest.mpd: $(head -c 3000 "$work/manifest.mpd")"
ffprobe -v error -show_entries stream=codec_type,codec_name:stream_tags=language -of csv=p=0 "$dash/manifest.mpd" > "$work/dash-streams" 2> "$work/dash.err"
[[ ! -s $work/dash.err ]] || fail "ffmpeg's DASH demuxer: $(head -3 "$work/dash.err")"
for want_stream in 'h264,video' 'aac,audio,en' 'aac,audio,de' 'webvtt,subtitle,en' 'webvtt,subtitle,sv'; do
  grep -q "^$want_stream" "$work/dash-streams" || fail "no $want_stream stream in the manifest: $(cat "$work/dash-streams")"
done
for v in 0 1 2; do
  frames=$(ffmpeg -v error -i "$dash/manifest.mpd" -map "0:v:$v" -f framemd5 - 2> "$work/decode.err" | grep -vc '^#')
  [[ ! -s $work/decode.err && $frames == "$want" ]] || fail "DASH video $v: $frames frames of $want: $(head -3 "$work/decode.err")"
done
# To a file, then grep: grep -q leaving at the first cue would break ffmpeg's pipe.
ffmpeg -v error -i "$dash/manifest.mpd" -map 0:s:1 -f webvtt "$work/dash-sv.vtt" 2> "$work/decode.err" || true
[[ ! -s $work/decode.err ]] && grep -qx Hej "$work/dash-sv.vtt" || fail "no Swedish cue through DASH: $(head -3 "$work/decode.err")"
curl -sf "$base/dash/Films/Pair/$(urlname "Pair - hi.mp4")/manifest.mpd" -o "$work/movie.mpd" || fail "no manifest of a single movie"
ffprobe -v error "$base/dash/Films/Pair/$(urlname "Pair - hi.mp4")/manifest.mpd" 2> "$work/dash.err" && [[ ! -s $work/dash.err ]] || fail "a movie's manifest: $(head -3 "$work/dash.err")"
pass "3 video representations ($want frames each), 2 audio (en, de), 2 WebVTT (en, sv); a single movie's manifest reads too"

step "segment 1 of 240p, then segment 2 of 120p: one decoder, continuous timestamps"
top=$hls/${variants[0]%/index.m3u8}
bottom=$hls/${variants[2]%/index.m3u8}
{ curl -sf "$top/init.mp4" && curl -sf "$top/seg-1.m4s"; } > "$work/a.mp4"
{ curl -sf "$bottom/init.mp4" && curl -sf "$bottom/seg-2.m4s"; } > "$work/b.mp4"
for part in a b; do  # Annex B with the SPS and PPS in band: what a player hands its decoder at a new init
  ffmpeg -v error -y -i "$work/$part.mp4" -map 0:v -c copy -bsf:v h264_mp4toannexb -copyts -muxdelay 0 -f mpegts "$work/$part.ts"
done
cat "$work/a.ts" "$work/b.ts" > "$work/ab.ts"
count() { ffprobe -v error -select_streams v:0 -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$1" | awk 'NF { print; exit }'; }
parts=$(($(count "$work/a.ts") + $(count "$work/b.ts")))
ffprobe -v error -select_streams v:0 -show_entries frame=pts_time,width -of csv=p=0 "$work/ab.ts" > "$work/frames" 2> "$work/frames.err"
[[ ! -s $work/frames.err ]] || fail "decoding the switch: $(head -3 "$work/frames.err")"
awk -F, -v parts="$parts" 'NF >= 2 { if (n && ($1 - last > 0.041 || $1 <= last)) { print "a gap or a step back at " last " -> " $1; bad = 1 }
                   if (n && $2 != width) switches++; last = $1; width = $2; n++ }
         END { if (bad || n != parts || n < 150 || switches != 1) { print n " frames, " switches " switches"; exit 1 } }' "$work/frames" ||
  fail "the switch is not continuous: $(awk -F, 'NF>=2' "$work/frames" | sed -n '98,103p' | tr '\n' ' ')"
pass "$parts frames, 426 then 214 wide, each 40 ms after the one before"

step "the pair is two movies, not a title"
code=$(curl -s -o /dev/null -w '%{http_code}' "$base/hls/Films/Pair/master.m3u8")
[[ $code == 404 ]] || fail "the pair's folder answered $code"
for f in "Pair - hi.mp4" "Pair - lo.mp4"; do
  curl -sf "$base/hls/Films/Pair/$(urlname "$f")/master.m3u8" -o "$work/pair.m3u8" || fail "no playlist of '$f' alone"
  [[ $(grep -c '^#EXT-X-STREAM-INF:' "$work/pair.m3u8") -eq 1 ]] || fail "'$f': $(cat "$work/pair.m3u8")"
done
pass "404 for the folder, one variant for each movie"
