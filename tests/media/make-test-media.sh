#!/usr/bin/env bash
# Test fixture: the media every media test reads, generated (never downloaded) into DIR.
#   480p H.264/AAC, 60 s, in MP4, faststart MP4, fragmented MP4, MPEG-TS and Matroska;
#   a 10 s WebM (VP9/Opus); garbage, empty and truncated files.
set -euo pipefail
dir=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
"$here/../../media/generate-test-media.sh" --out "$dir" --duration 60 --variants 480p
if [[ ! -f $dir/small.webm ]]; then
  ffmpeg -hide_banner -loglevel error -nostdin -y \
    -f lavfi -i "testsrc2=size=320x240:rate=25:duration=10" -f lavfi -i "sine=frequency=300:sample_rate=48000:duration=10" \
    -c:v libvpx-vp9 -threads 1 -deadline realtime -cpu-used 8 -b:v 300k -g 50 -keyint_min 50 \
    -c:a libopus -b:a 48k -fflags +bitexact -map_metadata -1 "$dir/small.webm.tmp.webm"
  mv "$dir/small.webm.tmp.webm" "$dir/small.webm"
fi
# Not media, and damaged media (deterministic bytes, so failures reproduce).
[[ -f $dir/garbage.bin ]] || head -c 1000000 < <(yes 'rdma-vod garbage 0123456789' | tr -d '\n') > "$dir/garbage.bin"
: > "$dir/empty.bin"
ts=$dir/test-480p-60s.ts mp4=$dir/test-480p-60s.mp4
head -c $(( $(stat -c %s "$ts") * 4 / 10 )) "$ts" > "$dir/truncated.ts"
head -c $(( $(stat -c %s "$mp4") / 2 )) "$mp4" > "$dir/truncated-no-moov.mp4"
echo "test media ready in $dir"
