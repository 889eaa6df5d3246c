#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# fleet-report.sh RESULTS_DIR: the fleet section of docs/benchmarks.md (Markdown on stdout), from
# bench/fleet-benchmarks.sh's files in RESULTS_DIR/fleet: placement.txt (placement-balance's output)
# and figures.txt (the fleet test's "failover_ms N P50 P99 D50 D99 R50 R99", "drain_ms MS MS EXITED",
# "live_failover_ms MS FRAMES", "link_down_ms MS MS" and "join_moved 100 N").
set -euo pipefail
in=$1
source "$(dirname "${BASH_SOURCE[0]}")/report-lib.sh"
placement=$in/fleet/placement.txt figures=$in/fleet/figures.txt scale=$in/fleet/fleet-scale.log
heading="## 14. A fleet: placement balance, movement, failover"
if [[ ! -s $placement && ! -s $figures ]]; then
  not_measured "$heading" "\`bench/fleet-benchmarks.sh\` (as scripts/bench.sh runs it)"
  exit 0
fi
[[ -f $placement ]] || placement=/dev/null
[[ -f $figures ]] || figures=/dev/null
[[ -f $scale ]] || scale=/dev/null
# The native run with real processes: "FIGURE fleet_zipf ... bounded_max_over_avg=B unbounded_max_over_avg=U",
# "FIGURE fleet_udp_failover how=kill|stop|term reconnected_ms=MS".
field() { sed -n "s/.*\b$2=\([^ ]*\).*/\1/p" <<< "$1"; }
zipf_line=$(grep 'FIGURE fleet_zipf ' "$scale" | tail -n 1 || true)
z_bounded=$(field "$zipf_line" bounded_max_over_avg) z_unbounded=$(field "$zipf_line" unbounded_max_over_avg)
udp_ms() { field "$(grep "FIGURE fleet_udp_failover how=$1 " "$scale" | tail -n 1 || true)" reconnected_ms; }
u_kill=$(udp_ms kill) u_stop=$(udp_ms stop) u_term=$(udp_ms term)
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
bounded_rows() {
  awk '$1 == "RESULT" && $2 == "placement_bounded" { for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
    printf "| %s | %s | %s | %s opens | %s | %s |\n", f["members"], f["epsilon"], f["processes"], f["refresh"], f["max_viewers_over_ideal"], f["moved"] }' "$placement"
}
# Bounded loads as clients run them by default: 10 processes, records a second old (every 100 opens).
bounded_default=$(awk '$1 == "RESULT" && $2 == "placement_bounded" && / processes=10 / && / refresh=100 / {
  for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } print f["max_viewers_over_ideal"]; exit }' "$placement")
library=$(awk '/^[0-9]+ movies over/ { sub(/:$/, ""); print $1 " movies; " $6 " viewers"; exit }' "$placement")
# The last failover run: viewers, kill to reconnected, kill to loss seen, loss seen to reconnected (p50, p99; ms).
read -r _ f_n f_p50 f_p99 f_d50 f_d99 f_r50 f_r99 <<< "$(grep '^failover_ms ' "$figures" | tail -n 1)"
read -r _ d_1 d_2 d_exit <<< "$(grep '^drain_ms ' "$figures" | tail -n 1)"
read -r _ l_gap l_frames <<< "$(grep '^live_failover_ms ' "$figures" | tail -n 1)"
read -r _ k_1 k_2 <<< "$(grep '^link_down_ms ' "$figures" | tail -n 1)"
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
their members carries, unless the pairs chosen overlap.

Bounded loads (\`cluster::bounded_load_order\`, what clients do by default): the same 1000 viewers
arrive in a shuffled order from P client processes, each seeing the members' loads as their records
said at the last refresh plus the opens it made itself since (records are put at most once a second:
at 100 opens a second, a refresh every 100 opens):

| members | ε | processes | records refreshed every | viewers, most on one ÷ ideal | placed off their first member |
|--------:|--:|----------:|------------------------:|-----------------------------:|------------------------------:|
$(bounded_rows)

$(if [[ -n $z_bounded ]]; then
  echo "With real processes (\`tests/packaging/fleet_scale_test.sh\`: a real etcd, four \`--no-rdma\` members, six"
  echo "\`vod-client bench\` processes of 15 viewers each choosing 12 movies by Zipf's law, half a second"
  echo "apart, over Write-Record): the busiest member carried **$z_bounded×** the average with bounded loads"
  echo "and $z_unbounded× with the rendezvous order alone, the same choices in the same run."
fi)

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
Failover: \`kill -9\` of the member with the most viewers (of 12 viewers paced at 4 Mbit/s each, over
three members), the time from the kill to each of its viewers' reconnect to another member (the
head Read goes out with the reconnect), split into the loss being seen and the reconnect:

| viewers of the killed member | kill → loss seen p50 / p99 (ms) | loss seen → reconnected p50 / p99 (ms) | kill → reconnected p50 / p99 (ms) |
|-----------------------------:|--------------------------------:|---------------------------------------:|----------------------------------:|
| $f_n | $f_d50 / $f_d99 | $f_r50 / $f_r99 | $f_p50 / $f_p99 |

A viewer on a fleet URI watches its member (docs/client.md, "Failover"): nothing completing for
1 s (\`?failover-ms\`), a heartbeat that stood still while a read waited for the server's process, or
a drain, and it goes to the next member. Before that watch, the transport's own retries decided
(12-20 s under TCG). These are times from the failure to the reconnect: a paced viewer stalls only
for what of them its read-ahead does not cover. Not measured here: SIGSTOP over RDMA with a movie in
a segment cache (its pinned movies read on by design, checked in the guest test), and a link taken
down under Write-Record (the same rule as kill -9: no datagram for the deadline).
MD
  if [[ -n ${k_1:-} ]]; then
    cat <<MD

Link down: a member's address deleted from the guest's link under two paced viewers (no disconnect
event comes; its process runs on): they went on from the next member $k_1 and $k_2 ms later.
MD
  fi
  if [[ -n ${u_kill:-} ]]; then
    cat <<MD

Over Write-Record natively (\`tests/packaging/fleet_scale_test.sh\`, a get paced at 4 Mbit/s, two
\`--no-rdma\` members): from the failure to the reconnect on the other member, kill -9 $u_kill ms,
SIGSTOP $u_stop ms, SIGTERM (a drain) $u_term ms.
MD
  fi
  if [[ -n ${d_1:-} ]]; then
    cat <<MD

A drain (SIGTERM) of a member serving two paced viewers: they moved $d_1 and $d_2 ms after the
signal (they read \`draining\` in the status words)$([[ -n ${d_exit:-} ]] && echo ", and the member stopped $d_exit ms after it, once they
had gone, not at the end of its 30 s drain").
MD
  fi
  if [[ -n ${l_gap:-} ]]; then
    cat <<MD

Live: \`kill -9\` of the member serving a live viewer of a channel every member carries: it went on
from another member $l_gap ms after the kill, and its recording ($l_frames frames) decodes with the
discontinuity marked.
MD
  fi
else
  echo "The failover was not measured in this run: \`FLEET_PARTS=failover bench/fleet-benchmarks.sh\` measures it in a Soft-RoCE guest (scripts/bench.sh does in its full and quick runs)."
fi
failover_measured="not measured" failover_met=n/a
if [[ -n ${f_n:-} ]]; then
  failover_measured="kill → reconnected p50 $f_p50 ms, p99 $f_p99 ms ($f_n viewers)"
  failover_met=$(met "$f_p99" "<=" 2000)
fi
drain_measured="not measured" drain_met=n/a
if [[ -n ${d_1:-} ]]; then
  drain_worst=$((d_1 > d_2 ? d_1 : d_2))
  drain_measured="signal → reconnected $d_1 and $d_2 ms (2 viewers)"
  drain_met=$(met "$drain_worst" "<=" 500)
fi
cat <<MD

| goal | measured | goal | met |
|------|----------|------|-----|
| 1000 Zipf viewers over 4 members: the most on one ÷ the average, with bounded loads (simulated: 10 processes, records a second old) | ${bounded_default:-not measured} (by placement alone: ${worst_viewers:-not measured}) | ≤ 1.25× | $([[ -n $bounded_default ]] && met "$bounded_default" "<=" 1.25 || echo n/a) |
| the same with real processes and etcd, 90 viewers from 6 processes over 4 members | ${z_bounded:-not measured} (rendezvous alone: ${z_unbounded:-n/a}) | ≤ 1.25× | $([[ -n $z_bounded ]] && met "$z_bounded" "<=" 1.25 || echo n/a) |
| Write-Record: kill -9 / SIGSTOP of a paced viewer's member, failure → reconnected | ${u_kill:-not measured} / ${u_stop:-n/a} ms | ≤ 2 s | $([[ -n $u_kill ]] && met "$(( u_kill > u_stop ? u_kill : u_stop ))" "<=" 2000 || echo n/a) |
| Write-Record: a drain, SIGTERM → reconnected | ${u_term:-not measured} ms | ≤ 0.5 s | $([[ -n $u_term ]] && met "$u_term" "<=" 500 || echo n/a) |
| kill -9: every viewer of the killed member reconnected elsewhere (RDMA, in the guest) | $failover_measured | ≤ 2 s (p99) | $failover_met |
| link down: the viewers' move after their member's address left the link (RDMA, in the guest) | $([[ -n ${k_1:-} ]] && echo "$k_1 and $k_2 ms (2 viewers)" || echo "not measured") | ≤ 2 s | $([[ -n ${k_1:-} ]] && met "$(( k_1 > k_2 ? k_1 : k_2 ))" "<=" 2000 || echo n/a) |
| a drain: the viewers' move after SIGTERM (RDMA, in the guest) | $drain_measured | ≤ 0.5 s | $drain_met |
MD
