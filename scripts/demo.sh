#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# README command 1, the demo: build, generate a sample HD movie with ffmpeg, start vod-server on
# Soft-RoCE, then list, download, play and load-test it over one-sided RDMA Read, and report.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/install-deps.sh
echo "=== building"
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)" --target vod-server vod-client vod-media gstrdma vod-proxy
echo "=== generating a 30 s 1080p H.264 movie (~8.7 Mbit/s) and a 480p one with ffmpeg"
media_dir=build/demo-media
media/generate-test-media.sh --out "$media_dir" --duration 30 --variants 1080p,480p --containers ts,mp4
echo "=== serving them from registered memory and playing them over RDMA"
tests/softroce/softroce-run --timeout 1200 -- scripts/demo-session.sh "$media_dir"
