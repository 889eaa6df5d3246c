#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# README command 2: install what is missing, build, and run every test (docs/testing.md has a table
# of the stages with their measured time and budget).
#   1. g++ build with warnings as errors; natively, two at a time: the unit and media tests (the
#      media fixture also computes what the test media hold, for the guest), the UDP Write-Record
#      tests on loopback, vod-proxy's web pages in headless Chromium, and operations (sd_notify,
#      install, manual pages, systemd units, the .deb, /metrics, a fleet on etcd); those that play
#      or answer against the clock run alone (RUN_SERIAL)
#   2. clang build with ASan+UBSan; unit and media tests again, then every libFuzzer target for a
#      bounded time, replaying the corpus kept in tests/fuzz/corpus first, and a report of
#      executions and coverage
#   3. the RDMA tests on real rdma-core: natively where the host has RDMA, else in one Soft-RoCE
#      guest, two at a time, the longest first; the parts whose subject is time run alone (RUN_SERIAL)
# Benchmarks are not part of it: scripts/bench.sh. Exit status is non-zero if any step fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
started=$(date +%s)
stage() { echo; echo "=== $* ($(( $(date +%s) - started ))s)"; }

stage "dependencies"
scripts/install-deps.sh

jobs=$(nproc)
stage "build (g++, -Wall -Wextra -Werror)"
# The preset's optimisation and NDEBUG, without debug information: -g costs about a third of the
# compile time of a Beast or GoogleTest translation unit, and nothing here reads it.
cmake --preset default -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" >/dev/null
cmake --build --preset default -j "$jobs"

stage "native tests: unit, media (and the expectations for the guest), UDP Write-Record on loopback, web pages in Chromium, operations; the sanitizer build beside them"
# Most native tests wait on sockets, players and timers: the sanitizer tree compiles beside them at
# the lowest priority (nice 19: a CPU-bound test beside it keeps nearly the whole core it asks for),
# in the time they leave idle.
mkdir -p build
sanitizer_log=build/sanitizer-build.log
(cmake --preset sanitize >/dev/null && nice -n 19 cmake --build --preset sanitize -j "$jobs" --target vod_sanitizer_checks) > "$sanitizer_log" 2>&1 &
sanitizer_build=$!
trap 'kill "$sanitizer_build" 2>/dev/null || true' EXIT
native=0
ctest --preset default -L 'unit|media|udp|web|ops' -j "$jobs" || native=$?
stage "sanitizer build (clang, ASan+UBSan): waiting for it to finish"
if ! wait "$sanitizer_build"; then
  tail -n 40 "$sanitizer_log"
  echo "the sanitizer build failed (its log: $sanitizer_log)" >&2
  exit 1
fi
trap - EXIT
echo "sanitizer build done ($(grep -c 'Building' "$sanitizer_log") files compiled; its log: $sanitizer_log)"
[[ $native -eq 0 ]] || { echo "native tests failed (exit $native)" >&2; exit "$native"; }

stage "sanitizer tests: unit and media tests under ASan+UBSan, and the fuzzers"
ctest --preset sanitize -L 'unit|media|fuzz' -j "$jobs"
echo "--- fuzz report (executions per target, edges covered per decoder; test fuzz_report)"
cat build-sanitize/tests/fuzz-report.txt

stage "RDMA tests on real rdma-core (Soft-RoCE, and siw for the rdma-iwarp label)"
# One guest boot with both software devices: -L rdma matches rdma-iwarp too. The group's budget is
# 22.5 minutes (docs/testing.md); the guest's limit leaves room for a machine twice as slow and still
# ends inside CI's 90 minutes.
tests/softroce/softroce-run --device both --timeout 3000 -- ctest --preset default -L rdma -j 2

stage "all tests passed"
