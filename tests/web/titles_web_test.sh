#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A title's web pages in headless Chromium, natively on loopback (vod-server --no-rdma, vod-proxy
# --transport udp): a 40 s title of three renditions (240p, 180p, 120p) made by `vod-media ladder`,
# two audio languages and two sidecar subtitles. titles_check.py: the folder's page shows it as a
# title; hls.js and dash.js (both vendored) play it, switch to the German audio and show a subtitle
# cue; throttled below the middle rendition, hls.js settles lower than unthrottled. Screenshots in
# $VOD_ARTIFACT_DIR (default <build>/test-artifacts/web).
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../hls/native_proxy_lib.sh"
source "$here/../hls/title_fixture.sh"
artifacts=${VOD_ARTIFACT_DIR:-$build/test-artifacts/web}
for tool in /usr/bin/chromium /usr/bin/chromedriver; do [[ -x $tool ]] || fail "$tool is missing: scripts/install-deps.sh installs chromium and chromium-driver"; done
/usr/bin/python3 -c 'import selenium' 2>/dev/null || fail "Debian's python3-selenium is missing: scripts/install-deps.sh installs it"
mkdir -p "$work/media/Films" "$artifacts"

step "a title: vod-media ladder, 40 s, 240p 180p 120p, audio en and de, subtitles en and sv"
make_title "$work/media/Films/Ladder" 40 426x240 240p,180p,120p
start_server_and_proxy "$work/media" --
for _ in $(seq 100); do grep -q "title 'Films/Ladder': 3 renditions" "$work/server.log" && break; sleep 0.1; done
grep -q "title 'Films/Ladder': 3 renditions" "$work/server.log" || fail "the server lists no title"
pass "the server lists the title"

step "headless Chromium"
timeout 400 /usr/bin/python3 "$here/titles_check.py" "$base" "$artifacts" Films Films/Ladder || fail "the browser check failed"
for shot in title-hlsjs title-dashjs title-hlsjs-throttled; do
  [[ $(ffprobe -v error -show_entries stream=codec_name -of csv=p=0 "$artifacts/$shot.png") == png ]] || fail "no screenshot $shot.png"
done
pass "screenshots in $artifacts"
