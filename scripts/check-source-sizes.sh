#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# No C++ source of the project (.cpp and .hpp under client/ server/ proxy/ mount/ media/ protocol/
# rdma/ common/ cluster/ bench/ tests/) is longer than 400 lines unless its header says why, in one of
# its first 20 lines:
#   // Longer than 400 lines because: <reason>
# A file that grows past the limit is split along a seam, or says why it cannot be. And no function
# outside tests/ is longer than 120 lines, except option tables (functions whose names say config or
# options): functions defined at namespace scope, from their signature in column 0 to their '}' in
# column 0 (the tree's style), which is where long ones live. Prints every file and function that
# breaks a rule and exits 1; ctest runs it as source_file_sizes (label unit).
# Usage: check-source-sizes.sh [SOURCE_DIR]   (default: the tree this script is in)
set -euo pipefail
root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$root"
limit=400
header=20
reason="// Longer than $limit lines because: "
dirs=(client server proxy mount media protocol rdma common cluster bench tests)
for dir in "${dirs[@]}"; do
  [[ -d $dir ]] || { echo "FAIL: $root has no $dir/ (update this script's list when a directory moves)" >&2; exit 1; }
done

checked=0 failed=0 explained=()
while IFS= read -r -d '' file; do
  checked=$((checked + 1))
  lines=$(wc -l < "$file")
  ((lines > limit)) || continue
  # The reason must say something: the marker followed by at least one non-blank character.
  first=$(head -n "$header" "$file")
  if grep -qE "^${reason}[^[:space:]]" <<< "$first"; then
    explained+=("${file#./} ($lines)")
    continue
  fi
  echo "FAIL: ${file#./} has $lines lines, more than $limit, and none of its first $header lines says" \
       "'${reason}<reason>': split it along a seam or say why it cannot be" >&2
  failed=$((failed + 1))
done < <(find "${dirs[@]}" -type f \( -name '*.cpp' -o -name '*.hpp' \) -print0 | sort -z)

((checked > 0)) || { echo "FAIL: no .cpp or .hpp under ${dirs[*]} in $root" >&2; exit 1; }

function_limit=120
long_functions=$(find "${dirs[@]}" -path tests -prune -o -type f -name '*.cpp' -print0 | sort -z | xargs -0 awk -v limit="$function_limit" '
  FNR == 1 { start = 0; pending = 0 }
  # A signature: column 0, a "(" before any ";", not a declaration of a type or a namespace.
  !start && /^[A-Za-z_~][^;]*\(/ && !/^(namespace|struct|class|enum|union|using|typedef|template|extern|static_assert|return)[^A-Za-z_0-9]/ {
    sig = $0; sigline = FNR; pending = 1
  }
  pending && !start && /;[[:space:]]*$/ && !/\{/ { pending = 0 }
  pending && !start && /\{[^}]*$/ {
    pending = 0; start = sigline
    name = sig; sub(/\(.*/, "", name); n = split(name, parts, /[ *&]+/); name = parts[n]
  }
  start && /^\}/ {
    if (FNR - start + 1 > limit && name !~ /[Cc]onfig|[Oo]ptions/) printf "%s:%d: %s is %d lines\n", FILENAME, start, name, FNR - start + 1
    start = 0
  }')
if [[ -n $long_functions ]]; then
  while IFS= read -r line; do
    echo "FAIL: $line, more than $function_limit: split it into steps with names (option tables, named *config* or *options*, are exempt)" >&2
  done <<< "$long_functions"
  failed=$((failed + 1))
fi
((failed == 0)) || exit 1
with=""
((${#explained[@]} == 0)) || with=$(printf '; %s' "${explained[@]}")
echo "PASS: $checked sources, none over $limit lines without a reason${with:+ (with one:${with#;})}; no function outside tests/ over $function_limit lines"
