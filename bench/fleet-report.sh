#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# fleet-report.sh RESULTS_DIR: the fleet section of docs/benchmarks.md (Markdown on stdout), from
# bench/fleet-benchmarks.sh's files in RESULTS_DIR/fleet: placement.txt (placement-balance's output)
# and figures.txt (the fleet test's "failover_ms N P50 P99 D50 D99 R50 R99" and "join_moved 100 N").
set -euo pipefail
in=$1
source "$(dirname "${BASH_SOURCE[0]}")/report-lib.sh"
placement=$in/fleet/placement.txt figures=$in/fleet/figures.txt
heading="## 14. A fleet: placement balance, movement, failover"
if [[ ! -s $placement && ! -s $figures ]]; then
  not_measured "$heading" "\`bench/fleet-benchmarks.sh\` (as scripts/bench.sh runs it)"
  exit 0
fi
[[ -f $placement ]] || placement=/dev/null
[[ -f $figures ]] || figures=/dev/null
# Each balance block: a header line, one line per member ("ID movies N (ideal X) viewers N (ideal X)"),
# then its RESULT line; the most on one member is taken from the member lines.
balance_rows() {
  awk '/^[0-9]+ movies over/ { mm = 0; mv = 0 }
    /^  / && $2 == "movies" { im = $5; iv = $9; sub(/\)/, "", im); sub(/\)/, "", iv); if ($3 > mm) mm = $3; if ($7 > mv) mv = $7 }
    $1 == "RESULT" && $2 == "placement_balance" { for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
      printf "| %s | %s | %s (%d vs %s) | %s (%d vs %s) |\n", f["members"], f["k_popular"], f["max_movies_over_ideal"], mm, im,
        f["max_viewers_over_ideal"], mv, iv }' "$placement"
}
movement_rows() {
  awk '$1 == "RESULT" && $2 == "placement_movement" { for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
    printf "| %s | %s | %s | %s | %s |\n", f["movies"], f["join_moved"], f["leave_moved"], f["ideal"], f["moved_between_staying_members"] }' "$placement"
}
# The worst viewers-per-member ratio of the placements measured, and where: "1.87 (3 members, k = 1)".
worst_viewers=$(awk '$1 == "RESULT" && $2 == "placement_balance" { for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
  if (f["max_viewers_over_ideal"] + 0 > w) { w = f["max_viewers_over_ideal"] + 0; at = f["members"] " members, k = " f["k_popular"] } }
  END { if (at != "") printf "%.2f (%s)", w, at }' "$placement")
library=$(awk '/^[0-9]+ movies over/ { sub(/:$/, ""); print $1 " movies; " $6 " viewers"; exit }' "$placement")
# The last failover run: viewers, kill to reconnected, kill to loss seen, loss seen to reconnected (p50, p99; ms).
read -r _ f_n f_p50 f_p99 f_d50 f_d99 f_r50 f_r99 <<< "$(grep '^failover_ms ' "$figures" | tail -n 1)"
joined=$(awk '$1 == "join_moved" { print $3 " of " $2 }' "$figures" | paste -sd, - | sed 's/,/, /g')

cat <<MD
$heading

\`bench/fleet-benchmarks.sh\` (placement natively with \`build/bench/placement-balance\`; failover from
\`tests/rdma/vod_fleet_test.sh\` in a Soft-RoCE guest). Placement figures are exact for the names used
(title-000.mp4 … title-099.mp4, members 192.0.2.1-4:7470, equal weights), not samples of a timing.

MD
if [[ -s $placement ]]; then
  cat <<MD
Balance, ${library:-n/a} choosing titles by Zipf's law (s = 1):

| members | k for the 10 most popular | movies, most on one ÷ ideal | viewers, most on one ÷ ideal |
|--------:|--------------------------:|----------------------------:|-----------------------------:|
$(balance_rows)

Movies spread as hashing spreads them, with its sampling noise at a hundred titles (the unit test
\`Placement.BalanceFollowsWeights\` holds 6000 titles within 3% of each member's weighted share).
Viewers follow the titles: under Zipf's law the most popular of 100 titles draws about a fifth of
them, and its member carries that. Spreading the top titles over k = 2 members halves what each of
their members carries, unless the pairs chosen overlap. Balancing viewers needs load-aware choice
(consistent hashing with bounded loads, using the load in the member records), which is not built.

Movement when a member joins (3 → 4) or leaves (4 → 3): exactly the movies the fourth member
scores highest for move, so the two shares are the same set.

| movies | moved when one joins | moved when one leaves | ideal | moved between members that stayed |
|-------:|---------------------:|----------------------:|------:|----------------------------------:|
$(movement_rows)
MD
else
  echo "Placement and movement were not measured in this run: \`FLEET_PARTS=placement bench/fleet-benchmarks.sh\` measures them."
fi
[[ -z $joined ]] || printf '\nIn the guest test a real fourth vod-server joining moved %s names, all of them to it.\n' "$joined"
echo
if [[ -n ${f_n:-} ]]; then
  cat <<MD
Failover: \`kill -9\` of the member with the most viewers (of 12 paced viewers, 2.5 MB/s each, over
three members), the time from the kill to each of its viewers' reconnect to another member (the
head Read goes out with the reconnect), split into the loss being seen and the reconnect:

| viewers of the killed member | kill → loss seen p50 / p99 (ms) | loss seen → reconnected p50 / p99 (ms) | kill → reconnected p50 / p99 (ms) |
|-----------------------------:|--------------------------------:|---------------------------------------:|----------------------------------:|
| $f_n | $f_d50 / $f_d99 | $f_r50 / $f_r99 | $f_p50 / $f_p99 |

Reads to a killed server are retried by the transport until its timer gives up (libvodclient sets
537 ms a try, 7 retries, where rdma_cm's RoCE default is about 2 s a try), so most of the wait is
noticing the loss; under TCG the emulated retransmissions take longer still. On a real NIC the
transport timer is what bounds it.
MD
else
  echo "The failover was not measured in this run: \`FLEET_PARTS=failover bench/fleet-benchmarks.sh\` measures it in a Soft-RoCE guest (scripts/bench.sh does in its full and quick runs)."
fi
failover_measured="not measured" failover_met=n/a
if [[ -n ${f_n:-} ]]; then
  failover_measured="kill → reconnected p50 $f_p50 ms, p99 $f_p99 ms ($f_n viewers)"
  failover_met=$(met "$f_p99" "<=" 5000)
fi
cat <<MD

| goal | measured | goal | met |
|------|----------|------|-----|
| viewers within 1.25× of the ideal, by placement alone: the most on one member ÷ the ideal, the worst of the placements above | ${worst_viewers:-not measured} | ≤ 1.25× | $([[ -n $worst_viewers ]] && met "${worst_viewers%% *}" "<=" 1.25 || echo n/a) |
| a failover within a few seconds: every viewer of the killed member reconnected elsewhere | $failover_measured | ≤ 5 s (p99) | $failover_met |
MD
