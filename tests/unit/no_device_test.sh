#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Without an RDMA device, vod-server and vod-client say so, say how to get one, and exit with their
# documented statuses. Skipped (77) on a host that has a device.
set -uo pipefail
build=$1
if ls /sys/class/infiniband/ 2>/dev/null | grep -q .; then echo "this host has an RDMA device: skipped"; exit 77; fi
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
out=$("$build/server/vod-server" --media-dir "$dir" 2>&1); rc=$?
echo "vod-server: exit $rc: $out"
[[ $rc -eq 3 ]] || { echo "FAIL: vod-server exit $rc, expected 3"; exit 1; }
grep -q "no RDMA device found" <<< "$out" && grep -q "rdma link add rxe0 type rxe netdev" <<< "$out" || { echo "FAIL: vod-server message"; exit 1; }
out=$("$build/client/vod-client" get rdma://192.0.2.1/movie.ts -o "$dir/x" 2>&1); rc=$?
echo "vod-client: exit $rc: $out"
[[ $rc -eq 5 ]] || { echo "FAIL: vod-client exit $rc, expected 5"; exit 1; }
grep -q "no RDMA device: no RDMA device found" <<< "$out" && grep -q "Soft-RoCE" <<< "$out" || { echo "FAIL: vod-client message"; exit 1; }
echo "PASS"
