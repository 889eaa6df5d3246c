#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# scripts/bench.sh [full|quick|smoke] [--out DIR] [--write-docs]: the benchmark suite, one command.
#   full    the most points and the longest runs
#   quick   (the default) fewer points; what docs/benchmarks.md is usually made from
#   smoke   every measurement briefly (a 10 s movie, few points, short runs), to see that all of
#           it still works; its figures mean little
# Installs what it needs, builds, makes the media, then measures every section of
# docs/benchmarks.md:
#   - in one Soft-RoCE session (tests/softroce/softroce-run), everything that needs RDMA: sections
#     1-13 (bench/guest-benchmarks.sh), zero copy (15, bench/zero-copy-benchmarks.sh), adaptive
#     bitrate on a shaped link (17, bench/abr-benchmarks.sh), the DVR window's viewers and seeks (19,
#     bench/dvr-rdma-benchmarks.sh) and, except
#     in smoke runs, a fleet's failover (14, tests/rdma/vod_fleet_test.sh through
#     bench/fleet-benchmarks.sh);
#   - natively, what needs no RDMA and which TCG would distort: Write-Record's sender CPU (8; in the
#     guest in smoke runs), vod-proxy's pages with a hung server (5d), the first frame in Chromium
#     (13, bench/browser-benchmarks.sh), the fleet's placement arithmetic (14) and an edge of an HTTP
#     origin against nginx's slice cache (18, bench/origin-benchmarks.sh), what live recording and the
#     DVR window add to a channel's CPU (19, bench/dvr-benchmarks.sh).
# The results and each step's log go to DIR (default build/bench-results/MODE), the report to
# DIR/report/benchmarks.md with its plots beside it; --write-docs also writes docs/benchmarks.md and
# docs/benchmarks/*.png, unless a step failed. Exit status 1 when a step failed (the report is still
# made from what was measured), 2 on a bad argument.
set -euo pipefail
usage() {  # usage STATUS: on stdout when asked for, else on stderr
  local fd=2; [[ $1 -eq 0 ]] && fd=1
  echo "usage: scripts/bench.sh [full|quick|smoke] [--out DIR] [--write-docs]" >&"$fd"
  echo "  default: quick, --out build/bench-results/MODE; --write-docs rewrites docs/benchmarks.md" >&"$fd"
  exit "$1"
}
mode=quick out='' write_docs='' in_guest=''
while (($#)); do
  case $1 in
    full|quick|smoke) mode=$1 ;;
    --out) [[ $# -ge 2 && -n $2 ]] || usage 2; out=$(realpath -m "$2"); shift ;;  # relative to the caller's directory
    --write-docs) write_docs=1 ;;
    --in-guest) in_guest=1 ;;  # internal: this script again, inside the Soft-RoCE session it opened
    -h|--help) usage 0 ;;
    *) usage 2 ;;
  esac
  shift
done
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${out:-$PWD/build/bench-results/$mode}
duration=60; [[ $mode == smoke ]] && duration=10
media=$PWD/build/bench-media-${duration}s
export VOD_BUILD_DIR=$PWD/build
export BENCH_T0=${BENCH_T0:-$(date +%s)}  # the guest's lines count from the same start
failed=()

# step NAME WHAT COMMAND...: runs COMMAND with its output in $out/log/NAME.log, saying what it does
# and, when it ends, how long it took; a failure is noted, shown, and the run goes on.
step() {
  local name=$1 what=$2 started=$SECONDS rc=0
  shift 2
  echo "bench: [$(( $(date +%s) - BENCH_T0 )) s] $what (log: $out/log/$name.log)"
  # A subshell that stops at its first error, as a command of its own: inside an `if` or an `||`
  # list, set -e would be off in the functions run as steps.
  set +e
  (set -e; "$@") > "$out/log/$name.log" 2>&1
  rc=$?
  set -e
  if [[ $rc -eq 0 ]]; then
    echo "bench:   done in $((SECONDS - started)) s"
  else
    echo "bench:   FAILED (exit $rc) after $((SECONDS - started)) s; its last lines:"
    tail -n 15 "$out/log/$name.log" | sed 's/^/    /'
    failed+=("$name")
  fi
}

if [[ -n $in_guest ]]; then
  # Write-Record's sender CPU runs natively (below) unless this is the smoke run.
  phases="cpu loss buffering"; [[ $mode == smoke ]] || phases="loss buffering"
  step guest-benchmarks "sections 1-13 (bench/guest-benchmarks.sh $mode)" \
    env UDP_PHASES="$phases" VOD_LIVE_TS="$media/.live/test-480p-${duration}s.ts" bench/guest-benchmarks.sh "$mode" "$media" "$out"
  zc=(); [[ $mode == smoke ]] && zc=(ZC_RUNS=1 ZC_MIB=16)
  step zero-copy "section 15, zero copy (bench/zero-copy-benchmarks.sh)" env "${zc[@]}" bench/zero-copy-benchmarks.sh "$out/zero-copy"
  step abr "section 17, adaptive bitrate on a shaped link (bench/abr-benchmarks.sh)" bench/abr-benchmarks.sh "$mode" "$media/.titles" "$out"
  step dvr-rdma "section 19, the DVR window's viewers and seeks over RDMA (bench/dvr-rdma-benchmarks.sh)" \
    bench/dvr-rdma-benchmarks.sh "$mode" "$media/.live/test-480p-${duration}s.ts" "$out"
  # The failover takes minutes (the transport notices a dead server slowly under TCG): not in smoke
  # runs, whose report says it was not measured.
  [[ $mode == smoke ]] ||
    step fleet-failover "section 14, a fleet's failover (tests/rdma/vod_fleet_test.sh)" env FLEET_PARTS=failover bench/fleet-benchmarks.sh "$out/fleet"
  exit $(( ${#failed[@]} > 0 ))
fi

# A previous run's directory is replaced; anything else is not ours to delete.
if [[ -d $out && -n $(ls -A "$out") && ! -e $out/log && ! -e $out/results.tsv ]]; then
  echo "bench: $out holds files that are not a benchmark run's; choose another --out" >&2
  exit 2
fi
rm -rf "$out"
mkdir -p "$out/log"

build() {
  cmake --preset default
  cmake --build --preset default -j "$(nproc)" --target vod-server vod-token vod-client vod-proxy vod-mount gstrdma \
    http-bench read-latency placement-balance make_pattern ts_tool
}
make_media() {
  media/generate-test-media.sh --out "$media" --duration "$duration" --variants 1080p --containers ts
  # The live channel of section 7 (about 1 Mbit/s, so 100 viewers fit rxe's bandwidth), and the
  # browser's movie of section 13 (the MP4 is made anyway: the other containers are remuxed from it).
  media/generate-test-media.sh --out "$media/.live" --duration "$duration" --variants 480p --containers mp4,ts
  tests/media/make-shaped-title.sh "$media/.titles"  # section 17's title of three constant-rate renditions
}
# Section 11's library: 40 copies of the movie on an ext4 image that the guest gets as a disk of its
# own (its cold-disk figures: the guest cannot drop the host's page cache under its 9p root).
image=$PWD/build/bench-cache-disk.img
make_cache_disk() {
  local staging=build/bench-cache-library bytes
  rm -rf "$staging"; mkdir -p "$staging"
  for i in $(seq -w 1 40); do cp "$media/test-1080p-${duration}s.ts" "$staging/movie-$i.ts"; done
  bytes=$(du -bs "$staging" | cut -f1)
  rm -f "$image"; truncate -s $(( bytes * 12 / 10 + (256 << 20) )) "$image"
  mkfs.ext4 -q -F -d "$staging" "$image"
  rm -rf "$staging"
}
# UDP needs no RDMA: the sender CPU comparison (vod-server, VLC RTP, nginx) on this host's own
# kernel, in a network namespace of its own (its loopback only), free of TCG's distortion.
udp_sender_cpu() {
  local ns=vodbench$$
  ip netns add "$ns"
  # shellcheck disable=SC2064  # expanded now: the step's subshell ends outside this function, where $ns is gone
  trap "ip netns del $ns 2>/dev/null || true" EXIT
  ip -n "$ns" link set lo up
  ip netns exec "$ns" env VOD_RDMA_ADDR=127.0.0.1 UDP_PHASES=cpu \
    bench/udp-benchmarks.sh "$mode" "$media" "test-1080p-${duration}s.ts" "$media/.live/test-480p-${duration}s.ts" "$out"
}
# vod-proxy's page answers while the vod-server is hung and when it is up (section 5d), natively
# over UDP Write-Record: the test prints them on its PAGE_MS line.
proxy_hung() {
  tests/proxy/vod_proxy_hung_server_test.sh | tee "$out/proxy-hung.log"
  grep '^PAGE_MS ' "$out/proxy-hung.log" | tr ' ' '\n' | awk -F= -v OFS='\t' 'NF == 2 {
    k = $1; if (k ~ /_p50$|_max$/) k = k "_ms"; print "proxy_hung", k, $2 }' >> "$out/results.tsv"
}

step deps "installing what the suite needs (scripts/install-deps.sh)" scripts/install-deps.sh
step build "building" build
step media "making the media ($duration s movies)" make_media
disk=()
if [[ $mode != smoke ]]; then
  step cache-disk "section 11's library on a disk image" make_cache_disk
  disk=(--disk "$image")
fi
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "bench: nothing measured: ${failed[*]} failed" >&2
  exit 1
fi

echo "bench: [$(( $(date +%s) - BENCH_T0 )) s] one Soft-RoCE session for everything that needs RDMA (its own log: $out/log/softroce-run.log)"
started=$SECONDS rc=0
tests/softroce/softroce-run --timeout 6000 --memory 6144 --device both "${disk[@]}" -- scripts/bench.sh "$mode" --out "$out" --in-guest \
  2> "$out/log/softroce-run.log" || rc=$?
if [[ $rc -eq 0 ]]; then
  echo "bench:   the session ended after $((SECONDS - started)) s"
else
  echo "bench:   the session FAILED (exit $rc) after $((SECONDS - started)) s; softroce-run's last lines:"
  tail -n 10 "$out/log/softroce-run.log" | sed 's/^/    /'
  failed+=(softroce-run)
fi
rm -f "$image"
printf 'setup\tmode\t%s\n' "$mode" >> "$out/results.tsv"  # after the guest, which starts results.tsv afresh

[[ $mode == smoke ]] || step udp-cpu "section 8, Write-Record's sender CPU, natively in a network namespace" udp_sender_cpu
step proxy-hung "section 5d, vod-proxy's pages with a hung vod-server, natively" proxy_hung
runs=7; [[ $mode == smoke ]] && runs=2
step browser "section 13, the first frame in headless Chromium, natively ($runs runs of each source)" \
  bench/browser-benchmarks.sh "$runs" "$out" "$media/.live/test-480p-${duration}s.mp4" "$media/.live/test-480p-${duration}s.ts"
step fleet-placement "section 14, a fleet's placement (and failover over UDP), natively" env FLEET_PARTS="placement scale" bench/fleet-benchmarks.sh "$out/fleet"
step origin "section 18, an edge of an HTTP origin against nginx's slice cache, natively ($runs runs)" \
  bench/origin-benchmarks.sh "$runs" "$out" "$media/.live/test-480p-${duration}s.ts"
step dvr "section 19, what live recording and the DVR window add to the source thread, natively" bench/dvr-benchmarks.sh "$duration" "$out"

mkdir -p "$out/report"
report() { bench/make-report.sh "$out" "$out/report" . > "$out/report/benchmarks.md"; }
step report "the report" report
if [[ -n $write_docs ]]; then
  if [[ ${#failed[@]} -gt 0 ]]; then
    echo "bench: docs/benchmarks.md left as it was: ${failed[*]} failed"
  else
    # Written aside first, so that a report that fails leaves the docs as they were.
    docs() {
      bench/make-report.sh "$out" docs/benchmarks benchmarks > "$out/report/docs-benchmarks.md"
      mv "$out/report/docs-benchmarks.md" docs/benchmarks.md
    }
    step docs "docs/benchmarks.md and docs/benchmarks/*.png" docs
  fi
fi
echo "bench: [$(( $(date +%s) - BENCH_T0 )) s] report: $out/report/benchmarks.md"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "bench: failed: ${failed[*]} (their logs are in $out/log)" >&2
  exit 1
fi
