#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# grow-corpus.sh [--runs N] [--jobs J] [TARGET...]: grows the fuzz corpus kept in the repository.
#
# Each target (default: every fuzz_* in build-sanitize/tests) runs for at least N executions
# (default 1,000,000) starting from the kept corpus and the generated seeds; the inputs it found are
# then minimised with libFuzzer's -merge=1 into tests/fuzz/corpus/TARGET, which CI replays on every
# run. Prints one line per target with its executions and corpus size, for docs/testing.md.
# Needs the sanitizer build: cmake --preset sanitize && cmake --build --preset sanitize --target vod_sanitizer_checks
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
runs=1000000 jobs=2
targets=()
while (($#)); do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
bin=build-sanitize/tests
[[ -x $bin/make_fuzz_seeds ]] || { echo "grow-corpus: build the sanitizer preset first (see --help)" >&2; exit 1; }
if ((${#targets[@]} == 0)); then
  for f in "$bin"/fuzz_*; do [[ -x $f ]] && targets+=("${f##*/fuzz_}"); done
fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
"$bin/make_fuzz_seeds" "$work/seeds"

grow() {
  local t=$1 kept=tests/fuzz/corpus/$1 found=$work/found-$1
  mkdir -p "$kept" "$found"
  local seeds=() extra=()  # the generated seeds (protocol messages only: not every target has them), the crash regressions
  [[ -d $work/seeds/$t ]] && seeds+=("$work/seeds/$t")
  [[ -d tests/fuzz/regressions/$t ]] && extra+=("tests/fuzz/regressions/$t")
  ASAN_OPTIONS=detect_leaks=1 "$bin/fuzz_$t" -runs="$runs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/crash-$t-" "$found" "$kept" "${seeds[@]}" "${extra[@]}" > "$work/$t.log" 2>&1 ||
    { echo "grow-corpus: fuzz_$t failed:"; tail -n 30 "$work/$t.log"; return 1; }
  local execs; execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log")
  # Minimise everything known into a fresh directory, then replace the kept corpus with it.
  mkdir -p "$work/min-$t"
  "$bin/fuzz_$t" -merge=1 "$work/min-$t" "$kept" "$found" "${seeds[@]}" > "$work/$t.merge.log" 2>&1 ||
    { echo "grow-corpus: merging fuzz_$t's corpus failed; the kept one stays:"; tail -n 10 "$work/$t.merge.log"; return 1; }
  rm -rf "$kept"; mv "$work/min-$t" "$kept"
  local edges; edges=$(sed -nE 's/^#[0-9]+[[:space:]].* cov: ([0-9]+).*/\1/p' "$work/$t.log" | tail -n 1)
  printf 'grow-corpus: fuzz_%-16s %10s executions, %5s edges, kept corpus %4s inputs, %s bytes\n' \
    "$t" "$execs" "${edges:-?}" "$(ls "$kept" | wc -l)" "$(du -sb "$kept" | cut -f1)"
}

running=0
for t in "${targets[@]}"; do
  grow "$t" &
  running=$((running + 1))
  if ((running >= jobs)); then
    wait -n || failed=1
    running=$((running - 1))
  fi
done
while ((running > 0)); do
  wait -n || failed=1
  running=$((running - 1))
done
exit "${failed:-0}"
