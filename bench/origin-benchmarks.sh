#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# origin-benchmarks.sh RUNS OUT_DIR MOVIE: an edge filling from an HTTP origin (vod-server --origin,
# docs/operations.md) against nginx's own edge cache, natively on loopback, in the same run.
#   origin   nginx serving a folder with MOVIE and RUNS cold copies of it (autoindex_format json),
#            its access log counting what it sent
#   edge     vod-server --no-rdma --origin (1 MiB segments), read by vod-client over Write-Record
#   peer     nginx with proxy_cache, `slice 1m` and proxy_cache_lock, read by curl
# Figures, in OUT_DIR/origin/figures.txt:
#   bytes_ratio EDGE PEER: bytes the origin sent / bytes of the movie, with 8 concurrent viewers of
#     it from an empty cache
#   first_byte_ms EDGE_P50 PEER_P50 RUNS: a cold movie's first byte (a new process asking for byte 0,
#     to the byte written), the median of RUNS cold copies each
set -euo pipefail
runs=$1 out=$2/origin movie=$(realpath "$3")
build=${VOD_BUILD_DIR:-build}
here=$(dirname "$0")
source "$here/../tests/free_port.sh"
mkdir -p "$out"
work=$(mktemp -d)
chmod 755 "$work"  # nginx's workers (nobody) read below it
pids=()
trap 'for p in "${pids[@]}"; do kill -KILL $(pgrep -P "$p") "$p" 2> /dev/null || true; done; rm -rf "$work"' EXIT
mkdir -p "$work/origin" "$work/peer-cache" "$work/nginx"
ln "$movie" "$work/origin/movie" 2> /dev/null || cp "$movie" "$work/origin/movie"
for i in $(seq "$runs"); do cp "$movie" "$work/origin/cold-$i"; done
size=$(stat -c %s "$movie")
origin_port=$(free_port) peer_port=$(free_port) udp_port=$(free_port) rdma_port=$(free_port)
cat > "$work/nginx/nginx.conf" << CONF
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
  log_format sent '\$uri \$body_bytes_sent';
  types { video/mp2t ts; video/mp4 mp4; }
  proxy_cache_path $work/peer-cache levels=1:2 keys_zone=edge:10m max_size=4g;
  server {
    listen 127.0.0.1:$origin_port;
    access_log $work/origin.log sent;
    root $work/origin;
    location / { autoindex on; autoindex_format json; }
  }
  server {  # the peer: nginx's edge cache, as its documentation pairs slice with proxy_cache_lock
    listen 127.0.0.1:$peer_port;
    access_log off;
    location / {
      slice 1m;
      proxy_cache edge;
      proxy_cache_key \$uri\$slice_range;
      proxy_set_header Range \$slice_range;
      proxy_cache_valid 200 206 1h;
      proxy_cache_lock on;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_pass http://127.0.0.1:$origin_port;
    }
  }
}
CONF
nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" &
pids+=($!)
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$origin_port/" > /dev/null && break; sleep 0.1; done
"$build/server/vod-server" --no-rdma --bind 127.0.0.1 --port "$rdma_port" --udp-port "$udp_port" --origin "http://127.0.0.1:$origin_port/" \
  --cache-size 1G --segment-size 1M --state-dir "$work/state" --origin-rescan 0 2> "$work/edge.log" &
pids+=($!)
for _ in $(seq 300); do grep -q 'listening on' "$work/edge.log" && break; sleep 0.1; done
grep -q 'listening on' "$work/edge.log" || { echo "origin-benchmarks: the edge did not start" >&2; tail "$work/edge.log" >&2; exit 1; }
vod() { "$build/client/vod-client" get "rdma://127.0.0.1:$rdma_port/$1" --transport udp --udp-port "$udp_port" --quiet "${@:2}"; }
sent() { awk -v u="/$1" '$1 == u { s += $2 } END { print s + 0 }' "$work/origin.log"; }
now_ns() { date +%s%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# 8 concurrent viewers from an empty cache, one movie each side (the edge listed it: its probe's
# header ranges are counted apart, before the viewers start).
before=$(sent movie)
for i in $(seq 8); do vod movie -o "$work/edge-$i" & done
wait_all() { local rc=0; for j in $(jobs -p); do [[ " ${pids[*]} " == *" $j "* ]] || wait "$j" || rc=1; done; return $rc; }
wait_all || { echo "origin-benchmarks: an edge viewer failed" >&2; exit 1; }
for i in $(seq 8); do cmp -s "$work/edge-$i" "$movie" || { echo "origin-benchmarks: edge viewer $i differs" >&2; exit 1; }; done
edge_bytes=$(($(sent movie) - before))
before=$(sent movie)
for i in $(seq 8); do curl -sf -o "$work/peer-$i" "http://127.0.0.1:$peer_port/movie" & done
wait_all || { echo "origin-benchmarks: a peer viewer failed" >&2; exit 1; }
for i in $(seq 8); do cmp -s "$work/peer-$i" "$movie" || { echo "origin-benchmarks: peer viewer $i differs" >&2; exit 1; }; done
peer_bytes=$(($(sent movie) - before))
ratio() { awk -v a="$1" -v b="$size" 'BEGIN { printf "%.3f", a / b }'; }
echo "bytes_ratio $(ratio "$edge_bytes") $(ratio "$peer_bytes")" | tee "$out/figures.txt"

# A cold movie's first byte: a new client process each time, the same on both sides.
edge_ms=() peer_ms=()
for i in $(seq "$runs"); do
  t=$(now_ns)
  vod "cold-$i" -r 0-0 -o "$work/first.edge" > /dev/null
  edge_ms+=($((($(now_ns) - t) / 1000)))
  t=$(now_ns)
  curl -sf -r 0-0 -o "$work/first.peer" "http://127.0.0.1:$peer_port/cold-$i"
  peer_ms+=($((($(now_ns) - t) / 1000)))
  cmp -s "$work/first.edge" "$work/first.peer" || { echo "origin-benchmarks: the first bytes differ" >&2; exit 1; }
done
e=$(printf '%s\n' "${edge_ms[@]}" | median) p=$(printf '%s\n' "${peer_ms[@]}" | median)
echo "first_byte_ms $(awk -v a="$e" -v b="$p" 'BEGIN { printf "%.2f %.2f", a / 1000, b / 1000 }') $runs" | tee -a "$out/figures.txt"
echo "first_byte_us_edge ${edge_ms[*]}" >> "$out/figures.txt"
echo "first_byte_us_peer ${peer_ms[*]}" >> "$out/figures.txt"
