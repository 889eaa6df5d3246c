# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the native fleet tests (fleet_membership_test.sh, fleet_scale_test.sh): a work
# directory, the processes to kill at the end (pids), step/pass/fail (test_lib.sh), and a real etcd on loopback
# (start_etcd; etcdctl speaks to it). Skips (77) where etcd is not installed.
set -euo pipefail
command -v etcd > /dev/null || { echo "SKIP: etcd is not installed (scripts/install-deps.sh installs etcd-server)"; exit 77; }
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"  # $work, $pids, cleanup, step/pass/fail
export VOD_CLUSTER_CACHE_DIR=$work/member-cache
etcd_port=$(free_port) peer_port=$(free_port)
etcdctl() { ETCDCTL_API=3 command etcdctl --endpoints "127.0.0.1:$etcd_port" "$@"; }
start_etcd() {  # etcd on 127.0.0.1:$etcd_port, its pid in etcd_pid (and pids), its log appended to etcd.log
  etcd --name m --data-dir "$work/etcd" --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "m=http://127.0.0.1:$peer_port" >> "$work/etcd.log" 2>&1 &
  etcd_pid=$!
  pids+=("$etcd_pid")
  for _ in $(seq 150); do etcdctl endpoint health > /dev/null 2>&1 && return 0; sleep 0.2; done
  fail "etcd did not come up"
}
