#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# browser-benchmarks.sh [RUNS [OUT_DIR [MP4 TS]]]: the time to the first frame in Chromium through
# vod-proxy, HLS against progressive MP4 (bench/browser-first-frame.py), natively on loopback: a
# vod-server without RDMA (UDP Write-Record) and a vod-proxy on it, as the browser test runs (the
# benchmark suite's guest has no browser). RUNS per source (default 7); MP4 and TS, the same movie in
# both containers, default to the test media's test-480p-60s.mp4 and .ts. Needs a build
# (VOD_BUILD_DIR, default build).
# With OUT_DIR its figures are also rows of OUT_DIR/results.tsv, for bench/hls-report.sh:
#   hls_first_frame_ms SOURCE_cold MS, hls_first_frame_ms SOURCE_warm_p50 MS (SOURCE: mp4_progressive,
#   mp4_hls_fmp4, ts_hls_ranges), and hls_first_frame runs|browser|movie.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export VOD_BUILD_DIR=${VOD_BUILD_DIR:-$(pwd)/build}
source "$here/../tests/hls/native_proxy_lib.sh"
runs=${1:-7} out=${2:-}
mp4=${3:-$test_media/test-480p-60s.mp4} ts=${4:-$test_media/test-480p-60s.ts}
mkdir -p "$work/media"
cp "$mp4" "$ts" "$work/media/"
start_server_and_proxy "$work/media"
/usr/bin/python3 "$here/browser-first-frame.py" "$base" "$runs" "$(basename "$mp4")" "$(basename "$ts")" | tee "$work/firstframe"
[[ -n $out ]] || exit 0
mkdir -p "$out"
{
  printf 'hls_first_frame\truns\t%s\n' "$runs"
  printf 'hls_first_frame\tbrowser\t%s\n' "$(/usr/bin/chromium --version 2>/dev/null | sed 's/ built on.*//' | head -n 1)"
  printf 'hls_first_frame\tmovie\t%s\n' "$(basename "$mp4"), $(basename "$ts")"
  awk -v OFS='\t' '$1 == "FIRSTFRAME" { for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
    print "hls_first_frame_ms", f["source"] "_cold", f["cold_ms"]; print "hls_first_frame_ms", f["source"] "_warm_p50", f["warm_p50_ms"] }' "$work/firstframe"
} >> "$out/results.tsv"
