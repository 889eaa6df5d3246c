# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the native tests of vod-proxy's pages and HLS (tests/web, tests/hls): a vod-server
# without RDMA (UDP Write-Record on loopback) and a vod-proxy reading it, in a work directory that
# goes with the test; their logs' last lines are printed when it fails.
set -Eeuo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../free_port.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../test_media.sh"
build=${VOD_BUILD_DIR:?CTest sets VOD_BUILD_DIR}
work=$(mktemp -d)
pids=()
cleanup() {
  local rc=$?
  kill "${pids[@]}" 2>/dev/null || true
  if [[ $rc -ne 0 ]]; then
    for log in server proxy; do [[ -f $work/$log.log ]] && { echo "--- $log log (last 20 lines)"; tail -n 20 "$work/$log.log"; }; done
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "FAIL: line $LINENO: $BASH_COMMAND" >&2' ERR
step() { echo "--- $*"; }
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
urlname() { /usr/bin/python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }

# start_server_and_proxy MEDIA_DIR [SERVER_ARGS...] -- [PROXY_ARGS...]: both on random ports; sets
# base (the proxy's URL) and proxy_pid.
start_server_and_proxy() {
  local media=$1 server_args=() proxy_args=()
  shift
  while [[ $# -gt 0 && $1 != -- ]]; do server_args+=("$1"); shift; done
  [[ $# -gt 0 ]] && shift
  proxy_args=("$@")
  local udp=$(free_port) http=$(free_port)
  "$build/server/vod-server" --no-rdma --udp-port "$udp" --bind 127.0.0.1 --media-dir "$media" "${server_args[@]}" 2> "$work/server.log" &
  pids+=($!)
  for _ in $(seq 300); do grep -q 'listening on' "$work/server.log" && break; sleep 0.1; done
  grep -q 'listening on' "$work/server.log" || fail "vod-server did not start"
  "$build/proxy/vod-proxy" --server rdma://127.0.0.1 --transport udp --udp-port "$udp" --listen "127.0.0.1:$http" "${proxy_args[@]}" \
    > "$work/proxy.log" 2>&1 &
  proxy_pid=$!
  pids+=("$proxy_pid")
  base=http://127.0.0.1:$http
  for _ in $(seq 100); do curl -s -o /dev/null "$base/" && break; sleep 0.1; done
}
