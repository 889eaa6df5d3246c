#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# iwarp-report.sh RESULTS_DIR: the iWARP section of docs/benchmarks.md (Markdown on stdout), from
# iwarp-benchmarks.sh's rows in results.tsv.
set -euo pipefail
in=$1
source "$(dirname "${BASH_SOURCE[0]}")/report-lib.sh"
[[ -n $(r iwarp clients) ]] || { not_measured "## 12. iWARP: siw beside rxe in the same guest" \
  "\`bench/iwarp-benchmarks.sh\`, in a Soft-RoCE session with siw (\`softroce-run --device both\`, as scripts/bench.sh opens it),"; exit 0; }
mib() { awk -v k="$1" 'BEGIN { if (k == "") print "n/a"; else printf "%.1f", k / 1024 }'; }
row() {  # row DEVICE
  local d=$1
  echo "| $d | $(r iwarp_ib_read_bw_mbytes_per_s "$d") | $(r iwarp_goodput_mbytes_per_s "${d}_1") ($(ratio "$(r iwarp_goodput_mbytes_per_s "${d}_1")" "$(r iwarp_ib_read_bw_mbytes_per_s "$d")")×) | $(r iwarp_goodput_mbytes_per_s "${d}_4") | $(ms "$(r iwarp_seek_p50_us "$d")") | $(ms "$(r iwarp_warm_start_p50_us "$d")") | $(ms "$(r iwarp_cold_start_p50_us "$d")") | $(r iwarp_jumping_server_cpu_s "$d") | $(awk -v l="$(r iwarp_jumping_late "$d")" -v t="$(r iwarp_jumping_in_time "$d")" 'BEGIN { if (l == "") print "n/a"; else printf "%d of %d", l, l + t }') |"
}
iso() {  # iso DEVICE CONFIG LABEL
  local c
  c=$(r iwarp_connects_per_s "${1}_$2")
  [[ -n $c ]] || return 0
  echo "| $1 | $3 | $c | $(ratio "$c" "$(r iwarp_connects_per_s "${1}_shared")") | $(ms "$(r iwarp_startup_p50_us "${1}_$2")") | $(mib "$(r iwarp_pinned_kib_per_connection "${1}_$2")") |"
}
siw_goodput=$(ratio "$(r iwarp_goodput_mbytes_per_s siw_1)" "$(r iwarp_ib_read_bw_mbytes_per_s siw)")
siw_iso=$(ratio "$(r iwarp_connects_per_s siw_pd)" "$(r iwarp_connects_per_s siw_shared)")
rxe_iso=$(ratio "$(r iwarp_connects_per_s rxe_pd)" "$(r iwarp_connects_per_s rxe_shared)")
cat <<MD
## 12. iWARP: siw beside rxe in the same guest

Both devices in the same guest and the same run (\`softroce-run --device both\`: rxe on one veth, siw
on another), the same $(r iwarp movie_mib) MiB movie, one device after the other
(bench/iwarp-benchmarks.sh). ib_read_bw is at the goodput runs' chunk size (256 KiB, one QP);
goodput is \`vod-client get\` at full speed; seek is 1 viewer jumping every 0.5 s; the warm start is
the movie opened again and again in one process, the cold start a fresh process's open to its first
16 KiB. Server CPU is vod-server's own utime+stime while $(r iwarp jumpers) viewers jump every 3 s
(the emulated NIC's kernel threads are left out, on both devices).

| device | ib_read_bw (MB/s) | goodput, 1 client (MB/s) | 4 clients (MB/s) | seek p50 (ms) | warm start p50 (ms) | cold start p50 (ms) | server CPU, jumping viewers (s) | late chunks |
|--------|------------------:|-------------------------:|-----------------:|--------------:|--------------------:|--------------------:|--------------------------------:|------------:|
$(row rxe)
$(row siw)

Isolation with tokens on both sides of each comparison: **shared** (\`--isolation shared\`: the token
decides who connects, the shared regions' rkeys decide nothing), **pd** (a protection domain per
connection, with a registration of exactly what it was granted: docs/security.md) and, on rxe,
**windows** (a memory window per connection bound to its QP before the accept). \`vod-client bench\`
opens $(r iwarp clients) sessions one after another; pinned memory is the server's VmPin with all of
them connected, less before, per connection.

| device | isolation | connects per second | vs shared | startup p50 (ms) | pinned per connection (MiB) |
|--------|-----------|--------------------:|----------:|-----------------:|----------------------------:|
$(iso rxe shared "shared rkeys")
$(iso rxe pd "a PD per connection")
$(iso rxe windows "windows per connection")
$(iso siw shared "shared rkeys")
$(iso siw pd "a PD per connection")

A PD per connection registers the catalog, the movie and its index again for each connection: the
movie's pages are pinned once more per connection (the same physical pages: VmPin and
\`--isolation-memory\` count them, RAM does not grow), which is what \`--isolation-memory\` bounds
(default 8 GiB; a connect past it is refused saying so). With a segment cache only the segment table
is registered at the accept, and each slot as the connection asks for it.

| goal | measured | goal | met |
|------|---------:|-----:|-----|
| goodput ≥ 0.9 × ib_read_bw on siw (1 client) | $siw_goodput | ≥ 0.9 | $(met "$siw_goodput" ">=" 0.9) |
| connects/s with isolation (pd) ÷ without (shared), siw | $siw_iso | ≥ 0.8 | $(met "$siw_iso" ">=" 0.8) |
| connects/s with isolation (pd) ÷ without (shared), rxe | $rxe_iso | ≥ 0.8 | $(met "$rxe_iso" ">=" 0.8) |
MD
