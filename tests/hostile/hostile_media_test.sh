#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Movie bytes are hostile (issue 29, item 1): files in the media directory whose bytes are an HLS
# playlist, a concat script or an SDP session name URLs and files. vod-server must open none of
# them, at start or on SIGHUP, must skip each with a log line saying why, and must keep serving the
# real movies beside them. A local HTTP listener stands for the URLs and logs every connection.
# Natively, with vod-server --no-rdma and the UDP transport (no RDMA needed for the probe).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../free_port.sh"
build=${VOD_BUILD_DIR:?CTest sets VOD_BUILD_DIR}
source "$(dirname "${BASH_SOURCE[0]}")/../test_media.sh"
media_src=$test_media
work=$(mktemp -d)
pids=()
cleanup() {
  local rc=$?
  kill "${pids[@]}" 2>/dev/null || true
  if [[ $rc -ne 0 && -f $work/server.log ]]; then echo "--- server log (last 30 lines)"; tail -n 30 "$work/server.log"; fi
  rm -rf "$work"
}
trap cleanup EXIT
step() { echo "--- $*"; }
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# The "URL": a TCP listener on loopback that records each connection (and answers nothing).
python3 - "$work/connections" "$work/listener.port" <<'PY' &
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
open(sys.argv[2], "w").write(str(s.getsockname()[1]))
while True:
    c, peer = s.accept()
    c.settimeout(0.5)
    try: first = c.recv(200)
    except OSError: first = b""
    with open(sys.argv[1], "a") as f: f.write(repr(first) + "\n")
    c.close()
PY
pids+=($!)
for _ in $(seq 50); do [[ -s $work/listener.port ]] && break; sleep 0.1; done
port=$(cat "$work/listener.port")
url=http://127.0.0.1:$port

media=$work/media
mkdir -p "$media"
cp "$media_src/test-480p-60s.ts" "$media/real.ts"
printf '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:4\n#EXTINF:4.0,\n%s/a.ts\n#EXTINF:4.0,\n%s/b.ts\n#EXT-X-ENDLIST\n' "$url" "$url" > "$media/movie.ts"
printf '#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=800000\n%s/variant.m3u8\n' "$url" > "$media/master.mp4"
printf "ffconcat version 1.0\nfile '%s/c.ts'\nfile '/etc/passwd'\n" "$url" > "$media/concat.mkv"

udp=$(free_port)
"$build/server/vod-server" --no-rdma --udp-port "$udp" --bind 127.0.0.1 --media-dir "$media" 2> "$work/server.log" &
server_pid=$!
pids+=("$server_pid")
for _ in $(seq 300); do grep -q 'listening on' "$work/server.log" && break; sleep 0.1; done
grep -q 'listening on' "$work/server.log" || fail "vod-server did not start"
C=(--transport udp --udp-port "$udp")

step "start: the three files that name URLs are skipped, saying why, and nothing is opened"
for f in movie.ts master.mp4 concat.mkv; do
  grep -q "skipping $media/$f: .*names other files or URLs" "$work/server.log" || fail "no log line saying why $f was skipped"
done
sleep 0.5
[[ ! -s $work/connections ]] || fail "vod-server's probe connected to the URL a movie named: $(cat "$work/connections")"
"$build/client/vod-client" list rdma://127.0.0.1 "${C[@]}" > "$work/list"
grep -q '^real.ts ' "$work/list" || fail "the real movie is not listed"
! grep -qE '^(movie.ts|master.mp4|concat.mkv) ' "$work/list" || fail "a playlist is in the catalog: $(cat "$work/list")"
"$build/client/vod-client" get rdma://127.0.0.1/real.ts -o "$work/real.ts" -q "${C[@]}"
cmp "$media/real.ts" "$work/real.ts" || fail "the real movie is not byte-exact"
pass "3 hostile files skipped with reasons; no connection to $url; the real movie listed and byte-exact"

step "SIGHUP: a new playlist is skipped too"
printf '#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\n%s/late.ts\n#EXT-X-ENDLIST\n' "$url" > "$media/late.mp4"
kill -HUP "$server_pid"
for _ in $(seq 100); do grep -q 'generation 2:' "$work/server.log" && break; sleep 0.1; done
grep -q "skipping $media/late.mp4: .*names other files or URLs" "$work/server.log" || fail "no log line for late.mp4 after SIGHUP"
sleep 0.5
[[ ! -s $work/connections ]] || fail "the rescan connected to a URL a movie named: $(cat "$work/connections")"
kill -0 "$server_pid" || fail "the server died"
pass "after SIGHUP: late.mp4 skipped, still no connection, still serving"

step "a UDP server that stops answering mid-get: the client's error names the transport and what it waited for"
"$build/tests/rdma/make_pattern" $((8 * 1024 * 1024)) 7 "$media/stall.bin"
kill -HUP "$server_pid"
for _ in $(seq 100); do grep -q 'generation 3:' "$work/server.log" && break; sleep 0.1; done
"$build/client/vod-client" get rdma://127.0.0.1/stall.bin -o "$work/stall.bin" "${C[@]}" --udp-rate 2 --reconnect-for 2 2> "$work/stall.err" &
getter=$!
sleep 2
kill -STOP "$server_pid"
rc=0
timeout 40 tail --pid="$getter" -f /dev/null || fail "the get was still waiting 40 s after the server stopped"
wait "$getter" || rc=$?
kill -CONT "$server_pid"
[[ $rc -ne 0 ]] || fail "the get of a stalled server succeeded"
grep -q "no Write-Record range over UDP completed for 15 s" "$work/stall.err" || fail "the error does not name the transport: $(tail -n 3 "$work/stall.err")"
! grep -q "RDMA Read" "$work/stall.err" || fail "a UDP client's error speaks of RDMA Reads: $(grep "RDMA Read" "$work/stall.err")"
pass "$(grep -m 1 -o 'no Write-Record range over UDP completed[^;]*' "$work/stall.err")"
