#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The Soft-RoCE session looks like a normal Linux system to the tests that run in it: /dev has the
# fd links and the pts, shm and mqueue mounts, TMPDIR is usable, the RDMA device is ACTIVE on
# VOD_RDMA_ADDR, and the modules later tests load (fuse for vod-mount, sch_netem for loss tests) work.
# Natively (a host with RDMA) the same checks hold on the host's own /dev.
set -euo pipefail
fail() { echo "FAIL: $*"; exit 1; }
pass() { echo "PASS: $*"; }

# Process substitution goes through /dev/fd; /dev/stdin and /dev/stdout must resolve.
[[ $(cat <(echo substituted)) == substituted ]] || fail "process substitution (/dev/fd) does not work"
[[ $(echo through-stdin | cat /dev/stdin) == through-stdin ]] || fail "/dev/stdin does not work"
[[ $( (echo to-stdout > /dev/stdout) 2>&1) == to-stdout ]] || fail "/dev/stdout does not work"
[[ $( (echo to-stderr > /dev/stderr) 2>&1) == to-stderr ]] || fail "/dev/stderr does not work"
pass "/dev/fd, /dev/stdin, /dev/stdout, /dev/stderr"

grep -q ' /dev/pts devpts ' /proc/mounts || fail "/dev/pts is not a devpts mount"
grep -q ' /dev/shm tmpfs ' /proc/mounts || fail "/dev/shm is not a tmpfs"
shm=$(mktemp /dev/shm/vod-env.XXXXXX) && rm -f "$shm" || fail "/dev/shm is not writable"
pass "/dev/pts and /dev/shm"

tmp=$(mktemp -d) || fail "mktemp -d in TMPDIR=${TMPDIR:-/tmp} failed"
echo x > "$tmp/f" && rm -rf "$tmp" || fail "TMPDIR is not writable"
pass "TMPDIR ${TMPDIR:-/tmp}"

addr=${VOD_RDMA_ADDR:?run through tests/softroce/softroce-run}
# Whole outputs into grep, not pipes: with pipefail, 'ip ... | grep -q' fails when grep has matched
# and left before ip's next write (iproute2 flushes per address): that failed a CI run once.
grep -q 'state ACTIVE' <<< "$(rdma link show)" || fail "no ACTIVE RDMA port: $(rdma link show 2>&1)"
grep -q " $addr/" <<< "$(ip -4 -o addr show)" || fail "VOD_RDMA_ADDR $addr is on no interface: $(ip -4 -o addr show)"
pass "RDMA port ACTIVE, $addr assigned"

if [[ ${VOD_RDMA_GUEST:-} == 1 ]]; then
  [[ -c /dev/fuse ]] || fail "/dev/fuse is missing: the fuse module did not load"
  ns=vodenv$$
  ip netns add "$ns"
  trap 'ip netns del "$ns" 2>/dev/null || true' EXIT
  ip -n "$ns" link set lo up
  ip netns exec "$ns" tc qdisc add dev lo root netem loss 1% delay 1ms ||
    fail "netem cannot be attached in a network namespace (sch_netem)"
  pass "fuse and sch_netem are available in the guest"
fi
