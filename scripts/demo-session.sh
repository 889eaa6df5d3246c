#!/usr/bin/env bash
# The part of the demo that needs RDMA (scripts/demo.sh runs it through softroce-run).
set -euo pipefail
movie=$1
peer=build/tests/rdma/smoke_peer
addr=${VOD_RDMA_ADDR:?run through tests/softroce/softroce-run}
work=$(mktemp -d)
trap 'kill $server_pid 2>/dev/null || true; rm -rf "$work"' EXIT

echo "RDMA device:"; ibv_devinfo | grep -E 'hca_id|transport|active_mtu|state' | sed 's/^/  /'
"$peer" serve --file "$movie" --bind "$addr" --port 0 > "$work/serve.out" 2> "$work/serve.err" &
server_pid=$!
for _ in $(seq 300); do grep -q READY "$work/serve.out" && break; sleep 0.1; done
port=$(sed -n 's/^READY port=//p' "$work/serve.out")
[[ -n $port ]] || { cat "$work/serve.err"; echo "server did not start"; exit 1; }
echo "server: listening on $addr:$port, serving $(basename "$movie") ($(stat -c %s "$movie") bytes) from registered memory"
server_cpu_before=$(awk '{ print $14 + $15 }' "/proc/$server_pid/stat")

"$peer" fetch --host "$addr" --port "$port" --name "$(basename "$movie")" --out "$work/fetched.ts" --chunk 262144 --depth 16
server_cpu_after=$(awk '{ print $14 + $15 }' "/proc/$server_pid/stat")
cmp "$movie" "$work/fetched.ts"
echo "client: the fetched copy is byte-identical to the original"
echo "server: CPU ticks spent while the movie was read: $((server_cpu_after - server_cpu_before)) (one-sided Reads need no server CPU)"
frames=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$work/fetched.ts" | head -n 1)
ffmpeg -v error -i "$work/fetched.ts" -f null - && echo "player: decoded the fetched movie with ffmpeg: $frames video frames"
kill -TERM "$server_pid"; wait "$server_pid" || true
echo "demo finished"
