#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# browser-benchmarks.sh [RUNS]: the time to the first frame in Chromium through vod-proxy, HLS
# against progressive MP4 (bench/browser-first-frame.py), natively on loopback: a vod-server without
# RDMA (UDP Write-Record) and a vod-proxy on it, as the browser test runs (the benchmark suite's
# guest has no browser). Needs a build (VOD_BUILD_DIR, default build) with its test media.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export VOD_BUILD_DIR=${VOD_BUILD_DIR:-$(pwd)/build}
source "$here/../tests/hls/native_proxy_lib.sh"
runs=${1:-7}
mkdir -p "$work/media"
cp "$build/test-media/test-480p-60s.mp4" "$build/test-media/test-480p-60s.ts" "$work/media/"
start_server_and_proxy "$work/media"
/usr/bin/python3 "$here/browser-first-frame.py" "$base" "$runs" test-480p-60s.mp4 test-480p-60s.ts
