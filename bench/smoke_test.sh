#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# CI's smoke run of the benchmark suite (so that it cannot rot): every measurement, briefly, on the
# test media, and the report built from it. No figure is asserted; the report must hold every
# section and a number for each measurement.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${VOD_BUILD_DIR:?CTest sets VOD_BUILD_DIR}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
VOD_BUILD_DIR=$build VOD_LIVE_TS=$build/test-media/test-480p-60s.ts "$here/guest-benchmarks.sh" smoke "$build/test-media" "$out/results" test-480p-60s.ts
mkdir -p "$out/report"
"$here/make-report.sh" "$out/results" "$out/report" . > "$out/report/benchmarks.md"
for section in "## 1. The limit" "## 2. Goodput" "## 3. Server CPU" "## 4. Seek latency" "## 5. Startup" "## 5b. In time up to capacity" "## 6. Scale" "## Targets" "## 7. Live" "## 8. Write-Record" "## 9. vod-mount" "## 10. Access control" "## 11. The segment cache" "## 13. HLS from vod-proxy"; do
  grep -q "^$section" "$out/report/benchmarks.md" || { echo "FAIL: the report lacks '$section'"; exit 1; }
done
if [[ -n ${VOD_IWARP_ADDR:-} ]]; then  # siw in this session: section 12 ran, on both devices
  grep -q "^## 12. iWARP" "$out/report/benchmarks.md" || { echo "FAIL: the report lacks '## 12. iWARP'"; exit 1; }
  for key in iwarp_ib_read_bw_mbytes_per_s iwarp_goodput_mbytes_per_s iwarp_seek_p50_us iwarp_cold_start_p50_us iwarp_connects_per_s; do
    for dev in rxe siw; do
      grep -qP "^$key\t${dev}\S*\t[0-9.]+$" "$out/results/results.tsv" || { echo "FAIL: no $dev figure for $key"; grep ^iwarp "$out/results/results.tsv"; exit 1; }
    done
  done
fi
for key in ib_read_bw goodput_mbytes_per_s read_latency_16k_gap0ms read_latency_16k_gap50ms read_latency_16k_gap50_busyms seek_1client scale_rss_kib fullspeed_mbps startup_zap; do
  grep -qP "^$key\t\S+\t[0-9.]+$" "$out/results/results.tsv" || { echo "FAIL: no figure for $key"; cat "$out/results/results.tsv"; exit 1; }
done
# Beside other tests perftest's clock calibration may fail three times over and it says inf: that
# is still its latency line, parsed (the figure itself is only meaningful in a run alone).
grep -qP "^ib_read_lat_typical_us\t\S+\t([0-9.]+|inf)$" "$out/results/results.tsv" || { echo "FAIL: no figure for ib_read_lat_typical_us"; cat "$out/results/results.tsv"; exit 1; }
[[ $(grep -c '^vod' "$out/results/sweep.tsv") -ge 2 && $(grep -c '^nginx' "$out/results/sweep.tsv") -ge 2 ]] || { echo "FAIL: sweep rows missing"; exit 1; }
grep -P '^(vod|nginx)\t' "$out/results/sweep.tsv" | awk -F'\t' '$7 + $8 == 0 { bad = 1 } END { exit bad }' || { echo "FAIL: a run delivered no chunk"; cat "$out/results/sweep.tsv"; exit 1; }
[[ $(grep -c '^vod' "$out/results/live.tsv") -ge 2 && $(grep -c '^vlc' "$out/results/live.tsv") -ge 2 ]] || { echo "FAIL: live rows missing"; cat "$out/results/live.tsv"; exit 1; }
awk -F'\t' '$1 == "vod" && $2 > 0 && $8 + 0 == 0 { bad = 1 } END { exit bad }' "$out/results/live.tsv" || { echo "FAIL: a live run delivered no record"; cat "$out/results/live.tsv"; exit 1; }
for key in udp_cpu_s udp_loss_seconds udp_loss_goodput_mbps udp_buffering_s; do
  grep -qP "^$key\t\S+\t[0-9.]+$" "$out/results/results.tsv" || { echo "FAIL: no figure for $key"; grep ^udp "$out/results/results.tsv"; exit 1; }
done
grep -qP '^udp_loss_exact\t1\tyes$' "$out/results/results.tsv" || { echo "FAIL: the Write-Record get at 1% loss was not byte-exact"; grep ^udp "$out/results/results.tsv"; exit 1; }
for key in mount_read_mbps mount_first_frame_s; do
  grep -qP "^$key\t\S+\t[0-9.]+$" "$out/results/results.tsv" || { echo "FAIL: no figure for $key"; grep ^mount "$out/results/results.tsv"; exit 1; }
done
for key in cache_vod cache_nginx cache_vod_startup_after_connect_us cache_nginx_startup_after_connect_us cache_vod_cold_get cache_nginx_cold_get; do
  grep -qP "^$key\t\S+\t[0-9.]+$" "$out/results/results.tsv" || { echo "FAIL: no figure for $key"; grep ^cache "$out/results/results.tsv"; exit 1; }
done
awk -F'\t' '$1 == "cache_vod" && $2 == "in_time" && $3 > 0 { ok = 1 } END { exit !ok }' "$out/results/results.tsv" ||
  { echo "FAIL: the segment cache's viewers got no chunk"; grep ^cache "$out/results/results.tsv"; exit 1; }
for key in hls_playlist_cold_ms hls_playlist_warm_ms hls_cpu_s_per_gb hls_mbytes_per_s; do
  for what in ts mkv_cached nginx; do
    [[ $key == hls_playlist* && $what != ts ]] && continue
    grep -qP "^$key\t$what\t[0-9.]+$" "$out/results/results.tsv" || { echo "FAIL: no figure for $key $what"; grep ^hls "$out/results/results.tsv"; exit 1; }
  done
done
for what in first warm; do
  grep -qP "^hls_live_playlist_ms\t$what\t[0-9.]+$" "$out/results/results.tsv" || { echo "FAIL: no figure for the live playlist ($what)"; grep ^hls_live "$out/results/results.tsv"; exit 1; }
done
for what in parts_p50 parts_p99 segments_p50; do
  grep -qP "^hls_live_age_ms\t$what\t[0-9]+$" "$out/results/results.tsv" || { echo "FAIL: no figure for the live age ($what)"; grep ^hls_live "$out/results/results.tsv"; exit 1; }
done
for key in auth_connects_per_s auth_startup_p50_us auth_window_bind_p50_us; do
  grep -qP "^$key\t\S+\t[0-9.]+$" "$out/results/results.tsv" || { echo "FAIL: no figure for $key"; grep ^auth "$out/results/results.tsv"; exit 1; }
done
echo "PASS: benchmark smoke run; report has every section"
