#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# udp-report.sh RESULTS_DIR: the Write-Record section of docs/benchmarks.md (Markdown on stdout),
# from udp-benchmarks.sh's rows in results.tsv.
set -euo pipefail
in=$1
source "$(dirname "${BASH_SOURCE[0]}")/report-lib.sh"
r() { awk -F'\t' -v s="$1" -v k="$2" '$1 == s && $2 == k { print $3 }' "$in/results.tsv" | tail -n 1; }
[[ -n $(r udp_cpu_s vod) ]] || { not_measured "## 8. Write-Record over UDP: server CPU, loss recovery, buffering" \
  "\`bench/udp-benchmarks.sh\`, as scripts/bench.sh runs it (its sender CPU natively, the rest in the Soft-RoCE session),"; exit 0; }
secs=$(r udp cpu_seconds); n=$(r udp streams); mbps=$(r udp stream_mbps)
ms() { awk -v s="$1" 'BEGIN { if (s == "") print "n/a"; else printf "%.0f", 1000 * s }'; }
pct() { awk -v c="$1" -v s="$secs" 'BEGIN { if (s + 0 == 0 || c == "") print "n/a"; else printf "%.1f%%", 100 * c / s }'; }
vod=$(r udp_cpu_s vod); vlc=$(r udp_cpu_s vlc_rtp); ngx=$(r udp_cpu_s nginx)
ratio=$(awk -v v="$vod" -v p="$vlc" 'BEGIN { if (v + 0 <= 0) print "n/a"; else printf "%.1f", p / v }')
cat <<MD
## 8. Write-Record over UDP: server CPU, loss recovery, buffering

Measured in the same run as the sections above: loss recovery and buffering in the same guest, the
senders' CPU natively (see below). docs/write-record.md explains the transport.

**Server CPU for $n streams** of the 1080p movie at $mbps Mbit/s each, over $secs s on loopback
($([[ $(r udp cpu_where) == native ]] && echo "natively on the host, in a network namespace of its own: UDP needs no RDMA, and TCG would misstate the senders' costs" || echo "in the guest, under TCG")), in % of one core: vod-server sending by Write-Record to $n \`vod-client play --transport udp\` viewers (paced
at the movie's bitrate); VLC 3 sending the same file by RTP/UDP (\`#duplicate\` of \`rtp{mux=ts}\` to
$n multicast destinations that nobody joins: one demux for all, VLC's best case); nginx sendfile to $n
\`curl --limit-rate\` clients. Each is measured after 2–3 s of start-up (the players filling their
read-ahead, VLC opening the file), over the steady state a viewer sees.

| sender | CPU |
|--------|----:|
| vod-server (Write-Record) | $(pct "$vod") |
| VLC (RTP/UDP) | $(pct "$vlc") |
| nginx (sendfile, TCP) | $(pct "$ngx") |

**Loss recovery**: \`vod-client get --transport udp\` of the 480p TS ($(r udp_loss size_bytes) bytes) from a
server in another network namespace, over a veth with netem (the loss both ways, 1 ms delay).

| loss | byte-exact | time (s) | goodput (Mbit/s) | repair bytes | repair / movie | server CPU (s) | client CPU (s) |
|-----:|:----------:|---------:|-----------------:|-------------:|---------------:|---------------:|---------------:|
MD
size=$(r udp_loss size_bytes)
for loss in 0 0.1 1 5; do
  [[ -n $(r udp_loss_seconds "$loss") ]] || continue
  rb=$(r udp_loss_repair_bytes "$loss")
  echo "| $loss% | $(r udp_loss_exact "$loss") | $(r udp_loss_seconds "$loss") | $(r udp_loss_goodput_mbps "$loss") | $rb | $(awk -v a="$rb" -v b="$size" 'BEGIN { printf "%.2f%%", b ? 100 * a / b : 0 }') | $(r udp_loss_server_cpu_s "$loss") | $(r udp_loss_client_cpu_s "$loss") |"
done
exact_met=yes
for l in 0.1 1 5; do [[ $(r udp_loss_exact "$l") == yes ]] || exact_met="no (or not all run)"; done
cat <<MD

**Buffering time**, from starting the client process to the first 2 s of the movie ($(r udp buffer_bytes)
bytes) in hand, median (\`vod-client play --unpaced | head -c\`, which includes the client's start-up,
the connection or cookie exchange, and the catalog and index reads):

| Write-Record (UDP) | RDMA Read (RC) | HTTP range request to nginx (curl) |
|-------------------:|---------------:|-----------------------------------:|
| $(ms "$(r udp_buffering_s udp)") ms | $(ms "$(r udp_buffering_s rdma)") ms | $(ms "$(r udp_buffering_s http)") ms |

The paper measured Write-Record 74% faster than RC to buffer with VLC; here Write-Record takes
$(awk -v u="$(r udp_buffering_s udp)" -v d="$(r udp_buffering_s rdma)" 'BEGIN { if (d + 0 > 0) printf "%.0f%%", 100 * (d - u) / d; else print "n/a" }') less time than RDMA Read.

| goal | measured | goal | met |
|------|----------|------|-----|
| server CPU for $n HD streams ≥ 10× below VLC's RTP sender | vod $(pct "$vod"), VLC $(pct "$vlc"): ${ratio}× | ≥ 10× | $(awk -v r="$ratio" 'BEGIN { print (r + 0 >= 10 ? "yes" : "no") }') |
| byte-exact under 0.1, 1 and 5% loss | $(for l in 0.1 1 5; do printf '%s%%: %s; ' "$l" "$(r udp_loss_exact "$l" | grep . || echo 'not run')"; done) | byte-exact | $exact_met |
| no more repair traffic and less sender CPU than SRT | not measured: see below | ≤ SRT | not measured |

The SRT comparison is not in this run. srt-tools is installed, but \`srt-live-transmit\` in file mode
(\`transtype=file\`) did not end at the end of its input and its copy was not byte-exact in a first
try; a fair peer needs a file-transfer harness around libsrt (or GStreamer's srtsink/srtsrc) that
was not built.
MD
