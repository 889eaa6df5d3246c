#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every C++ source of the project (.cpp and .hpp, as check-source-sizes.sh lists them) is formatted
# by .clang-format: prints the places clang-format-14 would change (at most
# 40) and how many files have them, and exits 1. The version is pinned because another clang-format lays the same code out differently.
# ctest runs it as source_format (label unit). To format the tree: scripts/check-format.sh --fix
# Usage: check-format.sh [--fix] [SOURCE_DIR]   (default: the tree this script is in)
set -euo pipefail
fix=0
if [[ ${1:-} == --fix ]]; then fix=1; shift; fi
root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$root"
tool=clang-format-14
command -v "$tool" > /dev/null || { echo "FAIL: $tool is not installed (scripts/install-deps.sh installs it)" >&2; exit 1; }
[[ -f .clang-format ]] || { echo "FAIL: $root has no .clang-format" >&2; exit 1; }
dirs=(client server proxy mount media protocol rdma common cluster bench tests)
mapfile -d '' files < <(find "${dirs[@]}" -type f \( -name '*.cpp' -o -name '*.hpp' \) -print0 | sort -z)
((${#files[@]} > 0)) || { echo "FAIL: no .cpp or .hpp under ${dirs[*]} in $root" >&2; exit 1; }
if ((fix)); then
  "$tool" -i --style=file "${files[@]}"
  echo "formatted ${#files[@]} files"
  exit 0
fi
# --dry-run --Werror names each place that would change as FILE:LINE:COL.
if report=$("$tool" --dry-run --Werror --style=file "${files[@]}" 2>&1); then
  echo "ok: ${#files[@]} files formatted by .clang-format ($("$tool" --version | head -1))"
  exit 0
fi
# awk, not head: a pipe that head closes early fails the script under pipefail.
awk '/^[^ ]+:[0-9]+:[0-9]+: / && n++ < 40' <<< "$report" >&2
bad=$(awk -F: '/^[^ ]+\.(cpp|hpp):[0-9]+:[0-9]+: / { print $1 }' <<< "$report" | sort -u | wc -l)
echo "FAIL: $bad of ${#files[@]} files are not formatted by .clang-format (the places are above;" \
     "scripts/check-format.sh --fix formats them)" >&2
exit 1
