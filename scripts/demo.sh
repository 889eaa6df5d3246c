#!/usr/bin/env bash
# README command 1, the demo: build, generate a sample HD movie with ffmpeg, serve it from registered
# memory over Soft-RoCE, fetch it with pipelined one-sided RDMA Reads, check it byte for byte and
# decode it, and print what happened.
#
# Until vod-server and vod-client land (VoD-core issue), the protocol smoke peer stands in for them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/install-deps.sh
echo "=== building"
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)" --target smoke_peer
echo "=== generating a 20 s 1080p H.264 movie (~8.7 Mbps) with ffmpeg"
media_dir=build/demo-media
media/generate-test-media.sh --out "$media_dir" --duration 20 --variants 1080p --containers ts
echo "=== serving and fetching it over RDMA"
tests/softroce/softroce-run --timeout 900 -- scripts/demo-session.sh "$media_dir/test-1080p-20s.ts"
