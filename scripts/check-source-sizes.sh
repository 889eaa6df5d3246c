#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# No C++ source of the project (.cpp and .hpp under client/ server/ proxy/ mount/ media/ protocol/
# rdma/ common/ cluster/ bench/ tests/) is longer than 400 lines unless its header says why, in one of
# its first 20 lines:
#   // Longer than 400 lines because: <reason>
# A file that grows past the limit is split along a seam, or says why it cannot be. Prints every file
# that breaks the rule and exits 1; ctest runs it as source_file_sizes (label unit).
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
((failed == 0)) || exit 1
with=""
((${#explained[@]} == 0)) || with=$(printf '; %s' "${explained[@]}")
echo "PASS: $checked sources, none over $limit lines without a reason${with:+ (with one:${with#;})}"
