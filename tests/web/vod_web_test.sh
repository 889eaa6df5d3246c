#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# vod-proxy's web pages, natively on loopback (vod-server --no-rdma, vod-proxy --transport udp):
#   - every poster and timeline picture decodes with ffprobe as a JPEG of the configured width
#   - a movie whose pictures cannot be decoded (an MP4 whose picture data is random) and a file that
#     is not media get the placeholder, which decodes too, with X-Thumbnail saying why
#   - a name with <script>, quotes, & and non-ASCII is shown literally (curl and the browser)
#   - headless Chromium (browser_check.py): every picture on the catalog page loads, the MP4 plays
#     past 3 s, a seek to 30 s plays on, and so do the MPEG-TS and Matroska movies, all through the
#     browser's own HLS (and the TS from ?t=40); a live channel plays its LL-HLS past 3 s, within two
#     target durations of the live edge; screenshots are kept in
#     $VOD_ARTIFACT_DIR (default <build>/test-artifacts/web)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../hls/native_proxy_lib.sh"
artifacts=${VOD_ARTIFACT_DIR:-$build/test-artifacts/web}
for tool in /usr/bin/chromium /usr/bin/chromedriver; do [[ -x $tool ]] || fail "$tool is missing: scripts/install-deps.sh installs chromium and chromium-driver"; done
/usr/bin/python3 -c 'import selenium' 2>/dev/null || fail "Debian's python3-selenium is missing: scripts/install-deps.sh installs it"

media=$work/media
mkdir -p "$media" "$artifacts"
for f in test-480p-60s.mp4 test-480p-60s.ts test-480p-60s.mkv; do cp "$test_media/$f" "$media/"; done
hostile="<script>alert(\"x\") 'q' & é 日本.mp4"
cp "$test_media/test-480p-60s.mp4" "$media/$hostile"
head -c 300000 /dev/urandom > "$media/noise.bin"
# Damaged: the header (moov first) intact, every byte from the first video packet on random.
cp "$test_media/test-480p-60s.faststart.mp4" "$media/damaged.mp4"
first=$(ffprobe -v error -select_streams v:0 -show_entries packet=pos -of csv=p=0 -read_intervals '%+#1' "$media/damaged.mp4" | head -n 1)
size=$(stat -c %s "$media/damaged.mp4")
[[ $first =~ ^[0-9]+$ ]] || fail "no first video packet in damaged.mp4"
head -c $((size - first)) /dev/urandom | dd of="$media/damaged.mp4" bs=64k seek="$first" oflag=seek_bytes conv=notrunc status=none

# A live channel, by UDP multicast on loopback (a 12 s file the server loops): its watch page plays LL-HLS.
ffmpeg -v error -f lavfi -i "testsrc2=size=640x360:rate=25" -t 12 -c:v libx264 -preset veryfast -g 25 -pix_fmt yuv420p -f mpegts "$work/cam.ts"
group=239.255.$((RANDOM % 200 + 1)).$((RANDOM % 200 + 1)):$(free_port)
start_server_and_proxy "$media" --live "cam=file:$work/cam.ts" --live-multicast "$group" --live-multicast-interface 127.0.0.1 \
  -- --thumbnail-width 320 --udp-group "$group" --udp-interface 127.0.0.1

step "every picture decodes with ffprobe"
pictures=0
for m in test-480p-60s.mp4 test-480p-60s.ts test-480p-60s.mkv "$hostile"; do
  for path in poster/$(urlname "$m") $(for k in 0 1 2 3 4 5 6 7; do echo "strip/$k/$(urlname "$m")"; done); do
    curl -sf -D "$work/h" -o "$work/p.jpg" "$base/$path" || fail "GET /$path failed"
    grep -qi '^X-Thumbnail: placeholder' "$work/h" && fail "/$path is the placeholder: $(grep -i x-thumbnail "$work/h")"
    [[ $(ffprobe -v error -show_entries stream=codec_name,width,height -of csv=p=0 "$work/p.jpg") == mjpeg,320,180 ]] ||
      fail "/$path is not a 320x180 JPEG"
    pictures=$((pictures + 1))
  done
done
# The strip runs through the movie: its first and last pictures differ.
curl -sf -o "$work/s0.jpg" "$base/strip/0/test-480p-60s.mp4" && curl -sf -o "$work/s7.jpg" "$base/strip/7/test-480p-60s.mp4"
cmp -s "$work/s0.jpg" "$work/s7.jpg" && fail "strip frames 0 and 7 are the same picture"
pass "$pictures pictures (posters and 8-frame strips of 4 movies) are 320x180 JPEGs"

step "the placeholder for pictures that cannot be decoded"
for m in damaged.mp4 noise.bin; do
  curl -sf -D "$work/h" -o "$work/p.jpg" "$base/poster/$m" || fail "GET /poster/$m failed"
  grep -qi '^X-Thumbnail: placeholder: ' "$work/h" || fail "/poster/$m is not the placeholder"
  [[ $(ffprobe -v error -show_entries stream=codec_name -of csv=p=0 "$work/p.jpg") == mjpeg ]] || fail "the placeholder for $m does not decode"
  echo "$m: $(grep -i '^X-Thumbnail' "$work/h" | tr -d '\r')"
done
kill -0 "$proxy_pid" || fail "vod-proxy died on a damaged movie"
pass "damaged.mp4 and noise.bin get the placeholder, which decodes"

step "names are shown literally"
curl -sf -o "$work/index.html" "$base/"
grep -qF '&lt;script&gt;alert(&quot;x&quot;) &apos;q&apos; &amp; é 日本.mp4' "$work/index.html" || fail "the hostile name is not escaped on /"
grep -qF '<script>alert' "$work/index.html" && fail "markup from a name reached the page"
curl -sf -o "$work/watch.html" "$base/watch/$(urlname "$hostile")" || fail "no watch page for the hostile name"
grep -qF '<script>alert' "$work/watch.html" && fail "markup from a name reached the watch page"
grep -qF '<title>&lt;script&gt;alert' "$work/watch.html" || fail "the watch page's title is not the escaped name"
pass "escaped on the catalog and watch pages"

step "headless Chromium"
code=$(curl -s --max-time 20 -o "$work/live.m3u8" -w '%{http_code}' "$base/hls/live/cam/index.m3u8" || true)
if [[ $code == 200 ]]; then
  export VOD_LIVE_CHANNEL=cam VOD_LIVE_TARGET=$(sed -n 's/^#EXT-X-TARGETDURATION://p' "$work/live.m3u8")
else
  echo "SKIP (the live channel's part): multicast on loopback does not work here: HTTP $code, $(cat "$work/live.m3u8")"
fi
timeout 400 /usr/bin/python3 "$here/browser_check.py" "$base" "$artifacts" test-480p-60s.mp4 test-480p-60s.ts test-480p-60s.mkv \
  "$hostile" test-480p-60s.mp4 damaged.mp4 || fail "the browser check failed"
for shot in catalog watch watch-after-seek watch-ts watch-ts-after-seek watch-mkv watch-mkv-after-seek; do
  [[ $(ffprobe -v error -show_entries stream=codec_name -of csv=p=0 "$artifacts/$shot.png") == png ]] || fail "no screenshot $shot.png"
done
pass "screenshots in $artifacts"
