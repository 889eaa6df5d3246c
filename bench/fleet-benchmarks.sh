#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/fleet-benchmarks.sh [OUT]: the figures of docs/benchmarks.md section 14, in one run:
#   - placement balance: movies and Zipf viewers per member against the ideal, 100 movies over 3
#     and 4 equal members, with k = 1 and with the 10 most popular titles on k = 2 (placement-balance,
#     natively: pure arithmetic on the placement code);
#   - the share of movies that move when a member joins or leaves, against the ideal 1/4;
#   - the time from a server's kill -9 to its viewers' reconnect elsewhere, p50 and p99 (the fleet
#     test, tests/rdma/vod_fleet_test.sh, in a Soft-RoCE guest: 12 paced viewers over three members,
#     the one with the most viewers killed), split into the loss being seen and the reconnect.
# Needs the default build (cmake --build --preset default).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-build/bench-results/fleet}
mkdir -p "$out"
rm -f "$out/figures.txt"
echo "--- placement balance and movement (natively)"
build/bench/placement-balance | tee "$out/placement.txt"
echo "--- failover in a Soft-RoCE guest (tests/rdma/vod_fleet_test.sh)"
tests/softroce/softroce-run --timeout 900 -- env VOD_BUILD_DIR=build VOD_FLEET_FIGURES="$PWD/$out/figures.txt" tests/rdma/vod_fleet_test.sh |
  tee "$out/fleet-test.log"
echo "--- figures"
grep '^RESULT' "$out/placement.txt"
grep 'FIGURE' "$out/fleet-test.log"
cat "$out/figures.txt"
