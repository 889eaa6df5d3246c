#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# make-man.sh PROGRAM SECTION "SHORT NAME" VERSION INCLUDE OUT: a manual page generated with help2man
# from the program's own --help (the same Program_options definitions), so the page cannot drift
# from the options. INCLUDE adds hand-written sections (FILES, SEE ALSO, ...). For a program with
# commands (vod-client COMMAND --help, vod-media), each command's --help is added as a section.
set -euo pipefail
prog=$1 section=$2 name=$3 version=$4 include=$5 out=$6
base=$(basename "$prog")
extra=$(mktemp)
trap 'rm -f "$extra"' EXIT
cat "$include" > "$extra"
commands=()
case $base in
  vod-client) commands=(list get play bench) ;;
esac
if ((${#commands[@]})); then
  printf '[COMMANDS]\n' >> "$extra"
  for c in "${commands[@]}"; do
    printf '.SS "%s %s"\n.nf\n' "$base" "$c" >> "$extra"
    # roff: a leading dot or apostrophe would be a request, and backslashes escapes
    "$prog" "$c" --help 2>&1 | sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/" >> "$extra"
    printf '.fi\n' >> "$extra"
  done
fi
help2man --no-info --no-discard-stderr --section "$section" --name "$name" --version-string "$version" \
  --include "$extra" --output "$out" "$prog"
