#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# zero-copy-report.sh RESULTS_DIR: the zero-copy section of docs/benchmarks.md (Markdown on stdout),
# from bench/zero-copy-benchmarks.sh's RESULTS_DIR/zero-copy/figures.txt, one line per run:
#   ib_read_bw_MBps X / movie_MiB N / runs_per_row N
#   get auto|off run N: copied/delivered R, X MB/s (÷ ib_read_bw R), user X s/GiB, sys X s/GiB, client switches/s X, server switches/s X
#   get depth D chunk CKiB: X MB/s (÷ ib_read_bw R)
#   rdmasrc zero-copy=true|false run N: copied/delivered R, X MB/s, user X s/GiB, sys X s/GiB (the pipeline)
#   vod-proxy auto|off run N: copied/delivered R (since the start), proxy CPU X s/GiB, X MB/s, server switches/s X
#   vod-mount auto|off run N: copied/delivered R (N direct Reads), X MB/s, vod-mount user X s/GiB, sys X s/GiB
#   nginx sendfile: CPU X s/GiB, X MB/s, worker switches/s X
set -euo pipefail
in=$1
source "$(dirname "${BASH_SOURCE[0]}")/report-lib.sh"
figures=$in/zero-copy/figures.txt
heading="## 15. Zero copy to the consumer"
[[ -s $figures ]] || { not_measured "$heading" "\`bench/zero-copy-benchmarks.sh\` (in a Soft-RoCE guest; scripts/bench.sh runs it in its session)"; exit 0; }
# Every figure as "PATH MODE METRIC VALUE": MODE is on or off (the depth sweep's: DEPTHxCHUNK_KIB).
facts=$(awk '
  function num(re, n,   a) { if (!match($0, re)) return ""; split(substr($0, RSTART, RLENGTH), a, " "); return a[n] }
  function put(metric, v) { if (v != "") print p, m, metric, v }
  $1 == "get" && $3 == "run" { p = "get"; m = ($2 == "auto") ? "on" : "off" }
  $1 == "get" && $2 == "depth" { p = "depth"; m = $3 "x" $5; sub(/KiB:$/, "", m) }
  $1 == "rdmasrc" { p = "rdmasrc"; m = ($2 == "zero-copy=true") ? "on" : "off" }
  $1 == "vod-proxy" { p = "proxy"; m = ($2 == "auto") ? "on" : "off" }
  $1 == "vod-mount" { p = "mount"; m = ($2 == "auto") ? "on" : "off" }
  $1 == "nginx" { p = "nginx"; m = "-" }
  $1 ~ /^(get|rdmasrc|vod-proxy|vod-mount|nginx)$/ {
    put("ratio", num("copied/delivered -?[0-9.]+", 2)); put("mbps", num("[0-9.]+ MB/s", 1)); put("of_ib", num("ib_read_bw [0-9.]+", 2))
    put("user", num("user [0-9.]+ s/GiB", 2)); put("sys", num("sys [0-9.]+ s/GiB", 2)); put("cpu", num("CPU [0-9.]+ s/GiB", 2))
    put("client_sw", num("client switches/s [0-9.]+", 3)); put("server_sw", num("server switches/s [0-9.]+", 3))
    put("worker_sw", num("worker switches/s [0-9.]+", 3)); put("direct", num("[0-9]+ direct Reads", 1)) }
  $1 == "ib_read_bw_MBps" || $1 == "movie_MiB" || $1 == "runs_per_row" { print "setup", "-", $1, $2 }' "$figures")
# pick PATH MODE METRIC WHAT: the median, min, max or n (count) of the runs' figures; n/a when none.
# A negative copy ratio is the mount's "nothing delivered": no figure.
pick() {
  awk -v p="$1" -v m="$2" -v k="$3" '$1 == p && $2 == m && $3 == k && $4 >= 0 { print $4 }' <<< "$facts" | sort -g |
    awk -v what="$4" '{ v[++n] = $1 }
      END { if (!n) { print (what == "n" ? 0 : "n/a"); exit }
        if (what == "n") print n; else if (what == "min") print v[1]; else if (what == "max") print v[n]
        else if (n % 2) print v[(n + 1) / 2]
        else { d = index(v[n / 2], ".") ? length(v[n / 2]) - index(v[n / 2], ".") : 0; printf "%.*f\n", d, (v[n / 2] + v[n / 2 + 1]) / 2 } }'
}
# runs PATH MODE METRIC: "median (min–max)" over the runs, or the one figure.
runs() {
  local med lo hi
  med=$(pick "$@" median) lo=$(pick "$@" min) hi=$(pick "$@" max)
  if [[ $lo == "$hi" ]]; then echo "$med"; else echo "$med ($lo–$hi)"; fi
}
setup() { pick setup - "$1" max; }
# verdict X OP GOAL: met's yes or no, or n/a when X was not measured.
verdict() { if [[ $1 == n/a || -z $1 ]]; then echo n/a; else met "$@"; fi; }
# user_ratio PATH: the median user CPU per GiB with zero copy on, over the same forced off.
user_ratio() {
  local on off
  on=$(pick "$1" on user median) off=$(pick "$1" off user median)
  [[ $on != n/a && $off != n/a ]] && ratio "$on" "$off" || echo n/a
}
ib=$(setup ib_read_bw_MBps) n=$(setup runs_per_row) mib=$(setup movie_MiB)
# Figures from before the script recorded these: its fixed 128 MiB, and the runs counted.
[[ $n != n/a ]] || n=$(pick get on mbps n)
[[ $mib != n/a ]] || mib=128
worst_on() { pick "$1" on ratio max; }
copy_measured="get $(worst_on get), rdmasrc $(worst_on rdmasrc), vod-proxy $(worst_on proxy), vod-mount $(worst_on mount)"
copy_met=$(for p in get rdmasrc proxy mount; do worst_on "$p"; done | awk '$1 == "n/a" { na = 1; next } $1 > 0.05 { no = 1 }
  END { print no ? "no" : na ? "n/a (not every path measured)" : "yes" }')
goodput=$(pick get on of_ib median)
best_depth=$(awk '$1 == "depth" && $3 == "of_ib" && $4 > b { b = $4; at = $2 } END { if (at != "") { sub(/x/, " × ", at); printf "%s at %s KiB", b, at } }' <<< "$facts")
depth_rows() {
  local shape shapes
  shapes=$(awk '$1 == "depth" { print $2 }' <<< "$facts" | uniq)
  [[ -n $shapes ]] || echo "| none (ZC_SECTIONS left the sweep out) | n/a | n/a |"
  for shape in $shapes; do
    echo "| ${shape/x/ × }$([[ $shape == 16x256 ]] && echo " (the default)") | $(pick depth "$shape" mbps max) | $(pick depth "$shape" of_ib max) |"
  done
}

cat <<MD
$heading

\`bench/zero-copy-benchmarks.sh\`, in one Soft-RoCE guest (rxe under QEMU/TCG). A $mib MiB pattern
movie is read with direct transfers on (\`--zero-copy auto\`, \`zero-copy=true\`) and forced off. The
copy ratio comes from the clients' own counters (\`Stats::bytes_copied\`, the summary line, and the
proxy's \`/metrics\`); CPU and context switches from the processes' rusage and \`/proc/PID/status\`.
Each row ran $n times (the depth sweep once per shape): shown as the median (lowest–highest).
Under TCG the figures move a lot between runs, ib_read_bw's included (here $ib MB/s at 256 KiB, one
QP): compare on with off within this run, and a ratio to ib_read_bw only with this run's.

Bytes copied ÷ bytes delivered (large sequential reads; the largest of the runs):

| path | zero copy on | forced off |
|------|-------------:|-----------:|
| vod-client get | $(worst_on get) | $(pick get off ratio max) |
| rdmasrc (push mode, \`! fakesink\`) | $(worst_on rdmasrc) | $(pick rdmasrc off ratio max) |
| vod-proxy (curl of the whole movie; its counters since it started) | $(worst_on proxy) | $(pick proxy off ratio max) |
| vod-mount (\`cat\` of the movie through a fresh mount, page cache on) | $(worst_on mount) | $(pick mount off ratio max) |

What is left with zero copy on is the ramp's first block (copied out of the ring on purpose: its
16 KiB head goes first for the start-up latency) and the catalog and keyframe index.

One client, vod-client get to \`/dev/null\`:

| | zero copy on | forced off |
|--|--:|--:|
| goodput (MB/s) | $(runs get on mbps) | $(runs get off mbps) |
| ÷ ib_read_bw of this run | $(runs get on of_ib) | $(runs get off of_ib) |
| user CPU (s/GiB) | $(runs get on user) | $(runs get off user) |
| system CPU (s/GiB) | $(runs get on sys) | $(runs get off sys) |
| client context switches per second | $(runs get on client_sw) | $(runs get off client_sw) |
| vod-server context switches per second during it | $(runs get on server_sw) | $(runs get off server_sw) |

The Reads in flight and their size (zero copy on, one run each):

| --depth × --chunk-kib | MB/s | ÷ ib_read_bw |
|--|--:|--:|
$(depth_rows)

vod-mount, the daemon's CPU over all its threads while \`cat\` reads the movie through a fresh mount
(cold page cache):

| | zero copy on | forced off |
|--|--:|--:|
| throughput (MB/s) | $(runs mount on mbps) | $(runs mount off mbps) |
| direct Reads | $(runs mount on direct) | $(runs mount off direct) |
| user CPU (s/GiB) | $(runs mount on user) | $(runs mount off user) |
| system CPU (s/GiB) | $(runs mount on sys) | $(runs mount off sys) |

The mount's reply to the kernel is one \`writev\` from the registered buffers the Reads landed in
(\`fuse_reply_iov\`); the kernel's copy of the reply into the page cache remains, as FUSE always has
it. The kernel's own read-ahead keeps several 128 KiB reads in flight per file.

rdmasrc, the whole pipeline's CPU (\`gst-launch-1.0 rdmasrc ! fakesink\`; GStreamer's plugin registry
is built before the first timed run):

| | zero copy on | forced off |
|--|--:|--:|
| throughput (MB/s) | $(runs rdmasrc on mbps) | $(runs rdmasrc off mbps) |
| user CPU (s/GiB) | $(runs rdmasrc on user) | $(runs rdmasrc off user) |
| system CPU (s/GiB) | $(runs rdmasrc on sys) | $(runs rdmasrc off sys) |

vod-proxy, one curl of the movie over loopback, beside nginx's sendfile of the same file:

| | vod-proxy, zero copy on | vod-proxy, forced off | nginx (sendfile) |
|--|--:|--:|--:|
| CPU of the serving process (s/GiB) | $(runs proxy on cpu) | $(runs proxy off cpu) | $(runs nginx - cpu) |
| throughput (MB/s) | $(runs proxy on mbps) | $(runs proxy off mbps) | $(runs nginx - mbps) |
| context switches per second (vod-server's while the proxy reads; nginx's worker) | $(runs proxy on server_sw) | $(runs proxy off server_sw) | $(runs nginx - worker_sw) |

How to read these:
- The copy is client user CPU, which the user-CPU rows measure. System time is rxe, which does the
  NIC's work in the poster's own context (and TCG emulates it): on a real RNIC that work leaves the
  CPU, and the copy is then most of what is left.
- One client's goodput against ib_read_bw moves with the bytes in flight (the depth sweep) as well
  as with the copy; ib_read_bw itself varies between runs under TCG, so one run cannot say which of
  the two limits a client.
- vod-proxy's CPU is rxe's work (its process posts the Reads) plus the kernel's copy into the
  socket, which zero copy in user space does not remove. \`MSG_ZEROCOPY\` would remove that copy, but
  on loopback the kernel copies anyway (not built for the proxy; the Write-Record sender has it
  behind \`--udp-zero-copy\`).
- vod-server is meant to do nothing per byte: its context switches while a client reads, beside
  nginx's worker's, show whether it did.

| goal | measured | goal | met |
|------|----------|------|-----|
| copy ratio for large sequential reads on every path, zero copy on (the largest of the runs) | $copy_measured | ≤ 0.05 | $copy_met |
| one client's goodput ÷ ib_read_bw, vod-client get at the defaults (16 × 256 KiB), median | ${goodput}$([[ -n $best_depth ]] && echo "; the depth sweep's best: $best_depth") | ≥ 0.9 | $(verdict "$goodput" ">=" 0.9) |
| client user CPU per GiB, on ÷ forced off (medians): vod-client get | $(user_ratio get) | ≤ 1/3 | $(verdict "$(user_ratio get)" "<=" 0.3334) |
| the same: vod-mount (the daemon) | $(user_ratio mount) | ≤ 1/3 | $(verdict "$(user_ratio mount)" "<=" 0.3334) |
| the same: rdmasrc (the whole pipeline) | $(user_ratio rdmasrc) | ≤ 1/3 | $(verdict "$(user_ratio rdmasrc)" "<=" 0.3334) |
MD
