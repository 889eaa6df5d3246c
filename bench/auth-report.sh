#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# auth-report.sh RESULTS_DIR: the access-control section of docs/benchmarks.md (Markdown on stdout),
# from auth-benchmarks.sh's rows in results.tsv.
set -euo pipefail
in=$1
source "$(dirname "${BASH_SOURCE[0]}")/report-lib.sh"
r() { awk -F'\t' -v s="$1" -v k="$2" '$1 == s && $2 == k { print $3 }' "$in/results.tsv" | tail -n 1; }
[[ -n $(r auth_connects_per_s open) ]] || { not_measured "## 10. Access control: tokens and memory windows" \
  "\`bench/auth-benchmarks.sh\`, in scripts/bench.sh's Soft-RoCE session,"; exit 0; }
windows_share_startup=$(awk -v a="$(r auth_startup_p50_us cache_windows)" -v b="$(r auth_startup_p50_us cache)" 'BEGIN { if (a == "" || b == "") print "n/a"; else printf "%+.1f ms", (a - b) / 1000 }')
windows_share_cpu=$(awk -v a="$(r auth_streaming_cpu_s cache_windows)" -v b="$(r auth_streaming_cpu_s cache)" 'BEGIN { if (a == "" || b == "") print "n/a"; else printf "%+.3f", a - b }')
ms() { awk -v us="$1" 'BEGIN { if (us == "") print "n/a"; else printf "%.1f", us / 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 == 0 || b + 0 == 0) print "n/a"; else printf "%.2f", a / b }'; }
cat <<MD
## 10. Access control: tokens and memory windows

Five vod-servers on the same movie in the same run, one after another (docs/security.md): **open**
(no authorization), **windows** (\`--auth-secret\`: the token checked at every connect, and a memory
window per connection bound to its QP before the accept), **shared** (\`--auth-secret
--no-memory-windows\`: the token, then the shared regions' rkeys), and a **segment cache** without
and with tokens (docs/segment-cache.md). \`vod-client bench\` opens
$(r auth clients) sessions one after another (rdma_cm connect, catalog and index reads), then streams.

| server | connects per second | startup to the first chunk, p50 (ms) | vs open | server CPU while streaming (s) |
|--------|--------------------:|-------------------------------------:|--------:|-------------------------------:|
| open | $(r auth_connects_per_s open) | $(ms "$(r auth_startup_p50_us open)") | 1.00 | $(r auth_streaming_cpu_s open) |
| tokens + windows | $(r auth_connects_per_s windows) | $(ms "$(r auth_startup_p50_us windows)") | $(ratio "$(r auth_startup_p50_us windows)" "$(r auth_startup_p50_us open)") | $(r auth_streaming_cpu_s windows) |
| tokens, shared rkeys | $(r auth_connects_per_s shared) | $(ms "$(r auth_startup_p50_us shared)") | $(ratio "$(r auth_startup_p50_us shared)" "$(r auth_startup_p50_us open)") | $(r auth_streaming_cpu_s shared) |
| segment cache, no tokens | $(r auth_connects_per_s cache) | $(ms "$(r auth_startup_p50_us cache)") | $(ratio "$(r auth_startup_p50_us cache)" "$(r auth_startup_p50_us open)") | $(r auth_streaming_cpu_s cache) |
| segment cache, tokens + a window per slot | $(r auth_connects_per_s cache_windows) | $(ms "$(r auth_startup_p50_us cache_windows)") | $(ratio "$(r auth_startup_p50_us cache_windows)" "$(r auth_startup_p50_us open)") | $(r auth_streaming_cpu_s cache_windows) |

Binding the three windows (catalog, movie, index), from the connect request to the accept as the
server measures it: median $(r auth_window_bind_p50_us windows) µs per connect. It is setup work,
like the accept; while the viewers stream, a server without a cache has nothing to do in any mode.
With a segment cache (16 MiB of 1 MiB slots, smaller than the movie) the server answers each
viewer's segment requests, and with tokens it binds a window over each slot a viewer asks for
before it answers: the last two rows are what that costs, the windows' share being the difference
between them (startup: ${windows_share_startup:-n/a}; server CPU while streaming: ${windows_share_cpu:-n/a} s).

| goal | measured | goal | met |
|------|---------:|-----:|-----|
| windows cost little per connect: connects/s with windows ÷ open | $(ratio "$(r auth_connects_per_s windows)" "$(r auth_connects_per_s open)") | ≥ 0.9 | $(awk -v a="$(r auth_connects_per_s windows)" -v b="$(r auth_connects_per_s open)" 'BEGIN { print (b > 0 && a / b >= 0.9 ? "yes" : "no") }') |
| the data path stays free of server CPU: server CPU while streaming with windows | $(r auth_streaming_cpu_s windows) s | ≤ open + 0.05 s ($(r auth_streaming_cpu_s open) s) | $(awk -v a="$(r auth_streaming_cpu_s windows)" -v b="$(r auth_streaming_cpu_s open)" 'BEGIN { print (a <= b + 0.05 ? "yes" : "no") }') |
MD
