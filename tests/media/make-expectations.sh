#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# make-expectations.sh MEDIA_DIR [GST_SEEK_FRAMES]: what the generated test media hold, computed once
# and natively (the test media are bit-exact, so their decodes are too), into MEDIA_DIR/expected/.
# The RDMA tests in the Soft-RoCE guest compare against these files instead of decoding a reference
# under TCG. One file per fact, named MOVIE.WHAT:
#   video-frames            video frames ffprobe decodes (-count_frames); the only fact of the 240p movies
#   audio-packets           audio packets of the first audio stream
#   ss30-t5.video.framemd5  ffmpeg -ss 30 -i MOVIE -t 5 -map 0:v -f framemd5 (decoded video)
#   ss30-t5.packets.framemd5  the same window, every stream's packets (-c copy): audio included, as
#                           packets (a float audio decoder's bits may differ between CPUs' SIMD paths)
#   ss30-t3.video.framemd5  ffmpeg -ss 30 -i MOVIE -t 3 -map 0:v -f framemd5 (the HLS seek check)
#   video.packet-md5s       the MD5 of every video packet, in order (-c copy)
#   video.frame-md5s        the MD5 of every decoded video frame, in order
#   keyframe-30s            (TS) the byte position of the last keyframe at or before 30 s
#   from-30s.video-frames   (TS) video frames decoded from that byte to the end
#   gst-seeks               (MP4, with GST_SEEK_FRAMES) filesrc's frames from the start and after
#                           flushing seeks to 10, 30 and 5 s (tests/rdma/gst_frames.hpp)
# A stamp of the tools' versions and this script keeps them; a change makes them again.
set -euo pipefail
dir=$1 gst_seek_frames=${2:-}
out=$dir/expected
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
movies=(test-480p-60s.ts test-480p-60s.mp4 test-480p-60s.mkv test-480p-60s.fragmented.mp4)
light=(test-240p-20s.ts test-240p-20s.mp4 test-240p-20s.mkv)  # video-frames only
stamp="$(md5sum < "${BASH_SOURCE[0]}" | cut -d' ' -f1) $(cat "$dir"/.test-480p-60s.recipe "$dir"/.test-240p-20s.recipe) $(ffmpeg -version | sed -n 1p)"
[[ -n $gst_seek_frames ]] && stamp+=" $(gst-launch-1.0 --version | sed -n 2p) gst $(md5sum < "$gst_seek_frames" | cut -d' ' -f1)"
if [[ -f $out/.stamp && "$(cat "$out/.stamp")" == "$stamp" ]]; then
  echo "make-expectations: $out is up to date"
  exit 0
fi
started=$SECONDS
rm -rf "$out.tmp"
mkdir -p "$out.tmp"
ff=(ffmpeg -hide_banner -nostdin -v error)
# Each movie's facts in a job of its own, two at a time (ffmpeg's decoders run one thread each here).
facts() {
  local m=$1 src=$dir/$1 dst=$out.tmp/$1
  ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$src" | sed -n 1p > "$dst.video-frames"
  ffprobe -v error -count_packets -select_streams a:0 -show_entries stream=nb_read_packets -of csv=p=0 "$src" | sed -n 1p > "$dst.audio-packets"
  "${ff[@]}" -ss 30 -i "$src" -t 5 -map 0:v -f framemd5 - > "$dst.ss30-t5.video.framemd5"
  "${ff[@]}" -ss 30 -i "$src" -t 5 -map 0 -c copy -f framemd5 - > "$dst.ss30-t5.packets.framemd5"
  "${ff[@]}" -ss 30 -i "$src" -t 3 -map 0:v -f framemd5 - > "$dst.ss30-t3.video.framemd5"
  "${ff[@]}" -i "$src" -map 0:v -c copy -f framemd5 - | awk -F, '/^0,/ { print $6 }' > "$dst.video.packet-md5s"
  "${ff[@]}" -i "$src" -map 0:v -f framemd5 - | awk -F, '/^0,/ { print $6 }' > "$dst.video.frame-md5s"
  if [[ $m == *.ts ]]; then
    local start_us pos
    start_us=$(ffprobe -v error -show_entries format=start_time -of csv=p=0 "$src" | awk '{ printf "%d", $1 * 1e6 }')
    pos=$(ffprobe -v error -select_streams v:0 -show_entries packet=pts_time,pos,flags -of csv=p=0 "$src" |
      awk -F, -v s="$start_us" '$3 ~ /K/ && $1 * 1e6 - s <= 30e6 { p = $2 } END { print p }')
    echo "$pos" > "$dst.keyframe-30s"
    tail -c +$((pos + 1)) "$src" | "${ff[@]}" -i - -map 0:v -f framemd5 - | grep -vc '^#' > "$dst.from-30s.video-frames"
  fi
  if [[ $m == test-480p-60s.mp4 && -n $gst_seek_frames ]]; then
    "$gst_seek_frames" "$src" 25 > "$dst.gst-seeks"
  fi
  echo "make-expectations: $m ($(cat "$dst.video-frames") video frames)"
}
pids=()
for m in "${movies[@]}"; do
  [[ -f $dir/$m ]] || { echo "make-expectations: $dir/$m is missing: make the media first ($here/make-test-media.sh)" >&2; exit 1; }
  facts "$m" &
  pids+=($!)
  if (( ${#pids[@]} == 2 )); then wait "${pids[0]}" || exit 1; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p" || exit 1; done
for m in "${light[@]}"; do
  [[ -f $dir/$m ]] || { echo "make-expectations: $dir/$m is missing: make the media first ($here/make-test-media.sh)" >&2; exit 1; }
  ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$dir/$m" | sed -n 1p > "$out.tmp/$m.video-frames"
done
# Nothing empty: a fact that did not come out is a failure here, not a puzzle in the guest.
for f in "$out.tmp"/*; do [[ -s $f ]] || { echo "make-expectations: $f came out empty" >&2; exit 1; }; done
echo "$stamp" > "$out.tmp/.stamp"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "make-expectations: $(ls "$out" | wc -l) facts in $out ($((SECONDS - started)) s)"
