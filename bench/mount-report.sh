#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# mount-report.sh RESULTS_DIR: the vod-mount section of docs/benchmarks.md (Markdown on stdout), from
# mount-benchmarks.sh's rows in results.tsv.
set -euo pipefail
in=$1
source "$(dirname "${BASH_SOURCE[0]}")/report-lib.sh"
r() { awk -F'\t' -v s="$1" -v k="$2" '$1 == s && $2 == k { print $3 }' "$in/results.tsv" | tail -n 1; }
[[ -n $(r mount_read_mbps page_cache_on) ]] || { not_measured "## 9. vod-mount: files over RDMA Read" \
  "\`bench/mount-benchmarks.sh\`, in scripts/bench.sh's Soft-RoCE session,"; exit 0; }
ms() { awk -v s="$1" 'BEGIN { if (s == "") print "n/a"; else printf "%.0f", 1000 * s }'; }
cat <<MD
## 9. vod-mount: files over RDMA Read

The same movie ($(r mount movie_bytes) bytes) read through \`vod-mount\` (docs/mount.md) by programs that
know nothing of RDMA, next to the other ways of reading it, in the same guest and run. Sequential
read: \`dd bs=1M\` from the mount (page cache dropped first), \`vod-client get -o /dev/null\`, \`curl\`
through vod-proxy and from nginx (sendfile). First frame: \`ffmpeg -i SOURCE -frames:v 1 -f null -\`
from process start to exit, median, the page cache dropped before each run.

| path | sequential read (MB/s) | first decoded frame (ms) |
|------|-----------------------:|-------------------------:|
| vod-mount, page cache on (kernel read-ahead) | $(r mount_read_mbps page_cache_on) | $(ms "$(r mount_first_frame_s page_cache_on)") |
| vod-mount, page cache off (direct I/O) | $(r mount_read_mbps page_cache_off) | $(ms "$(r mount_first_frame_s page_cache_off)") |
| vod-client get | $(r mount_read_mbps vod_client_get) | n/a |
| vod-proxy (HTTP) | $(r mount_read_mbps vod_proxy) | $(ms "$(r mount_first_frame_s vod_proxy)") |
| nginx (HTTP, sendfile) | $(r mount_read_mbps nginx) | $(ms "$(r mount_first_frame_s nginx)") |
| the local file (floor) | n/a | $(ms "$(r mount_first_frame_s local_file)") |

GStreamer, the same way: \`gst-launch-1.0 SRC location=URI ! decodebin ! video/x-raw ! fakesink
num-buffers=1\` from process start to exit, median.

| source | first decoded frame (ms) |
|--------|-------------------------:|
| rdmasrc, rdma:// (libvodclient: connect, then the first 16 KiB alone; the catalog and the index behind it) | $(ms "$(r mount_first_frame_s gst_rdmasrc)") |
| souphttpsrc from nginx | $(ms "$(r mount_first_frame_s gst_nginx)") |
MD
