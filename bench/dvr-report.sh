#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# dvr-report.sh RESULTS_DIR: the live DVR and recording section of docs/benchmarks.md (Markdown on
# stdout), from bench/dvr-benchmarks.sh's RESULTS_DIR/dvr/figures.txt.
set -euo pipefail
in=$1
source "$(dirname "${BASH_SOURCE[0]}")/report-lib.sh"
figures=$in/dvr/figures.txt
heading="## 19. Live recording and the DVR window: the source thread's cost"
if [[ ! -s $figures ]]; then
  not_measured "$heading" "\`bench/dvr-benchmarks.sh\` (as scripts/bench.sh runs it)"
  exit 0
fi
read -r _ plain record dvr both seconds <<< "$(grep '^cpu_seconds ' "$figures" | tail -n 1)"
added() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "n/a"; else printf "%.1f", (a - b) * 100 / b }'; }
cat <<MD
$heading

One channel fed a numbered MPEG-TS at 40 Mbit/s on standard input, natively (\`vod-server
--no-rdma\`: the source thread's work is the same with a device), its CPU (utime + stime) over
$seconds s in four runs of the same run: plain, \`--live-record\`, \`--live-dvr 2m\`, and both.
Measured by \`bench/dvr-benchmarks.sh SECONDS OUT_DIR\`.

| what | CPU seconds in $seconds s | added to the plain channel | goal | met |
|---|---|---|---|---|
| the channel alone | $plain | (the baseline) | — | — |
| with \`--live-record\` | $record | $(added "$record" "$plain") % | ≤ 5 % | $(met "$(added "$record" "$plain")" "<=" 5) |
| with \`--live-dvr 2m\` (one \`pwrite\` per record) | $dvr | $(added "$dvr" "$plain") % | none set | — |
| with both | $both | $(added "$both" "$plain") % | none set | — |

The recording is not cut within the measured seconds (\`--live-record-split\` is its default
hour): the figure is the writing, within this run's noise of a few percent. Completing a file
costs a rescan of the media directory besides, which without \`--cache-size\` loads the new
recording whole and indexes it (as every movie of such a server is loaded); a 10 s split in the
same run took 1.4 CPU seconds more in 20 s for that. Long recordings want \`--cache-size\`, which
only probes them.

The other goals of the DVR window, a DVR viewer's server CPU against a live viewer's and a seek back
60 s against a movie's seek into a cached segment, need RDMA and are not measured yet: a window hit
costs the server nothing (a one-sided Read, as a cached movie's hit), a miss a segment request and a
chunk read from disk, as a cached movie's miss; a live viewer costs it a Send per record.
MD
