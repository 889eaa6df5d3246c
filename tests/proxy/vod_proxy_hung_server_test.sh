#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# vod-proxy with a hung vod-server (issue 30): sessions are opened and reopened off the proxy's event
# loop, so a server that stops answering never freezes the proxy's other HTTP clients. Natively,
# over UDP Write-Record (vod-server --no-rdma), the same opener as over RDMA:
#   - a download of movie A is under way (the server sends 16 Mbit/s at most, so Write-Record jobs
#     are always queued at the server and records in flight at the proxy); the server is SIGSTOPped; a request for movie B (a new
#     session, whose open now waits on the hung server) and one for live channel cam (a new channel
#     session, multicast, whose open reads the catalog from the hung server) are sent
#   - for 10 s, every 0.5 s, /, /catalog.json (the catalog last read, marked stale once the server
#     has not answered a read of it: X-Catalog-Stale and "stale": true) and /static/style.css each
#     answer within 1 s
#   - the page-answer times with the server up and with it hung are printed (PAGE_MS lines, for the
#     benchmark report)
#   - SIGCONT: movie B arrives byte-exact, and so does movie A (the server dropped A's jobs at their
#     deadlines while it was stopped: the proxy's timer on the session's next deadline asks again;
#     waiting only on the socket, it waited for ever)
#   - SIGTERM with a read waiting on the (again stopped) server: vod-proxy exits 0 (it aborted
#     destroying the connections that read held after the pool they cancel into)
# Before, the open ran on the event loop: with the server stopped and one movie request waiting on
# it, the proxy answered neither / nor /catalog.json within 5 s.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../free_port.sh"
build=${VOD_BUILD_DIR:?CTest sets VOD_BUILD_DIR}
work=$(mktemp -d)
pids=()
server_pid=
cleanup() {
  local rc=$?
  [[ -n $server_pid ]] && kill -CONT "$server_pid" 2>/dev/null
  kill "${pids[@]}" 2>/dev/null || true
  if [[ $rc -ne 0 ]]; then
    for log in "$work"/*.log; do [[ -f $log ]] && { echo "--- $log (last 15 lines)"; tail -n 15 "$log"; }; done
  fi
  rm -rf "$work"
}
trap cleanup EXIT
step() { echo "--- $*"; }
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

media=$work/media
mkdir -p "$media"
"$build/tests/rdma/make_pattern" $((24 * 1024 * 1024)) 1 "$media/a.bin"
"$build/tests/rdma/make_pattern" $((3 * 1024 * 1024 + 17)) 2 "$media/b.bin"
ffmpeg -v error -f lavfi -i "testsrc2=size=160x120:rate=25" -t 4 -c:v libx264 -preset ultrafast -g 25 -pix_fmt yuv420p -f mpegts "$work/cam.ts"
udp=$(free_port) http=$(free_port)
group=239.255.$((RANDOM % 200 + 1)).$((RANDOM % 200 + 1)):$(free_port)
"$build/server/vod-server" --no-rdma --udp-port "$udp" --udp-client-rate 16 --bind 127.0.0.1 --media-dir "$media" --live "cam=file:$work/cam.ts" \
  --live-multicast "$group" --live-multicast-interface 127.0.0.1 2> "$work/server.log" &
server_pid=$!
pids+=("$server_pid")
for _ in $(seq 300); do grep -q 'listening on' "$work/server.log" && break; sleep 0.1; done
"$build/proxy/vod-proxy" --server rdma://127.0.0.1 --transport udp --udp-port "$udp" --udp-group "$group" --udp-interface 127.0.0.1 \
  --listen "127.0.0.1:$http" --reconnect-for 30 \
  2> "$work/proxy.log" &
proxy_pid=$!
pids+=("$proxy_pid")
base=http://127.0.0.1:$http
for _ in $(seq 100); do curl -s -o /dev/null "$base/catalog.json" && break; sleep 0.1; done

# One page request, the same with the server up and hung: "CODE SECONDS", headers and body kept.
timed_get() { curl -s -D "$work/headers" -o "$work/page" -m 3 -w '%{http_code} %{time_total}' "$base$1"; }

step "movie A under way, the server stopped, movie B asked for"
curl -s -o "$work/a.out" "$base/movies/a.bin" &
a=$!
pids+=("$a")
sleep 1
kill -STOP "$server_pid"
curl -s -o "$work/b.out" "$base/movies/b.bin" &
b=$!
pids+=("$b")
curl -s -m 15 -o "$work/cam.out" -w '%{http_code}' "$base/live/cam" > "$work/cam.code" &
live=$!
pids+=("$live")
sleep 0.5

step "the proxy's other clients are answered while the server is hung"
slowest=0 stale=0 hung_ms=()
for i in $(seq 20); do
  for path in / /catalog.json /static/style.css; do
    t=$(timed_get "$path") || fail "$path: no answer within 3 s while the server is stopped ($t)"
    read -r code secs <<< "$t"
    [[ $code == 200 ]] || fail "$path answered $code while the server is stopped: $(head -c 300 "$work/page")"
    (( $(echo "$secs < 1" | bc) )) || fail "$path took $secs s while the server is stopped"
    (( $(echo "$secs > $slowest" | bc) )) && slowest=$secs
    hung_ms+=("$(echo "$secs * 1000" | bc)")
    if [[ $path == /catalog.json ]] && grep -q '"stale":true' "$work/page"; then
      grep -qi '^X-Catalog-Stale: the vod-server at' "$work/headers" || fail "a stale /catalog.json without its X-Catalog-Stale header"
      grep -q 'b.bin' "$work/page" || fail "the stale catalog lacks b.bin"
      stale=$((stale + 1))
    fi
  done
  sleep 0.5
done
kill -0 "$b" 2>/dev/null || fail "movie B's request ended while the server was stopped"
((stale > 0)) || fail "in 10 s of a hung server, /catalog.json was never marked stale"
pass "60 requests of /, /catalog.json and /static/style.css answered 200 within 1 s each (slowest ${slowest} s) over 10 s of a hung server, with a movie and a live channel opening; /catalog.json marked stale $stale times of 20"

step "the server resumes: both movies arrive byte-exact"
kill -CONT "$server_pid"
for pid in "$b" "$a"; do
  timeout 40 tail --pid="$pid" -f /dev/null || fail "a download was still running 40 s after the server resumed ($(stat -c %s "$work/a.out") bytes of a.bin, $(stat -c %s "$work/b.out" 2>/dev/null || echo 0) of b.bin)"
done
rc=0; wait "$b" || rc=$?
[[ $rc -eq 0 ]] && cmp "$media/b.bin" "$work/b.out" || fail "movie B after the server resumed: curl $rc, $(stat -c %s "$work/b.out" 2>/dev/null) bytes"
rc=0; wait "$a" || rc=$?
[[ $rc -eq 0 ]] && cmp "$media/a.bin" "$work/a.out" || fail "movie A across the stop: curl $rc, $(stat -c %s "$work/a.out" 2>/dev/null) bytes"
pass "b.bin and a.bin byte-exact after SIGCONT"

step "the catalog is fresh again, and the page times with the server up"
fresh=0
for _ in $(seq 40); do
  curl -s -o "$work/page" "$base/catalog.json"
  grep -q '"stale":true' "$work/page" || { fresh=1; break; }
  sleep 0.5
done
((fresh == 1)) || fail "/catalog.json still stale 20 s after the server resumed"
up_ms=()
for i in $(seq 12); do  # paced as the requests while it was hung were
  for path in / /catalog.json /static/style.css; do
    t=$(timed_get "$path") || fail "$path: no answer within 3 s with the server up ($t)"
    read -r code secs <<< "$t"
    [[ $code == 200 ]] || fail "$path answered $code with the server up"
    up_ms+=("$(echo "$secs * 1000" | bc)")
  done
  sleep 0.5
done
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { printf "%.2f\n", a[int((NR + 1) / 2)] }'; }
largest() { printf '%s\n' "$@" | sort -g | awk 'END { printf "%.2f\n", $1 }'; }
echo "PAGE_MS up_p50=$(median "${up_ms[@]}") up_max=$(largest "${up_ms[@]}") hung_p50=$(median "${hung_ms[@]}") hung_max=$(largest "${hung_ms[@]}") requests_up=${#up_ms[@]} requests_hung=${#hung_ms[@]}"
pass "fresh again; page p50 $(median "${up_ms[@]}") ms with the server up, $(median "${hung_ms[@]}") ms while it was hung"

step "the proxy stops cleanly on SIGTERM with reads waiting on a hung server"
kill -STOP "$server_pid"
curl -s -o /dev/null "$base/movies/a.bin" &
pids+=($!)
sleep 1
kill -TERM "$proxy_pid"
rc=0; timeout 10 tail --pid="$proxy_pid" -f /dev/null || fail "vod-proxy still running 10 s after SIGTERM"
wait "$proxy_pid" || rc=$?
[[ $rc -eq 0 ]] || fail "vod-proxy exited $rc on SIGTERM with reads waiting (before: abort in the destructors)"
pass "vod-proxy exited 0 on SIGTERM with a read waiting on the hung server"
