#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/softroce/elf-static tells a binary that needs no loader from one that does, and refuses files
# that are not 64-bit ELF, without `file` or binutils.
set -euo pipefail
check=$1/tests/softroce/elf-static
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
expect() {
  local want=$1 file=$2 rc=0
  "$check" "$file" 2>/dev/null || rc=$?
  [[ $rc -eq $want ]] || { echo "FAIL: elf-static $file exited $rc, expected $want"; exit 1; }
  echo "PASS: elf-static $file -> $rc"
}
expect 1 "$(readlink -f /bin/sh)"          # dynamically linked: needs ld-linux
expect 2 "$1/README.md"                    # not ELF
head -c 3 "$(readlink -f /bin/sh)" > "$work/short"
expect 2 "$work/short"                     # truncated before the magic ends
printf '\177ELF\001\001' > "$work/elf32"
expect 2 "$work/elf32"                     # 32-bit
# A static binary: busybox-static where installed, else a tiny one from the compiler.
if [[ -x /bin/busybox ]] && dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q installed; then
  expect 0 /bin/busybox
elif echo 'int main(void){return 0;}' | cc -static -x c - -o "$work/static" 2>/dev/null; then
  expect 0 "$work/static"
else
  echo "SKIP: no static binary to check (no busybox-static, no static libc)"; exit 77
fi
