#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# origin-report.sh RESULTS_DIR: the origin-pull section of docs/benchmarks.md (Markdown on stdout),
# from bench/origin-benchmarks.sh's RESULTS_DIR/origin/figures.txt.
set -euo pipefail
in=$1
source "$(dirname "${BASH_SOURCE[0]}")/report-lib.sh"
figures=$in/origin/figures.txt
heading="## 18. Edges of an HTTP origin, against nginx's slice cache"
if [[ ! -s $figures ]]; then
  not_measured "$heading" "\`bench/origin-benchmarks.sh\` (as scripts/bench.sh runs it)"
  exit 0
fi
read -r _ edge_ratio peer_ratio <<< "$(grep '^bytes_ratio ' "$figures" | tail -n 1)"
read -r _ edge_ms peer_ms runs <<< "$(grep '^first_byte_ms ' "$figures" | tail -n 1)"
first_ratio=$(ratio "$edge_ms" "$peer_ms")
cat <<MD
$heading

One origin (nginx serving the library, its access log counting what it sent), natively on loopback.
The edge is \`vod-server --no-rdma --origin\` with 1 MiB segments, read by \`vod-client\` over
Write-Record. The peer is nginx's own edge cache in front of the same origin: \`proxy_cache\`,
\`slice 1m\` and \`proxy_cache_lock\`, read by curl. Both start from an empty cache.
Measured by \`bench/origin-benchmarks.sh RUNS OUT_DIR MOVIE\`.

| what | edge | nginx slice cache | goal | met |
|---|---|---|---|---|
| bytes the origin sent ÷ bytes of the movie, 8 concurrent viewers | $edge_ratio | $peer_ratio | ≤ 1.05 | $(met "$edge_ratio" "<=" 1.05) |
| a cold movie's first byte, median of $runs cold copies (a new process each) | $edge_ms ms | $peer_ms ms | edge ≤ 1.5 × nginx ($first_ratio) | $(met "$first_ratio" "<=" 1.5) |

The edge's first byte includes what a viewer of it does before its first Read: its Write-Record
session (hello, cookie) and the catalog. curl asks for the byte at once. Each edge fill is one Range
request of the whole 1 MiB segment, answered when it is complete; nginx streams the first slice as it
arrives.
MD
