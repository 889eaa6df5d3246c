#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# mount-benchmarks.sh MODE MEDIA_DIR MOVIE OUT_DIR: vod-mount's part of the benchmark suite, in the
# session guest-benchmarks.sh runs in (the guest loads the fuse module).
#   1. sequential read of MOVIE, MB/s: through the mount with the page cache on and off (dd, caches
#      dropped first), vod-client get, vod-proxy (curl) and nginx sendfile (curl)
#   2. time to the first decoded frame, median: ffmpeg on the mounted file (both settings), through
#      vod-proxy and from nginx, and the local file as the floor
# Appends to OUT_DIR/results.tsv (section, key, value).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/nginx-peer.sh"
mode=$1 media=$(realpath "$2") movie=$3 out=$4
addr=${VOD_RDMA_ADDR:?run through tests/softroce/softroce-run}
build=${VOD_BUILD_DIR:-build}
results=$out/results.tsv
record() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$results"; echo "  $1 $2 = $3"; }
case $mode in
  full) tries=7 ;;
  quick) tries=5 ;;
  smoke) tries=1 ;;
  *) echo "mode must be full, quick or smoke" >&2; exit 2 ;;
esac
if [[ ! -c /dev/fuse ]] || ! command -v fusermount3 > /dev/null; then
  echo "== 9. vod-mount: skipped (no /dev/fuse or fusermount3 here)"
  exit 0
fi
work=$(mktemp -d)
mnt=$(mktemp -d /tmp/vod-bench-mnt.XXXXXX)
pids=()
cleanup() {
  fusermount3 -u -z "$mnt" 2>/dev/null || true
  kill ${pids[*]} 2>/dev/null || true
  rmdir "$mnt" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
now() { date +%s.%N; }
size=$(stat -L -c %s "$media/$movie")
record mount movie_bytes "$size"

echo "== 9. vod-mount: sequential read and first frame, against vod-client get, vod-proxy and nginx"
"$build/server/vod-server" --media-dir "$media" --bind "$addr" --port 7490 2> "$work/server.log" &
pids+=($!)
for _ in $(seq 600); do grep -q 'listening on' "$work/server.log" && break; sleep 0.1; done
start_nginx_peer "$work/nginx" "$addr" 8091 "$media"
pids+=("$nginx_master")
"$build/proxy/vod-proxy" --server "rdma://$addr:7490" --listen 127.0.0.1:8092 2> "$work/proxy.log" &
pids+=($!)
for _ in $(seq 300); do grep -q 'listening on' "$work/proxy.log" && break; sleep 0.1; done

drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true; }
# mbps SECONDS: the movie's size over SECONDS, in MB/s
mbps() { awk -v b="$size" -v s="$1" 'BEGIN { printf "%.1f", (s > 0 ? b / s / 1e6 : 0) }'; }
median() { sort -n | awk '{ a[NR] = $1 } END { print NR ? a[int((NR + 1) / 2)] : "" }'; }
timed() { local t0; t0=$(now); "$@" > /dev/null 2>&1 || return 1; awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
first_frame() { timed ffmpeg -v error -i "$1" -map 0:v:0 -frames:v 1 -f null -; }

mount_with() {  # mount_with on|off
  "$build/mount/vod-mount" "rdma://$addr:7490" "$mnt" --page-cache "$1" --log-file "$work/mount.log"
}
for setting in on off; do
  mount_with "$setting"
  drop_caches
  s=$(timed dd if="$mnt/$movie" of=/dev/null bs=1M)
  cmp -s "$mnt/$movie" "$media/$movie" || { echo "the mounted copy of $movie differs" >&2; exit 1; }
  record mount_read_mbps "page_cache_$setting" "$(mbps "$s")"
  for _ in $(seq "$tries"); do drop_caches; first_frame "$mnt/$movie"; echo; done | median > "$work/ff"
  record mount_first_frame_s "page_cache_$setting" "$(cat "$work/ff")"
  fusermount3 -u "$mnt"
  sleep 1
done
record mount_read_mbps vod_client_get "$(mbps "$(timed "$build/client/vod-client" get "rdma://$addr:7490/$movie" -o /dev/null --quiet)")"
record mount_read_mbps vod_proxy "$(mbps "$(timed curl -sf -o /dev/null "http://127.0.0.1:8092/movies/$movie")")"
drop_caches
record mount_read_mbps nginx "$(mbps "$(timed curl -sf -o /dev/null "http://$addr:8091/$movie")")"
for _ in $(seq "$tries"); do first_frame "http://127.0.0.1:8092/movies/$movie"; echo; done | median > "$work/ff"
record mount_first_frame_s vod_proxy "$(cat "$work/ff")"
for _ in $(seq "$tries"); do drop_caches; first_frame "http://$addr:8091/$movie"; echo; done | median > "$work/ff"
record mount_first_frame_s nginx "$(cat "$work/ff")"
for _ in $(seq "$tries"); do drop_caches; first_frame "$media/$movie"; echo; done | median > "$work/ff"
record mount_first_frame_s local_file "$(cat "$work/ff")"
# GStreamer: the first decoded video frame through rdmasrc (rdma://, libvodclient's startup) and
# through souphttpsrc from nginx, from process start to exit.
gst_first_frame() { timed gst-launch-1.0 -q "$1" location="$2" ! decodebin ! video/x-raw ! fakesink num-buffers=1; }
export GST_PLUGIN_PATH=$build/client/gst GST_REGISTRY=$work/gst-registry.bin
gst-inspect-1.0 rdmasrc > /dev/null 2>&1 || true  # the registry, before the timed runs
for _ in $(seq "$tries"); do gst_first_frame rdmasrc "rdma://$addr:7490/$movie"; echo; done | median > "$work/ff"
record mount_first_frame_s gst_rdmasrc "$(cat "$work/ff")"
for _ in $(seq "$tries"); do drop_caches; gst_first_frame souphttpsrc "http://$addr:8091/$movie"; echo; done | median > "$work/ff"
record mount_first_frame_s gst_nginx "$(cat "$work/ff")"
