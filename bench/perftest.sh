# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the benchmark scripts: perftest's figures, with events (-e) and rdma_cm (-R), as
# vod-client runs.
#
# perftest_figure TOOL COLUMN SIZE ADDR [ARGS...]: column COLUMN of TOOL's result line for SIZE-byte
# messages to ADDR (the server side runs here too). Tried again, at most 3 times, while the figure
# is not a number: on a loaded guest the client can start before the server listens (it fails at
# once), and perftest's clock calibration can fail (it prints inf, or under load 0.00). Both sides are bounded in time,
# and a server left waiting for a client that gave up is stopped. Prints what perftest said last (a
# number, inf, or nothing). The client side runs under the command prefix in the array
# perftest_client, if one is set (ip netns exec NS: across tests/rdma/shaped_link.sh's link).
perftest_client=()
perftest_figure() {
  local tool=$1 column=$2 size=$3 addr=$4 figure="" srv
  shift 4
  for try in 1 2 3; do
    timeout 120 "$tool" -R -e -s "$size" -F "$@" > /dev/null 2>&1 &
    srv=$!; sleep "$try"
    figure=$("${perftest_client[@]}" timeout 120 "$tool" -R -e -s "$size" -F "$@" "$addr" 2>/dev/null |
      awk -v s="$size" -v c="$column" '$1 == s { print $c }') || true
    kill "$srv" 2>/dev/null || true
    wait "$srv" 2>/dev/null || true
    [[ $figure =~ ^[0-9.]+$ && ! $figure =~ ^[0.]+$ ]] && break  # a number, and not 0.00 (a calibration gone wrong under load)
  done
  echo "$figure"
}
# perftest_latency TOOL SIZE ADDR: the typical latency (µs) of TOOL (ib_read_lat, ib_send_lat).
perftest_latency() { perftest_figure "$1" 5 "$2" "$3" -n 200; }
# perftest_bandwidth SIZE ITERATIONS ADDR [ARGS...]: ib_read_bw's average (MB/s, perftest's MB of
# 2^20 bytes) on one QP.
perftest_bandwidth() { perftest_figure ib_read_bw 4 "$1" "$3" -n "$2" -q 1 "${@:4}"; }
