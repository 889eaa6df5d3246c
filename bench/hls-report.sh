#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# hls-report.sh RESULTS_DIR: the HLS section of docs/benchmarks.md (Markdown on stdout), from
# hls-benchmarks.sh's rows in results.tsv. Prints nothing when that part did not run.
set -euo pipefail
in=$1
source "$(dirname "${BASH_SOURCE[0]}")/report-lib.sh"
[[ -n $(r hls viewers) ]] || exit 0
row() {  # row KEY LABEL
  echo "| $2 | $(r hls_gbytes "$1") | $(r hls_mbytes_per_s "$1") | $(r hls_cpu_s_per_gb "$1") | $(ratio "$(r hls_cpu_s_per_gb "$1")" "$(r hls_cpu_s_per_gb nginx)") | $(r hls_server_cpu_s "$1") |"
}
cat <<MD
## 13. HLS from vod-proxy

vod-proxy over RDMA in the same guest and run as nginx, on $(r hls movie) (bench/hls-benchmarks.sh).
A playlist is made from the catalog and the keyframe index alone; the first request for a movie
reads its index (by RDMA), its TS tables and its codec headers once, later ones are made from what
was kept (median over the movies, curl's time_total on loopback):

| playlist | made (ms) |
|----------|----------:|
| master.m3u8 of a TS movie, first request | $(r hls_playlist_cold_ms ts) |
| master.m3u8 of the same movies, again | $(r hls_playlist_warm_ms ts) |
| index.m3u8 (15 byte-range segments), again | $(r hls_playlist_warm_ms ts_media) |
| master.m3u8 of a Matroska movie, first request | $(r hls_playlist_cold_ms mkv) |

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
browser) by bench/browser-benchmarks.sh; live HLS is not built yet.
MD
