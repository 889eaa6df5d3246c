#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# dvr-benchmarks.sh SECONDS OUT_DIR: what a live channel's recording (--live-record) and DVR window
# (--live-dvr) add to the server's CPU, natively (vod-server --no-rdma: the source thread's work is
# the same with or without a device). One channel fed a numbered MPEG-TS at 40 Mbit/s on standard
# input (tests/rdma/ts_tool pattern), measured for SECONDS after a 3 s warm-up, in four runs: plain,
# --live-record, --live-dvr, both. The server's CPU is its utime + stime from /proc.
# Figures, in OUT_DIR/dvr/figures.txt:
#   cpu_seconds PLAIN RECORD DVR BOTH SECONDS   CPU seconds the server used over SECONDS (the recording
#   is not cut within them: --live-record-split is its default hour, so what is measured is the
#   writing, not the rescan that lists a completed file)
set -euo pipefail
seconds=$1 out=$2/dvr
build=${VOD_BUILD_DIR:-build}
here=$(dirname "$0")
source "$here/../tests/free_port.sh"
mkdir -p "$out"
work=$(mktemp -d)
pid=
trap '[[ -n $pid ]] && kill -KILL "$pid" 2> /dev/null; rm -rf "$work"' EXIT
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

run() {  # run NAME [vod-server options...]: prints the CPU seconds of the measured interval
  local name=$1
  shift
  mkdir -p "$work/$name/media"
  "$build/server/vod-server" --no-rdma --udp-port "$(free_port)" --bind 127.0.0.1 --media-dir "$work/$name/media" --state-dir "" \
    --live "pattern=-" --live-bitrate 40 "$@" < <(exec "$build/tests/rdma/ts_tool" pattern --rate 40 --gop 2000) 2> "$out/$name.log" &
  pid=$!
  for _ in $(seq 100); do grep -q 'listening on' "$out/$name.log" && break; sleep 0.1; done
  sleep 3
  local t0 t1
  t0=$(ticks "$pid")
  sleep "$seconds"
  t1=$(ticks "$pid")
  kill -TERM "$pid"
  wait "$pid" 2> /dev/null || true
  pid=
  awk -v d=$((t1 - t0)) -v hz="$hz" 'BEGIN { printf "%.2f", d / hz }'
}

plain=$(run plain)
record=$(run record --live-record)
dvr=$(run dvr --live-dvr 2m --live-dvr-dir "$work/dvr-files" --segment-size 1M)
both=$(run both --live-record --live-dvr 2m --live-dvr-dir "$work/dvr-both" --segment-size 1M)
echo "cpu_seconds $plain $record $dvr $both $seconds" | tee "$out/figures.txt"
