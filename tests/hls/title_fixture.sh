# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the tests of titles (tests/hls/titles_test.sh, tests/web/titles_web_test.sh), after
# native_proxy_lib.sh. make_title DIR SECONDS SIZE RENDITIONS: a title in folder DIR (named after
# it) made by `vod-media ladder` from a testsrc2 source of SIZE (WxH) and SECONDS, with two audio
# languages (a 440 Hz tone tagged eng, a 660 Hz one tagged ger), for RENDITIONS ("240p,120p"); and
# its sidecar subtitles, NAME.en.srt with the cue "Hello" and NAME.sv.vtt with "Hej", each shown
# from 1 s to 4 s of every 5 s. The ladder's log is in $work/ladder.log.
make_title() {
  local dir=$1 seconds=$2 size=$3 renditions=$4 name
  name=$(basename "$dir")
  ffmpeg -v error -y -f lavfi -i "testsrc2=size=$size:rate=25" -f lavfi -i sine=f=440:sample_rate=48000 -f lavfi -i sine=f=660:sample_rate=48000 \
    -t "$seconds" -map 0 -map 1 -map 2 -c:v libx264 -preset ultrafast -g 300 -c:a aac -metadata:s:a:0 language=eng -metadata:s:a:1 language=ger \
    "$work/source.mkv"
  "$build/media/vod-media" ladder "$work/source.mkv" "$dir" --renditions "$renditions" 2> "$work/ladder.log" ||
    fail "ladder: $(cat "$work/ladder.log")"
  local t srt="" vtt=$'WEBVTT\n' n=1
  for ((t = 1; t + 3 <= seconds; t += 5, n++)); do
    srt+=$(printf '%d\n00:%02d:%02d,000 --> 00:%02d:%02d,000\nHello\n\n' "$n" $((t / 60)) $((t % 60)) $(((t + 3) / 60)) $(((t + 3) % 60)))$'\n\n'
    vtt+=$'\n'$(printf '00:%02d:%02d.000 --> 00:%02d:%02d.000\nHej\n' $((t / 60)) $((t % 60)) $(((t + 3) / 60)) $(((t + 3) % 60)))$'\n'
  done
  printf '%s' "$srt" > "$dir/$name.en.srt"
  printf '%s' "$vtt" > "$dir/$name.sv.vtt"
}
