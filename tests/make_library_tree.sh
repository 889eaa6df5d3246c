#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# make_library_tree.sh MEDIA OUTSIDE MP4: makes in MEDIA a library that is a tree, as the tests of
# folders serve it, and prints the names a server must list (one per line):
#   three levels of folders; names with spaces, non-ASCII letters, '(', '#', '%' and '?'; a path of
#   more than 600 bytes; MP4 (a real movie, copied) in a nested folder; a symlink that stays inside
#   (listed) and a file and a folder symlinked from OUTSIDE (not listed); a hidden folder and a
#   top-level folder named "live" (not listed).
set -euo pipefail
media=$1 outside=$2 mp4=$3
long="Series/$(printf 'L%.0s' {1..200})/$(printf 'M%.0s' {1..200})/$(printf 'N%.0s' {1..200}).bin"
nested="Films/Läder (2024)/Läder (2024) - 720p #1 50% ?.mp4"
mkdir -p "$media/Films/Läder (2024)/extras" "$media/Series/Show (2019)/Season 01" "$(dirname "$media/$long")" "$media/.hidden" \
  "$media/live" "$outside"
n=0
for name in "top.bin" "Films/Läder (2024)/extras/making of.bin" "Series/Show (2019)/Season 01/Show S01E01 #1.bin" "$long"; do
  n=$((n + 1))
  head -c $((n * 100003)) /dev/urandom > "$media/$name"
  echo "$name"
done
cp "$mp4" "$media/$nested"
echo "$nested"
ln -s "../top.bin" "$media/Films/inside link.bin"
echo "Films/inside link.bin"
head -c 1000 /dev/urandom > "$outside/secret.bin"
ln -s "$outside/secret.bin" "$media/outside.bin"
ln -s "$outside" "$media/outdir"
head -c 1000 /dev/urandom > "$media/.hidden/x.bin"
head -c 1000 /dev/urandom > "$media/live/x.bin"
