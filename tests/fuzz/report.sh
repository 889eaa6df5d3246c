#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# report.sh SOURCE_DIR STATS_DIR: the fuzzing report scripts/test.sh prints after the fuzz stage.
#
#   - each target's executions, rate, edges and corpus (from run-fuzzer.sh's SUMMARY lines);
#   - every decoder of wire data that the protocol headers declare (a function returning
#     Decoded<...>), with the most edges any target covered in it. A decoder that no target reached
#     is listed as NOT COVERED, and the report fails.
set -euo pipefail
src=$1 stats=$2
shopt -s nullglob
files=("$stats"/*.txt)
((${#files[@]})) || { echo "fuzz report: no fuzzer statistics in $stats (did the fuzz tests run?)"; exit 1; }

echo "fuzz targets (executions in this run, the kept corpus replayed first):"
grep -h '^SUMMARY ' "${files[@]}" | sort -k2 | while read -r _ name rest; do
  declare -A f=()
  for kv in $rest; do f[${kv%%=*}]=${kv#*=}; done
  printf '  fuzz_%-16s %10s execs  %8s/s  %5s edges  corpus %5s (replayed %s)\n' \
    "$name" "${f[executions]}" "${f[per_second]}" "${f[edges]}" "${f[corpus]}" "${f[replayed]}"
done

# Decoders: "Decoded<T> NAME(" in the public protocol headers (namespace vod::proto), and the
# parsers of live input, which return optionals.
mapfile -t decoders < <(grep -rhoE 'Decoded<[^;]*> +[a-z_]+\(' "$src"/protocol/include | sed -E 's/.*> +([a-z_]+)\(/vod::proto::\1/' | sort -u)
decoders+=(vod::media::parse_ts_packet vod::media::pes_pts vod::media::TsScanner::scan vod::media::make_thumbnail vod::cluster::decode_member
  vod::media::read_cues vod::media::cue_text)
echo "decoders of wire data (edges covered, best target):"
missing=0
for d in "${decoders[@]}"; do
  best= best_target=
  for f in "${files[@]}"; do
    # COVERED_FUNC: hits: H edges: C/T vod::proto::NAME(args) file:line
    while read -r covered total; do
      if [[ -z $best ]] || ((covered > ${best%%/*})); then best=$covered/$total best_target=$(basename "$f" .txt); fi
    done < <(sed -nE "s/^COVERED_FUNC: hits: [0-9]+ edges: ([0-9]+)\/([0-9]+) $d\(.*/\1 \2/p" "$f")
  done
  if [[ -z $best ]]; then
    printf '  %-36s NOT COVERED by any fuzz target\n' "$d"
    missing=$((missing + 1))
  else
    printf '  %-36s %9s edges  fuzz_%s\n' "$d" "$best" "$best_target"
  fi
done
if ((missing)); then
  echo "FAIL: $missing decoder(s) of wire data have no fuzz coverage; add a target in tests/fuzz/"
  exit 1
fi
