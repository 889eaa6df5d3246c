# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the native packaging tests (fleet_lib.sh, origin_pull_test.sh): a work directory
# ($work, removed at the end), the processes to kill at the end ($pids: each is continued, in case a
# test stopped it, and killed with its children, which a killed parent such as nginx's master leaves
# serving), the logs of a failed run, and step/pass/fail.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../free_port.sh"
build=${VOD_BUILD_DIR:?CTest sets VOD_BUILD_DIR}
work=$(mktemp -d)
pids=()
cleanup() {
  local rc=$?
  for p in "${pids[@]}"; do
    kill -CONT "$p" 2> /dev/null || true
    kill -KILL $(pgrep -P "$p") "$p" 2> /dev/null || true
  done
  if [[ $rc -ne 0 ]]; then for f in "$work"/*.log; do echo "--- $f"; tail -n 20 "$f"; done; fi
  rm -rf "$work"
}
trap cleanup EXIT
step() { echo "--- [${SECONDS}s] $*"; }
pass() { echo "PASS: [${SECONDS}s] $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
