#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/fleet-benchmarks.sh [OUT]: the figures of docs/benchmarks.md section 14, in one run:
#   - placement balance: movies and Zipf viewers per member against the ideal, 100 movies over 3
#     and 4 equal members, with k = 1 and with the 10 most popular titles on k = 2 (placement-balance,
#     natively: pure arithmetic on the placement code);
#   - the share of movies that move when a member joins or leaves, against the ideal 1/4;
#   - natively with real processes (tests/packaging/fleet_scale_test.sh: a real etcd, --no-rdma
#     members): 90 Zipf viewers from six bench processes over four members, the busiest member's
#     share with bounded loads and with the rendezvous order alone; and over Write-Record the time
#     from a member's kill -9, SIGSTOP and SIGTERM to its paced viewer's reconnect;
#   - the time from a server's kill -9 to its viewers' reconnect elsewhere, p50 and p99 (the fleet
#     test, tests/rdma/vod_fleet_test.sh, in a Soft-RoCE guest: 12 paced viewers over three members,
#     the one with the most viewers killed), split into the loss being seen and the reconnect.
# Writes OUT (default build/bench-results/fleet): placement.txt (placement-balance's output),
# figures.txt (the fleet test's "failover_ms" and "join_moved" lines), fleet-test.log and fleet-scale.log; read by
# bench/fleet-report.sh. FLEET_PARTS picks parts (default "placement failover"): scripts/bench.sh runs
# the placement natively and the failover in the Soft-RoCE session it has open.
# Needs the default build (cmake --build --preset default).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(realpath -m "${1:-$root/build/bench-results/fleet}")  # relative to the caller's directory
cd "$root"
build=${VOD_BUILD_DIR:-$PWD/build}
parts=" ${FLEET_PARTS:-placement scale failover} "
mkdir -p "$out"
if [[ $parts == *" placement "* ]]; then
  echo "--- placement balance and movement"
  "$build/bench/placement-balance" | tee "$out/placement.txt"
fi
if [[ $parts == *" scale "* ]]; then
  echo "--- placement and failover natively (tests/packaging/fleet_scale_test.sh)"
  VOD_BUILD_DIR=$build tests/packaging/fleet_scale_test.sh | tee "$out/fleet-scale.log"
fi
if [[ $parts == *" failover "* ]]; then
  rm -f "$out/figures.txt"
  echo "--- failover in a Soft-RoCE guest (tests/rdma/vod_fleet_test.sh)"
  tests/softroce/softroce-run --timeout 900 -- env VOD_BUILD_DIR="$build" VOD_FLEET_FIGURES="$out/figures.txt" tests/rdma/vod_fleet_test.sh |
    tee "$out/fleet-test.log"
fi
echo "--- figures"
[[ ! -f $out/placement.txt ]] || grep '^RESULT' "$out/placement.txt"
[[ ! -f $out/fleet-scale.log ]] || grep 'FIGURE' "$out/fleet-scale.log" || true
[[ ! -f $out/fleet-test.log ]] || grep 'FIGURE' "$out/fleet-test.log" || true
[[ ! -f $out/figures.txt ]] || cat "$out/figures.txt"
