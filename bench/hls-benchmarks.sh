#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# hls-benchmarks.sh MODE MEDIA_DIR MOVIE OUT_DIR: vod-proxy's HLS (docs/proxy.md, "HLS") in the session
# guest-benchmarks.sh runs in, against nginx serving the same movie packaged as HLS files by
# `ffmpeg -f hls` (the same 4 s target) in the same run:
#   1. the time to make a playlist: master.m3u8 of a movie not asked for before (the index read by
#      RDMA, the TS tables and the codec headers read once), then again (made from what is kept)
#   1b. a title's multivariant playlist (three TS renditions, copies of the movie) not asked for
#      before, then again, against a single movie's in the same run; and the proxy's bytes copied per
#      byte read for every segment of a TS movie and of a title's TS rendition (its /metrics)
#   2. CPU per GB served to V viewers fetching every segment of the playlist as fast as they can:
#      vod-proxy for the TS movie (byte ranges of the file by one-sided Reads), for the same movie as
#      Matroska (fMP4 remuxed on the fly: the first viewer's pass, then from the cache), and nginx
#      for ffmpeg's HLS files (sendfile); vod-server's CPU beside (the data path is one-sided)
#   3. a live channel (the movie replayed by the server) as LL-HLS: the time to make its playlist,
#      and the age of its newest playable part and segment when a player can first have them
#      (live-hls-age.py)
# Appends to OUT_DIR/results.tsv (section, key, value).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/nginx-peer.sh"
mode=$1 media=$(realpath "$2") movie=$3 out=$4
addr=${VOD_RDMA_ADDR:?run through tests/softroce/softroce-run}
build=${VOD_BUILD_DIR:-build}
results=$out/results.tsv
record() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$results"; echo "  $1 $2 = $3"; }
case $mode in
  full) copies=10 viewers=20 ;;
  quick) copies=5 viewers=10 ;;
  smoke) copies=2 viewers=2 ;;
  *) echo "mode must be full, quick or smoke" >&2; exit 2 ;;
esac
work=$(mktemp -d)
chmod o+x "$work"  # nginx's worker (www-data) reads the HLS files
pids=()
trap 'kill ${pids[*]} 2>/dev/null || true; rm -rf "$work"' EXIT
hz=$(getconf CLK_TCK)
ticks() { local t=0; for p in "$@"; do t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat"))); done; echo "$t"; }
median() { sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'; }

lib=$work/library
mkdir -p "$lib" "$work/nginx-hls"
for i in $(seq "$copies"); do cp "$media/$movie" "$lib/copy-$i.ts"; done
ffmpeg -v error -i "$media/$movie" -c copy "$lib/movie.mkv"
# Titles (docs/server.md, "Titles"): folders of three renditions each, copies of the movie (aligned
# by construction), for the multivariant playlist's time against a single movie's.
for i in $(seq "$copies"); do
  mkdir -p "$lib/Title-$i"
  for label in hi mid lo; do cp "$media/$movie" "$lib/Title-$i/Title-$i - $label.ts"; done
done
ffmpeg -v error -i "$media/$movie" -c copy -f hls -hls_time 4 -hls_playlist_type vod -hls_segment_filename "$work/nginx-hls/seg-%d.ts" \
  "$work/nginx-hls/index.m3u8"
chmod -R o+rX "$work/nginx-hls"
record hls movie "$movie"
record hls viewers "$viewers"

port=7650 http=8650
"$build/server/vod-server" --media-dir "$lib" --bind "$addr" --port "$port" 2> "$work/server.log" &
server=$!; pids+=("$server")
for _ in $(seq 600); do grep -q 'listening on' "$work/server.log" && break; sleep 0.1; done
"$build/proxy/vod-proxy" --server "rdma://$addr:$port" --listen "127.0.0.1:$http" 2> "$work/proxy.log" &
proxy=$!; pids+=("$proxy")
base=http://127.0.0.1:$http
for _ in $(seq 300); do curl -s -o /dev/null "$base/" && break; sleep 0.1; done
start_nginx_peer "$work/nginx" 127.0.0.1 8651 "$work/nginx-hls"
pids+=("$nginx_master")
nginx_procs() { echo "$nginx_master $(pgrep -P "$nginx_master" | tr '\n' ' ')"; }

echo "== 13. HLS: the time to make a playlist ($copies movies not asked for before, then again)"
for i in $(seq "$copies"); do curl -s -o /dev/null -w '%{time_total}\n' "$base/hls/copy-$i.ts/master.m3u8"; done | median > "$work/cold"
for i in $(seq "$copies"); do curl -s -o /dev/null -w '%{time_total}\n' "$base/hls/copy-$i.ts/master.m3u8"; done | median > "$work/warm"
for i in $(seq "$copies"); do curl -s -o /dev/null -w '%{time_total}\n' "$base/hls/copy-$i.ts/index.m3u8"; done | median > "$work/media"
record hls_playlist_cold_ms ts "$(awk '{ printf "%.1f", $1 * 1000 }' "$work/cold")"
record hls_playlist_warm_ms ts "$(awk '{ printf "%.1f", $1 * 1000 }' "$work/warm")"
record hls_playlist_warm_ms ts_media "$(awk '{ printf "%.1f", $1 * 1000 }' "$work/media")"
record hls_playlist_cold_ms mkv "$(curl -s -o /dev/null -w '%{time_total}' "$base/hls/movie.mkv/master.m3u8" | awk '{ printf "%.1f", $1 * 1000 }')"

echo "== 13. HLS: a title's multivariant playlist ($copies titles of 3 renditions not asked for before, then again)"
for _ in $(seq 100); do curl -sf -o /dev/null "$base/hls/Title-$copies/master.m3u8" && break; sleep 0.1; done  # the server groups them
for i in $(seq "$copies"); do curl -s -o /dev/null -w '%{time_total}\n' "$base/hls/Title-$i/master.m3u8"; done | median > "$work/title-cold"
for round in 1 2 3; do
  for i in $(seq "$copies"); do curl -s -o /dev/null -w '%{time_total}\n' "$base/hls/Title-$i/master.m3u8"; done
done | median > "$work/title-warm"
for round in 1 2 3; do
  for i in $(seq "$copies"); do curl -s -o /dev/null -w '%{time_total}\n' "$base/hls/copy-$i.ts/master.m3u8"; done
done | median > "$work/warm3"
record hls_title_ms cold "$(awk '{ printf "%.1f", $1 * 1000 }' "$work/title-cold")"
record hls_title_ms warm "$(awk '{ printf "%.1f", $1 * 1000 }' "$work/title-warm")"
record hls_title_ms single_warm "$(awk '{ printf "%.1f", $1 * 1000 }' "$work/warm3")"

# curl_config PLAYLIST_URL PLAYLIST_FILE > CONFIG: every segment of a media playlist, in one curl
# (one kept-alive connection), to /dev/null; its URIs resolved against the playlist's URL, with
# byte ranges for EXT-X-BYTERANGE.
curl_config() {
  local origin dir
  origin=$(sed -E 's|^(https?://[^/]+).*|\1|' <<< "$1") dir=${1%/*}
  awk -v origin="$origin" -v dir="$dir" '
    /^#EXT-X-BYTERANGE:/ { split(substr($0, 18), a, "@"); range = a[2] "-" (a[2] + a[1] - 1); next }
    /^#/ || $0 == "" { next }
    { if (n++) print "next"  # options hold per URL group in curl: each group has its own
      print "url = \"" (substr($0, 1, 1) == "/" ? origin $0 : dir "/" $0) "\""; if (range != "") print "range = \"" range "\""
      print "output = \"/dev/null\""; print "silent"; print "write-out = \"%{size_download}\\n\""; range = "" }' "$2"
}
# viewers NAME PLAYLIST_URL PROCS...: V viewers fetch every segment at once; the CPU of PROCS and of
# vod-server per GB they got.
viewers() {
  local name=$1 url=$2; shift 2
  curl -sf -o "$work/$name.m3u8" "$url" || { echo "no playlist at $url" >&2; exit 1; }
  curl_config "$url" "$work/$name.m3u8" > "$work/$name.cfg"
  local t0 s0 w0 t1 s1 w1 bytes gets=()
  t0=$(ticks "$@"); s0=$(ticks "$server"); w0=$(date +%s.%N)
  for v in $(seq "$viewers"); do curl -K "$work/$name.cfg" > "$work/$name.$v.sizes" & gets+=($!); done
  wait "${gets[@]}"
  t1=$(ticks "$@"); s1=$(ticks "$server"); w1=$(date +%s.%N)
  bytes=$(cat "$work/$name".*.sizes | awk '{ s += $1 } END { print s + 0 }')
  [[ $bytes -gt 0 ]] || { echo "the $name viewers got nothing" >&2; exit 1; }
  record hls_gbytes "$name" "$(echo "scale=3; $bytes / 1000000000" | bc)"
  record hls_cpu_s_per_gb "$name" "$(echo "scale=3; ($t1 - $t0) / $hz / ($bytes / 1000000000)" | bc)"
  record hls_server_cpu_s "$name" "$(echo "scale=3; ($s1 - $s0) / $hz" | bc)"
  record hls_mbytes_per_s "$name" "$(echo "scale=1; $bytes / ($w1 - $w0) / 1000000" | bc)"
}
# copied NAME PLAYLIST_URL: one viewer fetches every segment; the proxy's bytes copied out of its
# read ring ÷ bytes it read from vod-server meanwhile (its /metrics).
copied() {
  local name=$1 url=$2 r0 c0
  curl -sf -o "$work/$name.m3u8" "$url" || { echo "no playlist at $url" >&2; exit 1; }
  curl_config "$url" "$work/$name.m3u8" > "$work/$name.cfg"
  metric() { curl -sf "$base/metrics" | awk -v k="$1" '$1 == k { printf "%d", $2 }'; }
  r0=$(metric vod_proxy_rdma_read_bytes_total) c0=$(metric vod_proxy_copied_bytes_total)
  curl -K "$work/$name.cfg" > /dev/null
  record hls_copied_ratio "$name" "$(echo "scale=4; ($(metric vod_proxy_copied_bytes_total) - $c0) / ($(metric vod_proxy_rdma_read_bytes_total) - $r0)" | bc)"
}
echo "== 13. HLS: bytes copied per byte read, a TS movie's segments and a TS title rendition's"
copied ts_movie "$base/hls/copy-2.ts/index.m3u8"
copied ts_title "$base/hls/Title-1/Title-1%20-%20hi.ts/index.m3u8"  # a TS rendition's own playlist

echo "== 13. HLS: CPU per GB, $viewers viewers fetching every segment as fast as they can"
viewers ts "$base/hls/copy-1.ts/index.m3u8" "$proxy"
viewers mkv_cold "$base/hls/movie.mkv/index.m3u8" "$proxy"
viewers mkv_cached "$base/hls/movie.mkv/index.m3u8" "$proxy"
viewers nginx "http://127.0.0.1:8651/index.m3u8" $(nginx_procs)

echo "== 13. HLS: a live channel as LL-HLS, the age of the newest playable part and segment"
# A server and a proxy of their own, after the VoD figures: the channel's replay would load the
# guest's CPU under them.
kill "$proxy" "$server" 2>/dev/null || true
wait "$proxy" "$server" 2>/dev/null || true
"$build/server/vod-server" --bind "$addr" --port "$((port + 1))" --live "cam=file:$lib/copy-1.ts" 2> "$work/live-server.log" &
pids+=($!)
for _ in $(seq 600); do grep -q 'listening on' "$work/live-server.log" && break; sleep 0.1; done
"$build/proxy/vod-proxy" --server "rdma://$addr:$((port + 1))" --listen "127.0.0.1:$((http + 2))" 2> "$work/live-proxy.log" &
pids+=($!)
base=http://127.0.0.1:$((http + 2))
for _ in $(seq 300); do curl -s -o /dev/null "$base/" && break; sleep 0.1; done
case $mode in full) live_seconds=60 ;; quick) live_seconds=20 ;; *) live_seconds=8 ;; esac
"$(dirname "${BASH_SOURCE[0]}")/live-hls-age.py" "$base/hls/live/cam/index.m3u8" "$live_seconds" > "$work/age" || { cat "$work/age"; exit 1; }
cat "$work/age"
record hls_live_playlist_ms first "$(awk '$1 == "playlist_first" { print $3 }' "$work/age")"
record hls_live_playlist_ms warm "$(awk '$1 == "playlist" { print $3 }' "$work/age")"
for kind in parts segments; do
  read -r _ n p50 p99 < <(grep "^$kind " "$work/age")
  [[ $n -gt 0 ]] || { echo "no $kind came in $live_seconds s of the live channel" >&2; exit 1; }
  record hls_live_age_ms "${kind}_count" "$n"
  record hls_live_age_ms "${kind}_p50" "$p50"
  record hls_live_age_ms "${kind}_p99" "$p99"
done
