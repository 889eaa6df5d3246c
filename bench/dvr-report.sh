#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# dvr-report.sh RESULTS_DIR: the live DVR and recording section of docs/benchmarks.md (Markdown on
# stdout), from bench/dvr-benchmarks.sh's RESULTS_DIR/dvr/figures.txt (natively) and
# bench/dvr-rdma-benchmarks.sh's RESULTS_DIR/dvr/rdma.txt (in the Soft-RoCE guest).
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

MD
rdma=$in/dvr/rdma.txt
if ! grep -q '^viewer_cpu dvr' "$rdma" 2> /dev/null || ! grep -q '^seek_ms movie' "$rdma"; then
  cat <<MD
The other goals of the DVR window, a DVR viewer's server CPU against a live viewer's and a seek back
60 s against a movie's seek into a cached segment, need RDMA: not measured in this run
(\`bench/dvr-rdma-benchmarks.sh\` measures them in the Soft-RoCE guest, as scripts/bench.sh runs it).
MD
  exit 0
fi
read -r _ _ n secs live_wall live_cpu idle <<< "$(grep '^viewer_cpu live ' "$rdma" | tail -n 1)"
read -r _ _ _ _ dvr_wall dvr_cpu _ <<< "$(grep '^viewer_cpu dvr ' "$rdma" | tail -n 1)"
read -r _ _ dvr_ms dvr_seek_cpu runs <<< "$(grep '^seek_ms dvr ' "$rdma" | tail -n 1)"
read -r _ _ movie_ms movie_seek_cpu _ <<< "$(grep '^seek_ms movie ' "$rdma" | tail -n 1)"
# The server's CPU a viewer adds per second of stream: its CPU over the viewers' wall time, less the
# channel's own over that time, over viewers × seconds (ms). Tick-grained: 10 ms.
per() { awk -v c="$1" -v i="$idle" -v w="$2" -v n="$n" -v s="$secs" 'BEGIN { x = (c - i * w) * 1000 / (n * s); if (x < 0) x = 0; printf "%.2f", x }'; }
live_per=$(per "$live_cpu" "$live_wall") dvr_per=$(per "$dvr_cpu" "$dvr_wall")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print (a + 0 == 0 ? "1.00" : "n/a"); else printf "%.2f", a / b }'; }
cpu_ratio=$(ratio "$dvr_per" "$live_per") seek_ratio=$(ratio "$dvr_ms" "$movie_ms")
cpu_met=$(awk -v d="$dvr_per" -v l="$live_per" 'BEGIN { print d + 0 <= l + 0 ? "yes" : "no" }')
cat <<MD
**Over RDMA** (\`bench/dvr-rdma-benchmarks.sh\`, in the Soft-RoCE guest that scripts/bench.sh opens; rxe
under TCG): one server serves a ~1 Mbit/s TS as a movie of its segment cache and loops it as a live channel
with \`--live-dvr 3m\` in the same cache. $n viewers at live (paced by the channel, $live_wall s) against
$n viewers 60 s behind (read from the window as fast as they take it, $dvr_wall s), $secs s of stream
each; the channel alone used $idle CPU seconds a second, taken off both. Then $runs seeks of each kind,
one after another, each a \`vod-client get\` of its own (its connect included).

| what | DVR | live, or the cached movie | ratio | goal | met |
|---|---|---|---|---|---|
| server CPU per viewer and second of stream (ms) | $dvr_per | $live_per | $cpu_ratio | DVR ≤ live | $cpu_met |
| a seek, wall time p50 (ms): 60 s back in the window, or into the cached movie | $dvr_ms | $movie_ms | $seek_ratio | ≤ 1.25 | $(met "$seek_ratio" "<=" 1.25) |
| the server's CPU over those seeks (s) | $dvr_seek_cpu | $movie_seek_cpu | $(ratio "$dvr_seek_cpu" "$movie_seek_cpu") | — | — |

A live viewer costs the server a Send per record it is notified of; a DVR viewer, while it reads the
window, nothing per byte (one-sided Reads of the segment cache) but a segment request per chunk the
cache does not hold yet. A seek into the window reads the window's header and the keyframe marks
besides the movie's catalog: a Read or two more than a movie's seek.
MD
