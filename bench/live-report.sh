#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# live-report.sh RESULTS_DIR: the live section of docs/benchmarks.md (Markdown on stdout), from
# live-benchmarks.sh's live.tsv and results.tsv.
set -euo pipefail
in=$1
source "$(dirname "${BASH_SOURCE[0]}")/report-lib.sh"
[[ -s $in/live.tsv ]] || { not_measured "## 7. Live: server CPU and publish-to-delivery latency vs viewers" \
  "\`bench/live-benchmarks.sh\`, in scripts/bench.sh's Soft-RoCE session,"; exit 0; }
r() { awk -F'\t' -v s="$1" -v k="$2" '$1 == s && $2 == k { print $3 }' "$in/results.tsv"; }
col() { awk -F'\t' -v sys="$1" -v n="$2" -v c="$3" 'NR > 1 && $1 == sys && $2 == n { print $c }' "$in/live.tsv" | head -n 1; }
pct() { awk -v c="$1" -v s="$2" 'BEGIN { if (s + 0 == 0 || c == "") print "n/a"; else printf "%.2f%%", 100 * c / s }'; }
read_lat=$(r live_ib_read_lat_us 8192); send_lat=$(r live_ib_send_lat_us 72)
# A perftest figure that is not a number (inf: its clock calibration failed) gives no goal.
goal_us=$(awk -v r="$read_lat" -v s="$send_lat" 'BEGIN { if (r !~ /^[0-9.]+$/ || s !~ /^[0-9.]+$/) print "n/a"; else printf "%.0f", 2 * r + s }')
ns=$(awk -F'\t' 'NR > 1 && $1 == "vod" && $2 > 0 { print $2 }' "$in/live.tsv" | sort -n | tr '\n' ' ')
max=$(tr ' ' '\n' <<< "$ns" | grep . | tail -n 1)
cat <<MD
## 7. Live: server CPU and publish-to-delivery latency vs viewers

The server replays $(r live setup) as live channel \`live\` (\`--live live=file:...\`): it writes
records into a registered ring and Sends each viewer a 72-byte notification per record; viewers
RDMA-Read the record and the live header (the overwrite check) themselves. Latency runs from the
server's publish stamp (CLOCK_REALTIME, in the notification) to the moment the bytes are handed to
the caller, over every record every viewer received. All viewers run in one \`vod-client bench
--pattern live\` process on one shared CQ. The peer is VLC 3 streaming the same file live over HTTP
(\`--sout '#std{access=http,mux=ts}'\`) to the same number of curl viewers, in the same guest.
CPU is the server (or VLC) process's utime+stime over the run, in % of one core.

| viewers | vod-server CPU | p50 latency (µs) | p99 latency (µs) | records delivered | skips | VLC CPU |
|--------:|---------------:|-----------------:|-----------------:|------------------:|------:|--------:|
MD
for n in 0 $ns; do
  # Row 0 has no viewer, so nothing delivered: its delivery columns are not figures.
  if [[ $n == 0 ]]; then d=(— — — —); else d=("$(col vod "$n" 5)" "$(col vod "$n" 6)" "$(col vod "$n" 8)" "$(col vod "$n" 9)"); fi
  echo "| $n | $(pct "$(col vod "$n" 4)" "$(col vod "$n" 3)") | ${d[0]} | ${d[1]} | ${d[2]} | ${d[3]} | $(pct "$(col vlc "$n" 4)" "$(col vlc "$n" 3)") |"
done
# CPU per added viewer: the slope from 1 viewer to the most, in % of a core per viewer.
slope() { awk -v a="$(col "$1" 1 4)" -v as="$(col "$1" 1 3)" -v b="$(col "$1" "$max" 4)" -v bs="$(col "$1" "$max" 3)" -v n="$max" \
  'BEGIN { if (n <= 1 || as + 0 == 0 || bs + 0 == 0) print 0; else printf "%.4f", (100 * b / bs - 100 * a / as) / (n - 1) }'; }
vod_slope=$(slope vod); vlc_slope=$(slope vlc)
ratio=$(awk -v v="$vod_slope" -v p="$vlc_slope" 'BEGIN { if (v <= 0) print "n/a"; else printf "%.1f", p / v }')
p50=$(col vod 1 5)
cat <<MD

Row 0 is the channel with no viewer: the source's own work (pacing the file, cutting records,
writing the ring), which a viewer does not add to.

| goal | measured | goal | met |
|------|----------|------|-----|
| server CPU per added viewer ≥ 20× below the peer's | vod $vod_slope%, VLC $vlc_slope% of a core per viewer: ${ratio}× | ≥ 20× | $(awk -v r="$ratio" 'BEGIN { print (r + 0 >= 20 ? "yes" : "no") }') |
| p50 publish-to-delivery ≤ 2 × ib_read_lat (8 KiB, a record) + ib_send_lat (72 B) | ${p50:-n/a} µs at 1 viewer | $goal_us µs (2 × $read_lat + $send_lat) | $(awk -v p="${p50:-0}" -v g="$goal_us" 'BEGIN { print (g == "n/a" ? "n/a" : p > 0 && p <= g ? "yes" : "no") }') |

Under Soft-RoCE a notification is a system call into rxe, which does the send in the guest kernel
(an RNIC takes a doorbell write), so part of each Send is charged to the server process here. The
latency adds to the two Reads the event-channel wake-ups on both sides under emulation.
MD
