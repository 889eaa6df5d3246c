#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# hls-report.sh RESULTS_DIR: the HLS section of docs/benchmarks.md (Markdown on stdout), from the
# rows of hls-benchmarks.sh (in the guest) and browser-benchmarks.sh (natively) in results.tsv.
set -euo pipefail
in=$1
source "$(dirname "${BASH_SOURCE[0]}")/report-lib.sh"
heading="## 13. HLS from vod-proxy"
# The first frame in Chromium: its own part of the section, measured natively.
first_frame() {
  local runs
  runs=$(r hls_first_frame runs)
  if [[ -z $runs ]]; then
    echo "The time to the first frame in headless Chromium was not measured in this run: \`bench/browser-benchmarks.sh\` measures it."
    return
  fi
  cat <<MD
The time to the first frame in headless $(r hls_first_frame browser | grep . || echo Chromium) through vod-proxy, natively on loopback
(vod-server \`--no-rdma\`, the proxy over UDP Write-Record; \`bench/browser-benchmarks.sh $runs\`, on
$(r hls_first_frame movie)): a \`<video>\` is given its source in a fresh page of the proxy's origin and
the clock runs until the browser presents its first frame (\`requestVideoFrameCallback\`). Each
source $runs times; the first is cold (the proxy's facts and remuxes and the browser's cache empty;
the very first run of the session also pays for Chromium's first decoder), the others warm (median).

| source | cold (ms) | warm p50 (ms) |
|--------|----------:|--------------:|
| the MP4, progressive (\`/movies/NAME\`, Range requests) | $(r hls_first_frame_ms mp4_progressive_cold) | $(r hls_first_frame_ms mp4_progressive_warm_p50) |
| the MP4 through HLS (fMP4 remuxed on the fly) | $(r hls_first_frame_ms mp4_hls_fmp4_cold) | $(r hls_first_frame_ms mp4_hls_fmp4_warm_p50) |
| the TS through HLS (byte ranges of the file) | $(r hls_first_frame_ms ts_hls_ranges_cold) | $(r hls_first_frame_ms ts_hls_ranges_warm_p50) |

Before its first frame the browser reads one segment's worth through HLS, and the MP4's moov and
first samples by Range requests when it plays the file progressively.
MD
}
# A title's multivariant playlist against a single movie's, and the copies of TS renditions.
titles() {
  if [[ -z $(r hls_title_ms cold) ]]; then
    echo "A title's multivariant playlist was not measured in this run (\`bench/hls-benchmarks.sh\` measures it)."
    return
  fi
  local cold warm
  cold=$(ratio "$(r hls_title_ms cold)" "$(r hls_playlist_cold_ms ts)") warm=$(ratio "$(r hls_title_ms warm)" "$(r hls_title_ms single_warm)")
  cat <<TITLES
**Titles.** Folders of three TS renditions (copies of the movie, so aligned), their
\`/hls/TITLE/master.m3u8\` first requested, then again three times, against the single movies'
master.m3u8 above in the same run (median; a single movie's warm figure taken in the same rounds).
The title's first request makes the facts of each rendition (its index read, its TS tables and
codec headers), one after another on the proxy's worker; the title's segments are cut once, from
its first rendition. The proxy's bytes copied out of its read ring per byte read, for every
segment of a TS movie and of a title's TS rendition (one viewer, \`/metrics\`):

| title | measured | goal | met |
|------|---------:|-----:|:---:|
| title master.m3u8, first request ÷ a single movie's | $cold ($(r hls_title_ms cold) ÷ $(r hls_playlist_cold_ms ts) ms) | ≤ 2 | $(met "$cold" "<=" 2) |
| title master.m3u8, again ÷ a single movie's | $warm ($(r hls_title_ms warm) ÷ $(r hls_title_ms single_warm) ms) | ≤ 1.2 | $(met "$warm" "<=" 1.2) |
| bytes copied per byte read: a TS title rendition's segments (a TS movie's) | $(r hls_copied_ratio ts_title) ($(r hls_copied_ratio ts_movie)) | the same, ±10 % | $(awk -v a="$(r hls_copied_ratio ts_title)" -v b="$(r hls_copied_ratio ts_movie)" 'BEGIN { d = a - b; if (d < 0) d = -d; print (a != "" && b != "" && d <= 0.1 * (b > 0.01 ? b : 0.01)) ? "yes" : "no" }') |
TITLES
}
if [[ -z $(r hls viewers) ]]; then
  not_measured "$heading" "\`bench/hls-benchmarks.sh\`, in scripts/bench.sh's Soft-RoCE session,"
  echo
  first_frame
  exit 0
fi
row() {  # row KEY LABEL
  echo "| $2 | $(r hls_gbytes "$1") | $(r hls_mbytes_per_s "$1") | $(r hls_cpu_s_per_gb "$1") | $(ratio "$(r hls_cpu_s_per_gb "$1")" "$(r hls_cpu_s_per_gb nginx)") | $(r hls_server_cpu_s "$1") |"
}
cat <<MD
$heading

vod-proxy over RDMA in the same guest and run as nginx, on $(r hls movie) (bench/hls-benchmarks.sh).
A playlist is made from the catalog and the keyframe index alone; the first request for a movie
reads its index (by RDMA), its TS tables and its codec headers once, later ones are made from what
was kept (median over the movies, curl's time_total on loopback):

| playlist | made (ms) |
|----------|----------:|
| master.m3u8 of a TS movie, first request | $(r hls_playlist_cold_ms ts) |
| master.m3u8 of the same movies, again | $(r hls_playlist_warm_ms ts) |
| index.m3u8 (its byte-range segments), again | $(r hls_playlist_warm_ms ts_media) |
| master.m3u8 of a Matroska movie, first request | $(r hls_playlist_cold_ms mkv) |

$(titles)

$(r hls viewers) viewers fetch every segment of the playlist at once, as fast as they can, each in one
kept-alive connection. CPU is the serving process's utime+stime per GB delivered (nginx: master and
worker, sendfile); the peer is the same movie packaged by \`ffmpeg -f hls -hls_time 4\` into files.
The TS movie's segments are byte ranges of the file, read by one-sided Reads; the Matroska movie's
are fMP4 remuxed on the fly by its first viewers, then served from the cache.

| served | GB | MB/s | CPU s per GB | vs nginx | vod-server CPU (s) |
|--------|---:|-----:|-------------:|---------:|-------------------:|
$(row ts "vod-proxy, TS by byte ranges")
$(row mkv_cold "vod-proxy, Matroska as fMP4, first pass (each segment remuxed once)")
$(row mkv_cached "vod-proxy, Matroska as fMP4, cached")
$(row nginx "nginx, ffmpeg's HLS files")

No goal was set for these; the figures say what HLS costs beside the files nginx serves. Cached fMP4
pieces are written from memory, so the difference between the first and the last rows is the
proxy's socket writes (each segment copied to the socket, where nginx sends files with sendfile:
zero copy to the consumer is a later issue) and the difference between the TS and cached rows is its
Reads (the emulated rxe's work is charged to the reading process). vod-server does nothing per byte. The first frame in Chromium is measured natively (the guest has no
browser): the last table of this section.

**Live, as LL-HLS.** The server replays $(r hls movie) as a live channel; vod-proxy packages it (2 s
segments at its keyframes, 0.5 s parts) from its one session of the channel over RDMA.
bench/live-hls-age.py follows the playlist as an LL-HLS player does (blocking reloads at the
preload hint) and takes, for each new part and each newly complete segment, its age when the reload
listing it returned: that time less the wall-clock time of its first frame (the segment's
EXT-X-PROGRAM-DATE-TIME, stamped when its first byte reached the proxy, plus the parts before it).
So it is the glass-to-glass age of the newest playable media less the server-to-proxy delivery,
which section 7 measures (publish stamp to delivery).

| live | measured | goal | met |
|------|---------:|-----:|:---:|
| first playlist of the channel (its session opens, its first segment is made) | $(r hls_live_playlist_ms first) ms | — | — |
| a playlist again | $(r hls_live_playlist_ms warm) ms | — | — |
| LL-HLS: age of the newest part when playable, p50 ($(r hls_live_age_ms parts_count) parts) | $(r hls_live_age_ms parts_p50) ms | < 1500 ms | $(awk -v a="$(r hls_live_age_ms parts_p50)" 'BEGIN { print (a != "" && a < 1500) ? "yes" : "no" }') |
| LL-HLS: the same, p99 | $(r hls_live_age_ms parts_p99) ms | — | — |
| plain HLS: age of the newest segment when playable, p50 ($(r hls_live_age_ms segments_count) segments) | $(r hls_live_age_ms segments_p50) ms | — | — |
| plain HLS: the same, p99 | $(r hls_live_age_ms segments_p99) ms | — | — |

A player adds its hold-back to these: PART-HOLD-BACK (1.5 s, three parts) for LL-HLS, and for a
player without LL-HLS three target durations (6 s) by RFC 8216's rule; Chromium's own HLS, which
fetches each newest segment as it appears, played 2.5 s behind the newest segment's end in the web
test.

$(first_frame)
MD
