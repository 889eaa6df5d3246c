#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# auth-benchmarks.sh MODE MEDIA_DIR MOVIE OUT_DIR: what access control costs (docs/security.md), in
# the session guest-benchmarks.sh runs in. Three vod-servers on the same media, one after another:
#   open      no authorization
#   windows   --auth-secret: a token checked per connect, a memory window per connection bound to its QP
#   shared    --auth-secret --no-memory-windows: the token, and the shared regions' rkeys
#   cache, cache_windows   a segment cache of 16 MiB (1 MiB segments), without and with tokens (a
#             window bound per cache slot a connection asks for)
# For each: connects per second (vod-client bench opens N sessions one after another: rdma_cm
# connect, catalog and index reads) and the startup latency to the first chunk (p50), the server's
# CPU while its viewers stream (the data path: nothing to do in every mode), and with windows the
# server's own figure for binding them (from connect request to accept, median).
# Appends to OUT_DIR/results.tsv (section, key, value).
set -euo pipefail
mode=$1 media=$(realpath "$2") movie=$3 out=$4
addr=${VOD_RDMA_ADDR:?run through tests/softroce/softroce-run}
build=${VOD_BUILD_DIR:-build}
results=$out/results.tsv
record() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$results"; echo "  $1 $2 = $3"; }
case $mode in
  full) clients=50 secs=10 ;;
  quick) clients=20 secs=5 ;;
  smoke) clients=4 secs=2 ;;
  *) echo "mode must be full, quick or smoke" >&2; exit 2 ;;
esac
work=$(mktemp -d)
server=
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
hz=$(getconf CLK_TCK)
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
printf '1 %s\n' "$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" > "$work/keys"
chmod 600 "$work/keys"
token=$("$build/server/vod-token" --secret "$work/keys" --all --ttl 1h)
record auth clients "$clients"

echo "== 10. access control: connects per second and startup with and without tokens and windows ($clients viewers)"
port=7495
# With a segment cache smaller than the movie (its slots are read through a window per slot a
# connection asked for, bound as it asks: docs/segment-cache.md), the same pair again.
for config in open windows shared cache cache_windows; do
  args=() query=
  case $config in
    windows) args=(--auth-secret "$work/keys") query="?token=$token" ;;
    shared) args=(--auth-secret "$work/keys" --no-memory-windows) query="?token=$token" ;;
    cache) args=(--cache-size 16M --segment-size 1M --state-dir "") ;;
    cache_windows) args=(--cache-size 16M --segment-size 1M --state-dir "" --auth-secret "$work/keys") query="?token=$token" ;;
  esac
  port=$((port + 1))
  "$build/server/vod-server" --media-dir "$media" --bind "$addr" --port "$port" "${args[@]}" 2> "$work/$config.log" &
  server=$!
  for _ in $(seq 600); do grep -q 'listening on' "$work/$config.log" && break; sleep 0.1; done
  "$build/client/vod-client" bench "rdma://$addr:$port/$movie$query" --clients "$clients" --duration "$secs" --pattern sequential \
    --rate 2 --chunk-kib 256 --depth 8 > "$work/$config.out" 2> "$work/$config.err" &
  bench=$!
  for _ in $(seq 3000); do grep -q 'viewers connected' "$work/$config.err" && break; kill -0 "$bench" 2>/dev/null || break; sleep 0.1; done
  t0=$(ticks "$server")
  wait "$bench"
  t1=$(ticks "$server")
  connect_s=$(sed -n 's/.*viewers connected in \([0-9.]*\) s.*/\1/p' "$work/$config.err")
  record auth_connects_per_s "$config" "$(awk -v n="$clients" -v s="$connect_s" 'BEGIN { printf "%.1f", n / s }')"
  record auth_startup_p50_us "$config" "$(sed -n 's/.* startup_p50_us=\([0-9]*\).*/\1/p' "$work/$config.out")"
  record auth_streaming_cpu_s "$config" "$(echo "scale=3; ($t1 - $t0) / $hz" | bc)"
  if [[ $config == windows ]]; then
    record auth_window_bind_p50_us windows "$(sed -n 's/.* memory windows bound in \([0-9]*\) us.*/\1/p' "$work/$config.log" | sort -n |
      awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] + 0 }')"
  fi
  kill "$server"; wait "$server" 2>/dev/null || true
  server=
done
