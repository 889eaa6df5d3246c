# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the section reports (bench/*-report.sh): reading results.tsv and
# printing its figures. Needs $in, the results directory.
# r SECTION KEY: the value of the last row SECTION KEY in results.tsv (empty when none).
r() { awk -F'\t' -v s="$1" -v k="$2" '$1 == s && $2 == k { print $3 }' "$in/results.tsv" | tail -n 1; }
# ms MICROSECONDS: in milliseconds, one decimal (n/a when empty).
ms() { awk -v us="$1" 'BEGIN { if (us == "") print "n/a"; else printf "%.1f", us / 1000 }'; }
# ratio A B: A / B with two decimals (n/a when A is empty or B is zero).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b + 0 == 0) print "n/a"; else printf "%.2f", a / b }'; }
# met X OP GOAL: yes when the figure X (not n/a) satisfies X OP GOAL (OP is <= or >=).
met() { awk -v x="$1" -v g="$3" -v op="$2" 'BEGIN { ok = x != "n/a" && x != "" && (op == "<=" ? x + 0 <= g + 0 : x + 0 >= g + 0); print ok ? "yes" : "no" }'; }
# not_measured HEADING COMMAND: what a section prints when this run has no figures for it (the
# report keeps every section, and says how to measure the missing one).
not_measured() { printf '%s\n\nNot measured in this run: %s measures it.\n' "$1" "$2"; }
