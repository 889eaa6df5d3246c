#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# run-fuzzer.sh NAME FUZZER SECONDS STATS_DIR CORPUS_DIR [READ_ONLY_DIR...]
#
# One libFuzzer target under CTest: replays every input of the corpora first (the minimised corpus
# kept in tests/fuzz/corpus/NAME, the seeds and the crash regressions), then fuzzes for SECONDS.
# New inputs go to CORPUS_DIR (in the build tree), never into the source tree.
#
# Writes STATS_DIR/NAME.txt: one summary line (executions, rate, edges, corpus size) and, from
# -print_coverage, the covered edges of every function of the protocol library, which
# tests/fuzz/report.sh turns into the per-decoder table that scripts/test.sh prints.
set -euo pipefail
name=$1 fuzzer=$2 seconds=$3 stats=$4 corpus=$5
shift 5
mkdir -p "$stats" "$corpus" "$stats/artifacts-$name"
log=$stats/$name.log
# Targets without generated seeds (make_fuzz_seeds writes protocol messages only) have no seed dir.
kept=()
for dir in "$@"; do [[ -d $dir ]] && kept+=("$dir"); done
set -- "${kept[@]}"

# The thumbnail target decodes movie bytes with libavformat: it runs with no network at all where
# the harness may make a network namespace (root), so nothing an input names can be reached.
isolate=()
if [[ $name == thumbnail ]] && unshare --net true 2>/dev/null; then isolate=(unshare --net); fi

rc=0
"${isolate[@]}" "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -print_coverage=1 \
  -artifact_prefix="$stats/artifacts-$name/" "$corpus" "$@" > "$log" 2>&1 || rc=$?

execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
done_line=$(grep -E '^#[0-9]+[[:space:]].* cov: ' "$log" | tail -n 1 || true)
edges=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<< "$done_line")
features=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<< "$done_line")
inputs=$(sed -nE 's/.* corp: ([0-9]+)\/.*/\1/p' <<< "$done_line")
replayed=$(sed -nE 's/^INFO: +seed corpus: files: ([0-9]+).*/\1/p' "$log" | head -n 1)
rate=$(( ${execs:-0} / (seconds > 0 ? seconds : 1) ))
{
  printf 'SUMMARY %s executions=%s seconds=%s per_second=%s edges=%s features=%s corpus=%s replayed=%s\n' \
    "$name" "${execs:-0}" "$seconds" "$rate" "${edges:-?}" "${features:-?}" "${inputs:-?}" "${replayed:-?}"
  # "COVERED_FUNC: hits: H edges: C/T name file:line" for the project's own functions.
  grep -E '^(UN)?COVERED_FUNC: .* vod::' "$log" || true
} > "$stats/$name.txt"

if [[ $rc -eq 0 ]] && ! grep -q '^COVERED_FUNC: .* vod::' "$log"; then
  echo "FAIL: fuzz_$name printed no symbolized coverage (no 'COVERED_FUNC ... vod::' line in $log);"
  echo "      is llvm-symbolizer installed and on PATH or in ASAN_SYMBOLIZER_PATH? (scripts/install-deps.sh installs it)"
  grep -m 5 -iE 'symboliz|COVERED_FUNC' "$log" || true
  exit 1
fi
printf 'fuzz %-16s %10s executions in %ss (%s/s), %s edges, corpus %s inputs (%s replayed first)\n' \
  "$name" "${execs:-0}" "$seconds" "$rate" "${edges:-?}" "${inputs:-?}" "${replayed:-?}"
if [[ $rc -ne 0 ]]; then
  echo "FAIL: fuzz_$name exited $rc; the input that failed is in $stats/artifacts-$name/"
  grep -E 'ERROR|SUMMARY|==[0-9]+==|#[0-9]+ ' "$log" | tail -n 40
  exit "$rc"
fi
