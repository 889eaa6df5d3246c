#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cache-report.sh RESULTS_DIR: the segment cache's section of docs/benchmarks.md (Markdown on stdout),
# from cache-benchmarks.sh's rows in results.tsv.
set -euo pipefail
in=$1
source "$(dirname "${BASH_SOURCE[0]}")/report-lib.sh"
[[ -n $(r cache_setup movies) ]] || { not_measured "## 11. The segment cache: a library four times the cache, against nginx" \
  "\`bench/cache-benchmarks.sh\`, in scripts/bench.sh's Soft-RoCE session (on a disk of the guest's own),"; exit 0; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + b == 0) print "n/a"; else printf "%.2f%%", 100 * a / (a + b) }'; }
per_gb() { awk -v c="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "n/a"; else printf "%.3f", c / (b / 1e9) }'; }
cold=$(r cache_setup cold_disk)
disk=$(r cache_limit disk_mbytes_per_s)
# The link's limit: ib_read_bw at the largest size section 1 measured, in MB/s.
ib=$(awk -F'\t' '$1 == "ib_read_bw" { v = $3 } END { print v }' "$in/results.tsv")
limit=$(awk -v d="$disk" -v i="$ib" 'BEGIN { m = (d + 0 > 0 && (i + 0 == 0 || d < i)) ? d : i; printf "%.1f", m }')
vod_cpu_gb=$(per_gb "$(r cache_vod cpu_s)" "$(r cache_vod served_bytes)")
nginx_cpu_gb=$(per_gb "$(r cache_nginx cpu_s)" "$(r cache_nginx served_bytes)")
first=$(ratio "$(r cache_vod_startup_after_connect_us cold_p50)" "$(r cache_nginx_startup_after_connect_us cold_p50)")
goodput=$(ratio "$(r cache_vod_cold_get mbytes_per_s)" "$limit")
cpu=$(ratio "$vod_cpu_gb" "$nginx_cpu_gb")
label="cold in the guest: the library is on a virtio disk of the guest's own (\`softroce-run --disk\`, QEMU \`cache=none\`), page cache dropped before each part"
[[ $cold == yes ]] || label="**not cold**: this run had no disk of its own (the library sat on $(r cache_setup device)), so the disk figures are not the disk's"
cat <<MD
## 11. The segment cache: a library four times the cache, against nginx

$(r cache_setup movies) movies ($(r cache_setup library_mib) MiB; each at $(r cache_setup movie_mbps) Mbit/s), served by
\`vod-server --cache-size $(r cache_setup cache_mib)M\` (a quarter of the library, $(r cache_setup segment_kib) KiB
segments) and by nginx from the same files, its memory limited to the same $(r cache_nginx memory_limit_mib) MiB by a cgroup
(\`memory.max\`, which its page cache is charged to). Figures are $label. vod-server's
keyframe indexes were built first ($(awk -v s="$(r cache_setup index_build_s)" 'BEGIN { printf "%.0f", s }') s, kept in its state directory) and are not part
of what is measured. $(r cache_setup viewers) viewers (the in-time section's capacity rule at this bitrate) choose
movies by Zipf's law (exponent 1) and jump every 10 s, for $(r cache_setup run_secs) s.

| | vod-server, segment cache | nginx, page cache in a cgroup | vod ÷ nginx |
|---|---:|---:|---:|
| chunks late (of all) | $(r cache_vod late) of $(( $(r cache_vod in_time) + $(r cache_vod late) )) ($(pct "$(r cache_vod late)" "$(r cache_vod in_time)")) | $(r cache_nginx late) of $(( $(r cache_nginx in_time) + $(r cache_nginx late) )) ($(pct "$(r cache_nginx late)" "$(r cache_nginx in_time)")) | — |
| viewers with a late chunk | $(r cache_vod viewers_late) | $(r cache_nginx viewers_late) | — |
| hit ratio (segments asked for that were resident) | $(r cache_vod hit_ratio) | n/a | — |
| disk bytes read ÷ bytes served | $(ratio "$(r cache_vod disk_bytes)" "$(r cache_vod served_bytes)") | $(ratio "$(r cache_nginx disk_bytes)" "$(r cache_nginx served_bytes)") | — |
| server CPU (s) in the run | $(r cache_vod cpu_s) | $(r cache_nginx cpu_s) | $(ratio "$(r cache_vod cpu_s)" "$(r cache_nginx cpu_s)") |
| server CPU per GB served (s) | $vod_cpu_gb | $nginx_cpu_gb | $(ratio "$vod_cpu_gb" "$nginx_cpu_gb") |
| startup after the connect, cold movie, p50 / worst of $(r cache_setup starts) starts (ms) | $(ms "$(r cache_vod_startup_after_connect_us cold_p50)") / $(ms "$(r cache_vod_startup_after_connect_us cold_p99)") | $(ms "$(r cache_nginx_startup_after_connect_us cold_p50)") / $(ms "$(r cache_nginx_startup_after_connect_us cold_p99)") | $(ratio "$(r cache_vod_startup_after_connect_us cold_p50)" "$(r cache_nginx_startup_after_connect_us cold_p50)") |
| startup after the connect, resident movie, p50 / worst (ms) | $(ms "$(r cache_vod_startup_after_connect_us resident_p50)") / $(ms "$(r cache_vod_startup_after_connect_us resident_p99)") | $(ms "$(r cache_nginx_startup_after_connect_us resident_p50)") / $(ms "$(r cache_nginx_startup_after_connect_us resident_p99)") | $(ratio "$(r cache_vod_startup_after_connect_us resident_p50)" "$(r cache_nginx_startup_after_connect_us resident_p50)") |
| startup after the connect, a movie pinned in memory (no cache), p50 / worst (ms) | $(ms "$(r cache_vod_startup_after_connect_us pinned_p50)") / $(ms "$(r cache_vod_startup_after_connect_us pinned_p99)") | — | — |
| a cold movie's get, whole (MB/s) | $(r cache_vod_cold_get mbytes_per_s) | $(r cache_nginx_cold_get mbytes_per_s) | $(ratio "$(r cache_vod_cold_get mbytes_per_s)" "$(r cache_nginx_cold_get mbytes_per_s)") |

The limits in the same run: the disk's own sequential read bandwidth $disk MB/s (dd, O_DIRECT, 4 MiB
blocks), ib_read_bw $ib MB/s (section 1). The server's own count of the bytes it read from disk was
$(r cache_vod server_disk_bytes) (the block device counted $(r cache_vod disk_bytes)); it evicted $(r cache_vod evictions) segments.

| goal | measured | goal | met |
|------|---------:|-----:|-----|
| a cold movie's first bytes after the connect, p50, vs nginx's | ${first}× | ≤ 1.5× | $(met "$first" "<=" 1.5) |
| cold-movie goodput vs min(disk, ib_read_bw) | $(r cache_vod_cold_get mbytes_per_s) MB/s ÷ $limit = $goodput | ≥ 0.9 | $(met "$goodput" ">=" 0.9) |
| every chunk in time for the viewers | $(r cache_vod late) late | 0 | $(met "$(r cache_vod late)" "<=" 0) |
| server CPU per served byte far below nginx's (a tenth or less) | ${cpu}× | ≤ 0.1× | $(met "$cpu" "<=" 0.1) |

Every start above is a fresh process (\`vod-client bench\` or \`http-bench\` with one viewer), so
each pays its first verbs calls and registrations; the pinned row is the same measure for a movie
served from memory as without a cache, which shows what the cache's path adds to a start: the
segment table's Read, then the slot's Read with its fenced check (and, cold, the request for the
segment and its disk read) where a movie in memory needs one Read.

The viewers' chunks include cold ones: a viewer that jumps into a segment nobody has asked for waits
for the disk, as nginx's does; the goal "in time for resident viewers" is the startup row's resident
figure and the late count of viewers whose movie was already resident, which this run does not separate.
MD
