# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the benchmark scripts. perftest_latency TOOL SIZE ADDR: the typical latency (µs) that
# perftest's TOOL (ib_read_lat, ib_send_lat) reports for SIZE-byte messages to ADDR, with events
# (-e) and rdma_cm (-R), as vod-client runs. perftest turns cycles into time with a clock rate it
# calibrates; on a loaded guest the calibration can fail and it prints inf, so it is tried again,
# at most 3 times. Prints what perftest said last (a number, inf, or nothing).
perftest_latency() {
  local tool=$1 size=$2 addr=$3 lat="" srv
  for _ in 1 2 3; do
    "$tool" -R -e -s "$size" -n 200 -F > /dev/null 2>&1 &
    srv=$!; sleep 1
    lat=$("$tool" -R -e -s "$size" -n 200 -F "$addr" 2>/dev/null | awk -v s="$size" '$1 == s { print $6 }')
    wait "$srv" || true
    [[ $lat =~ ^[0-9.]+$ ]] && break
  done
  echo "$lat"
}
