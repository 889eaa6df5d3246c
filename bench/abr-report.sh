#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# abr-report.sh RESULTS_DIR: the adaptive-bitrate section of docs/benchmarks.md (Markdown on
# stdout), from abr-benchmarks.sh's rows in results.tsv.
set -euo pipefail
in=$1
source "$(dirname "${BASH_SOURCE[0]}")/report-lib.sh"
heading="## 17. Adaptive bitrate over one-sided Reads, on a shaped link"
[[ -n $(r abr players) ]] || { not_measured "$heading" \
  "\`bench/abr-benchmarks.sh\`, in a Soft-RoCE session with siw (\`softroce-run --device both\`, as scripts/bench.sh opens it),"; exit 0; }
n=$(r abr players)
share() {  # share RUN: the media time per rendition, in percent
  local run=$1 a b c
  a=$(r abr "${run}_seconds_360p") b=$(r abr "${run}_seconds_270p") c=$(r abr "${run}_seconds_180p")
  awk -v a="${a:-0}" -v b="${b:-0}" -v c="${c:-0}" 'BEGIN { t = a + b + c; if (t == 0) print "n/a"; else printf "%.0f / %.0f / %.0f", 100 * a / t, 100 * b / t, 100 * c / t }'
}
or_na() { [[ -n $1 ]] && echo "$1" || echo n/a; }
row() {  # row RUN LABEL
  local late segments
  late=$(r abr "${1}_late") segments=$(r abr "${1}_segments")
  echo "| $2 | $(or_na "$(r abr "${1}_in_time_pct")") | $([[ -n $late ]] && echo "$late of $segments" || echo n/a) | $(or_na "$(r abr "${1}_switches_per_min")") | $(share "$1") |"
}
# The server's CPU per switch: all of its CPU over the run (schedstat, ns) over the switches, in ms.
per_switch() {
  awk -v ns="$(r abr "${1}_cpu_ns")" -v s="$(r abr "${1}_switches")" 'BEGIN { if (ns == "" || s + 0 == 0) print "n/a"; else printf "%.3f", ns / s / 1e6 }'
}
cpu_ms() { awk -v ns="$(r abr "$1")" 'BEGIN { if (ns == "") print "n/a"; else printf "%.1f", ns / 1e6 }'; }
extra_us=$(awk -v a="$(r abr adaptive_switch_first_byte_p50_us)" -v b="$(r abr adaptive_first_byte_p50_us)" \
  'BEGIN { if (a == "" || b == "") print ""; else printf "%d", a - b }')
abr_pct=$(r abr adaptive_in_time_pct) top_pct=$(r abr top_in_time_pct)
cat <<MD
$heading

$n players of one title for $(r abr seconds) s each run, on a link at 40 Mbit/s that tbf shapes to
$(r abr link_rate) $(r abr drop_after) s into the run (bench/abr-benchmarks.sh). The link is siw at both ends of a veth pair across a network namespace
(tests/rdma/shaped_link.sh: rxe cannot cross namespaces in this kernel); ib_read_bw across it gave
$(r abr link_unshaped_mbps) Mbit/s unshaped and $(r abr link_shaped_mbps) Mbit/s shaped. The title has three MPEG-TS
renditions at a constant 4, 1.2 and 0.4 Mbit/s (360p, 270p, 180p), keyframes every 2 s. Each player
is \`vod-client bench rdma://HOST/Shaped\`: a TitleReader paced as a player with 12 s of buffer; a
chunk is one 2 s segment, in time when its last byte came before the player's clock reached it.

| players | chunks in time (%) | late | switches per minute per player | media time 360p / 270p / 180p (%) |
|---------|-------------------:|-----:|-------------------------------:|----------------------------------:|
$(row adaptive "adaptive")
$(row top "pinned to 360p")
$(row cached "adaptive, renditions in a segment cache of 16 MiB")

The first bytes of a segment after its decision: p50 $(ms "$(r abr adaptive_switch_first_byte_p50_us)") ms (max $(ms "$(r abr adaptive_switch_first_byte_max_us)") ms) when the decision was a switch, p50
$(ms "$(r abr adaptive_first_byte_p50_us)") ms otherwise; ib_read_lat across the same link, 16 KiB: $(ms "$(r abr read_rtt_us)") ms. Every rendition's
keyframe index is read when the title opens, so a switch is only the next Read's new target.

vod-server's CPU over each run (/proc/PID/schedstat): $(cpu_ms adaptive_cpu_ns) ms for the adaptive run with the renditions
pinned in memory ($(r abr adaptive_switches) switches), $(cpu_ms top_cpu_ns) ms for the pinned-top run (no switch), $(cpu_ms cached_cpu_ns) ms for the adaptive
run from the segment cache ($(r abr cached_switches) switches, every segment faulting in). The goal rows divide all of a run's CPU
by its switches: an upper bound, which also holds the connects, the catalog and index Reads'
setup and the server's timers. A switch itself sends the server nothing (rdma_iwarp_abr counts
the connects: none at a switch); from the cache, the new rendition's segments fault in as any read
of them would.

| goal | measured | goal | met |
|------|---------:|-----:|:---:|
| adaptive players' chunks in time, against the pinned top rendition's | $abr_pct % (pinned: $top_pct %) | ≥ 95 % | $(met "$abr_pct" ">=" 95) |
| first byte after a switch, beyond any other segment's first byte | $(ms "$extra_us") ms (one Read round trip: $(ms "$(r abr read_rtt_us)") ms) | ≤ one round trip | $(met "${extra_us:-n/a}" "<=" "$(r abr read_rtt_us)") |
| server CPU per switch, renditions pinned | $(per_switch adaptive) ms (upper bound: the run's CPU over its switches) | 0 | not shown |
| server CPU per switch, renditions in the cache | $(per_switch cached) ms (upper bound, segment faults included) | ≤ 0.1 ms | not shown |
MD
