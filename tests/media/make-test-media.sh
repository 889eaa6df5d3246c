#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Test fixture: make-test-media.sh DIR [--expectations GST_SEEK_FRAMES]: the media every media test
# reads, generated (never downloaded) into DIR, which the g++ tree, the sanitizer tree and the
# Soft-RoCE guest share (recipe stamps keep what is there):
#   480p H.264/AAC, 60 s, in MP4, faststart MP4, fragmented MP4, MPEG-TS and Matroska;
#   a 10 s WebM (VP9/Opus); a title of three constant-rate MPEG-TS renditions (title-shaped/);
#   garbage, empty and truncated files.
# With --expectations, also what the media hold (make-expectations.sh: frame counts, framemd5s,
# GStreamer's frames after seeks), for the guest's tests to compare against.
set -euo pipefail
dir=$1 gst_seek_frames=
[[ ${2:-} == --expectations ]] && gst_seek_frames=${3:?--expectations needs the gst_seek_frames program}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
"$here/../../media/generate-test-media.sh" --out "$dir" --duration 60 --variants 480p
# A light movie for the players that decode every frame under TCG (playbin over rdmasrc, filesrc
# over vod-mount): a twelfth of the 480p movie's decoding.
"$here/../../media/generate-test-media.sh" --out "$dir" --duration 20 --variants 240p --containers mp4,ts,mkv
if [[ ! -f $dir/small.webm ]]; then
  ffmpeg -hide_banner -loglevel error -nostdin -y \
    -f lavfi -i "testsrc2=size=320x240:rate=25:duration=10" -f lavfi -i "sine=frequency=300:sample_rate=48000:duration=10" \
    -c:v libvpx-vp9 -threads 1 -deadline realtime -cpu-used 8 -b:v 300k -g 50 -keyint_min 50 \
    -c:a libopus -b:a 48k -fflags +bitexact -map_metadata -1 "$dir/small.webm.tmp.webm"
  mv "$dir/small.webm.tmp.webm" "$dir/small.webm"
fi
# A title of three constant-rate MPEG-TS renditions, for adaptive bitrate on a shaped link.
"$here/make-shaped-title.sh" "$dir/title-shaped"
# Not media, and damaged media (deterministic bytes, so failures reproduce).
[[ -f $dir/garbage.bin ]] || head -c 1000000 < <(yes 'rdma-vod garbage 0123456789' | tr -d '\n') > "$dir/garbage.bin"
[[ -f $dir/empty.bin ]] || : > "$dir/empty.bin"
# Cut again only when the movie they are cut from is newer (the directory is shared: files that
# other tests may be reading are not rewritten for nothing).
ts=$dir/test-480p-60s.ts mp4=$dir/test-480p-60s.mp4
[[ $dir/truncated.ts -nt $ts ]] || head -c $(( $(stat -c %s "$ts") * 4 / 10 )) "$ts" > "$dir/truncated.ts"
[[ $dir/truncated-no-moov.mp4 -nt $mp4 ]] || head -c $(( $(stat -c %s "$mp4") / 2 )) "$mp4" > "$dir/truncated-no-moov.mp4"
if [[ -n $gst_seek_frames ]]; then "$here/make-expectations.sh" "$dir" "$gst_seek_frames"; fi
echo "test media ready in $dir"
