#!/usr/bin/env bash
# The benchmark suite, one command: bench/run-benchmarks.sh [full|quick|smoke]
#   full   (~15 min in a TCG guest) writes docs/benchmarks.md and docs/benchmarks/*.png
#   quick  (~5 min) the same, with fewer points
#   smoke  (~1 min, used by CI) runs every measurement briefly and writes the report to the
#          build tree only; no figure is asserted
# Everything that needs RDMA runs inside one Soft-RoCE session (tests/softroce/softroce-run):
# vod-server, nginx (sendfile) on the same media, ib_read_bw/ib_read_lat, the clients, the live part
# (against VLC's HTTP live output) and Write-Record's loss and buffering parts; then Write-Record's
# sender CPU (against VLC's RTP output and nginx) natively, in a network namespace.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mode=${1:-full}
case $mode in full|quick|smoke) ;; *) echo "usage: bench/run-benchmarks.sh [full|quick|smoke]" >&2; exit 2 ;; esac
scripts/install-deps.sh
cmake --preset default > /dev/null
cmake --build --preset default -j "$(nproc)" --target vod-server vod-token vod-client vod-proxy vod-mount gstrdma http-bench read-latency make_pattern
duration=60; [[ $mode == smoke ]] && duration=10
media=build/bench-media-${duration}s
media/generate-test-media.sh --out "$media" --duration "$duration" --variants 1080p --containers ts
# The live channel of section 7: the 480p TS (about 1 Mbit/s, so 100 viewers fit rxe's bandwidth).
media/generate-test-media.sh --out "$media/.live" --duration "$duration" --variants 480p --containers ts
export VOD_LIVE_TS=$media/.live/test-480p-${duration}s.ts
out=build/bench-results/$mode
rm -rf "$out"
# Write-Record's sender CPU runs natively (below) unless this is the smoke run: the guest does the rest.
phases="cpu loss buffering"; [[ $mode == smoke ]] || phases="loss buffering"
# Section 11's library: 40 copies of the movie on an ext4 image that the guest gets as a disk of its
# own (its cold-disk figures: the guest cannot drop the host's page cache under its 9p root).
disk=()
if [[ $mode != smoke ]]; then
  staging=build/bench-cache-library image=build/bench-cache-disk.img
  rm -rf "$staging"; mkdir -p "$staging"
  for i in $(seq -w 1 40); do cp "$media/test-1080p-${duration}s.ts" "$staging/movie-$i.ts"; done
  bytes=$(du -bs "$staging" | cut -f1)
  rm -f "$image"; truncate -s $(( bytes * 12 / 10 + (256 << 20) )) "$image"
  mkfs.ext4 -q -F -d "$staging" "$image"
  rm -rf "$staging"
  disk=(--disk "$image")
fi
tests/softroce/softroce-run --timeout 3600 --memory 6144 --device both "${disk[@]}" -- env VOD_BUILD_DIR=build UDP_PHASES="$phases" bench/guest-benchmarks.sh "$mode" "$media" "$out"
[[ $mode == smoke ]] || rm -f "$image"
if [[ $mode != smoke ]]; then
  # UDP needs no RDMA: the sender CPU comparison (vod-server, VLC RTP, nginx) on this host's own
  # kernel, in a network namespace of its own (its loopback only), free of TCG's distortion.
  ns=vodbench$$
  ip netns add "$ns"
  trap 'ip netns del "$ns" 2>/dev/null || true' EXIT
  ip -n "$ns" link set lo up
  ip netns exec "$ns" env VOD_RDMA_ADDR=127.0.0.1 VOD_BUILD_DIR=build UDP_PHASES=cpu \
    bench/udp-benchmarks.sh "$mode" "$media" "$(cd "$media" && ls test-1080p-*.ts | head -n 1)" "$media/.live/test-480p-${duration}s.ts" "$out"
  # vod-proxy's page answers while the vod-server is hung and when it is up (section 5d), natively
  # over UDP Write-Record: the test prints them on its PAGE_MS line.
  VOD_BUILD_DIR=build tests/proxy/vod_proxy_hung_server_test.sh | tee "$out/proxy-hung.log"
  grep '^PAGE_MS ' "$out/proxy-hung.log" | tr ' ' '\n' | awk -F= -v OFS='\t' 'NF == 2 {
    k = $1; if (k ~ /_p50$|_max$/) k = k "_ms"; print "proxy_hung", k, $2 }' >> "$out/results.tsv"
fi
if [[ $mode == smoke ]]; then
  mkdir -p "$out/report"
  bench/make-report.sh "$out" "$out/report" . > "$out/report/benchmarks.md"
  echo "smoke report: $out/report/benchmarks.md"
else
  bench/make-report.sh "$out" docs/benchmarks benchmarks > docs/benchmarks.md
  echo "wrote docs/benchmarks.md and docs/benchmarks/*.png"
fi
