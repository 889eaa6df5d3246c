#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Test fixture (test_data): make-test-data.sh MAKE_PATTERN DIR: the large pattern files the RDMA tests
# serve, made natively before the guest starts (written over the guest's 9p root they took minutes):
#   pattern-1100MiB.bin  seed 3, rdma_vod_get's movie of more than 1 GiB
#   pattern-128MiB.bin   128 MiB + 7 bytes, seed 5, rdma_vod_mount's copy cut by a server restart
# A file of the right size is kept (make_pattern writes a temporary file and renames it when done).
set -euo pipefail
make_pattern=$1 dir=$2
mkdir -p "$dir"
made() {  # made NAME SIZE SEED
  local f=$dir/$1
  if [[ -f $f && $(stat -c %s "$f") == "$2" ]]; then echo "make-test-data: $1 is there"; return; fi
  "$make_pattern" "$2" "$3" "$f"
  echo "make-test-data: $1 made ($2 bytes)"
}
made pattern-1100MiB.bin $((1100 * 1024 * 1024)) 3
made pattern-128MiB.bin $((128 * 1024 * 1024 + 7)) 5
