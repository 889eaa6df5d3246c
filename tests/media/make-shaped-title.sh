#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# make-shaped-title.sh DIR: DIR/Shaped/, a title of three MPEG-TS renditions at constant rates (the
# muxer pads to -muxrate), keyframes every 2 s in each, 40 s with a tone: 360p at 4 Mbit/s, 270p at
# 1.2 and 180p at 0.4. For adaptive bitrate across a shaped link (tests/rdma/vod_abr_test.sh, and
# bench/abr-benchmarks.sh). Remade only when the recipe changes.
set -euo pipefail
shaped=$1/Shaped
recipe="360p:640x360:3000k:4000000 270p:480x270:900k:1200000 180p:320x180:250k:400000 40s g50"
[[ $(cat "$shaped/.recipe" 2>/dev/null) == "$recipe" ]] && exit 0
mkdir -p "$shaped"
for r in ${recipe% 40s*}; do
  IFS=: read -r label size video mux <<< "$r"
  ffmpeg -hide_banner -loglevel error -nostdin -y -f lavfi -i "testsrc2=size=$size:rate=25:duration=40" \
    -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=40" -c:v libx264 -preset ultrafast -b:v "$video" -maxrate "$video" \
    -bufsize "$video" -g 50 -keyint_min 50 -sc_threshold 0 -c:a aac -b:a 64k -fflags +bitexact -map_metadata -1 \
    -f mpegts -muxrate "$mux" "$shaped/.Shaped - $label.ts"
  mv "$shaped/.Shaped - $label.ts" "$shaped/Shaped - $label.ts"
done
echo "$recipe" > "$shaped/.recipe"
