#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/check-report.sh RESULTS_DIR: makes the report from a results directory (scripts/bench.sh's
# --out; the test runs it on bench/sample-results) into a temporary directory, and fails, saying
# what, when
#   - make-report.sh or a section report exits non-zero, or one of them prints an error;
#   - a section heading of docs/benchmarks.md is missing (## 1. to ## 15., 17., 5b to 5d, Targets, Raw numbers);
#   - a table row of sections 1-15 has a cell the generator left empty, or a unit without its number
#     (a missing figure; "n/a" and "—" are written on purpose and pass);
#   - a section says it was not measured although RESULTS_DIR holds its inputs.
set -euo pipefail
[[ $# -eq 1 && -d $1 ]] || { echo "usage: bench/check-report.sh RESULTS_DIR" >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
in=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
report=$tmp/benchmarks.md
problems=()
problem() { problems+=("$*"); }

rc=0
"$here/make-report.sh" "$in" "$tmp/png" . > "$report" 2> "$tmp/stderr" || rc=$?
[[ $rc -eq 0 ]] || problem "make-report.sh exited $rc: $(tail -n 5 "$tmp/stderr" | tr '\n' ' ')"
# A failing awk or bc inside the Markdown's $(...) does not stop the report, but it says so here
# (gnuplot's warnings about a plot's range are not errors).
if grep -E 'awk|: line [0-9]+:|standard_in|division by zero|unbound variable|syntax error|No such file|command not found' "$tmp/stderr" > "$tmp/errors"; then
  problem "a report printed errors: $(head -n 5 "$tmp/errors" | tr '\n' ' ')"
fi

for n in 1 2 3 4 5 5b 5c 5d 6 7 8 9 10 11 12 13 14 15 17 18 19; do
  grep -q "^## $n\. " "$report" || problem "no section '## $n.'"
done
for h in "## Targets" "## Raw numbers"; do grep -qx "$h" "$report" || problem "no section '$h'"; done

# Table rows after their separator line, up to the raw numbers: an empty cell, or a unit that
# follows no number, is a figure the generator had nothing for.
awk '/^## Raw numbers/ { exit }
  /^## / { section = $0 }
  !/^\|/ { body = 0; next }
  /^\|[-:| ]+\|$/ { body = 1; next }
  body {
    n = split($0, cell, "|")
    for (i = 2; i < n; i++) {
      c = cell[i]; gsub(/^ +| +$/, "", c)
      if (c == "") { print section ": an empty cell: " $0; break }
      if (c ~ /(^|[^a-z])nan([^a-z]|$)/) { print section ": not a number (a division by zero): " $0; break }
      w = split(c, word, " "); prev = ""
      for (j = 1; j <= w; j++) {
        t = word[j]; gsub(/^[(]+|[),;:]+$/, "", t)
        if (word[j] ~ /^\(/ && word[j] ~ /\)[,;:]*$/) { prev = t; continue }  # a unit in parentheses labels a column or row: "(ms)"
        if (t ~ /^(ms|µs|s|%|KiB|MiB|MB\/s|Mbit\/s|s\/GiB)$/ && prev !~ /[0-9]$/ && prev != "n/a") { print section ": \"" t "\" without a number: " $0; break }
        prev = t
      }
    }
  }' "$report" > "$tmp/holes"
while IFS= read -r line; do problem "$line"; done < "$tmp/holes"

# Sections whose inputs are all in RESULTS_DIR must not say they were not measured.
has() { [[ -s $in/$1 ]] && grep -q "$2" "$in/$1"; }
tab=$'\t'
section_text() { awk -v h="## $1. " 'index($0, h) == 1 { on = 1; print; next } on && /^## / { exit } on' "$report"; }
check_measured() {  # check_measured SECTION: its inputs are present
  section_text "$1" | grep -qi 'not measured in this run' && problem "section $1 says it was not measured, but $in holds its figures"
  return 0
}
has results.tsv "^proxy_hung$tab" && check_measured 5d
[[ -s $in/live.tsv ]] && check_measured 7
has results.tsv "^udp_cpu_s$tab" && check_measured 8
has results.tsv "^mount_read_mbps$tab" && check_measured 9
has results.tsv "^auth_connects_per_s$tab" && check_measured 10
has results.tsv "^cache_setup${tab}movies$tab" && check_measured 11
has results.tsv "^iwarp${tab}clients$tab" && check_measured 12
has results.tsv "^hls${tab}viewers$tab" && has results.tsv "^hls_first_frame${tab}runs$tab" && check_measured 13
has fleet/placement.txt '^RESULT' && has fleet/figures.txt '^failover_ms ' && check_measured 14
has zero-copy/figures.txt . && check_measured 15
has results.tsv "^abr${tab}players$tab" && check_measured 17

if [[ ${#problems[@]} -gt 0 ]]; then
  printf 'FAIL: %s\n' "${problems[@]}"
  echo "(the report: make-report.sh $in PNG_DIR .)"
  exit 1
fi
echo "PASS: the report of $in has every section, and a figure in every cell"
