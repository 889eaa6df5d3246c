#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Prometheus metrics of vod-server and vod-proxy, natively over UDP Write-Record (no RDMA device
# here; the RDMA families are tested in the guest by tests/rdma/vod_metrics_test.sh): off unless
# asked, 127.0.0.1 by default, promtool accepts both outputs, values move with the traffic, other
# paths and methods are refused, and bad settings fail clearly at start.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../free_port.sh"
build=${VOD_BUILD_DIR:?CTest sets VOD_BUILD_DIR}
command -v promtool > /dev/null || { echo "SKIP: no promtool (Debian's prometheus package; scripts/install-deps.sh installs it)"; exit 77; }
work=$(mktemp -d)
pids=()
trap 'kill ${pids[*]} 2>/dev/null || true; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.log; do echo "--- $f"; tail -n 8 "$f"; done; exit 1; }
pass() { echo "PASS: $*"; }
wait_log() { for _ in $(seq 300); do grep -q -- "$2" "$1" && return 0; sleep 0.1; done; fail "'$2' never appeared in $1"; }
value() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }  # value FILE SERIES
scrape() { curl -sf "http://127.0.0.1:$1/metrics" -o "$2" || fail "GET /metrics on port $1 failed"; }
lint() { promtool check metrics < "$1" > "$work/promtool.out" 2>&1 || { cat "$work/promtool.out"; fail "promtool rejects $1"; }; }

mkdir "$work/media"
head -c 3000000 /dev/urandom > "$work/media/clip.bin"
base=$(free_port)
udp=$base metrics=$((base + 1)) http=$((base + 2))

# Off by default: no TCP listener at all.
"$build/server/vod-server" --no-rdma --udp-port "$udp" --bind 127.0.0.1 --media-dir "$work/media" 2> "$work/off.log" &
off=$!
pids+=($off)
wait_log "$work/off.log" 'listening on'
grep -q "pid=$off," <<< "$(ss -ltnp 2>/dev/null)" && fail "vod-server listens on TCP without --metrics-port"
kill "$off"; wait "$off" || true
pass "without --metrics-port vod-server opens no TCP port"

"$build/server/vod-server" --no-rdma --udp-port "$udp" --bind 127.0.0.1 --media-dir "$work/media" --metrics-port "$metrics" 2> "$work/server.log" &
pids+=($!)
wait_log "$work/server.log" 'listening on'
grep -q "Prometheus metrics on http://127.0.0.1:$metrics/metrics" "$work/server.log" || fail "no log line for the metrics endpoint"
grep -q "127.0.0.1:$metrics " <<< "$(ss -ltn)" || fail "/metrics does not listen on 127.0.0.1:$metrics by default"
curl -sf -D "$work/headers" "http://127.0.0.1:$metrics/metrics" -o "$work/s1.txt" || fail "GET /metrics failed"
grep -qi '^content-type: text/plain; version=0.0.4' "$work/headers" || fail "wrong Content-Type: $(grep -i content-type "$work/headers")"
lint "$work/s1.txt"
[[ $(value "$work/s1.txt" vod_server_catalog_generation) == 1 ]] || fail "catalog generation is not 1"
[[ $(value "$work/s1.txt" vod_server_movies) == 1 ]] || fail "movies is not 1"
[[ $(value "$work/s1.txt" vod_server_udp_requests_total) == 0 ]] || fail "UDP requests before any client"
pass "vod-server /metrics: 127.0.0.1 by default, promtool clean, generation 1, 1 movie"

"$build/client/vod-client" get "rdma://127.0.0.1/clip.bin" -o "$work/clip.out" --transport udp --udp-port "$udp" --quiet 2> "$work/client.log" ||
  fail "vod-client get over UDP failed"
cmp -s "$work/media/clip.bin" "$work/clip.out" || fail "the copy differs"
scrape "$metrics" "$work/s2.txt"
lint "$work/s2.txt"
requests=$(value "$work/s2.txt" vod_server_udp_requests_total)
bytes=$(value "$work/s2.txt" vod_server_udp_bytes_total)
[[ $requests -gt 0 ]] || fail "vod_server_udp_requests_total did not move: $requests"
[[ $bytes -ge 3000000 ]] || fail "vod_server_udp_bytes_total is $bytes after a 3000000-byte movie"
head -c 1000 /dev/urandom > "$work/media/new.bin"
kill -HUP "${pids[-1]}"
wait_log "$work/server.log" 'generation 2'
scrape "$metrics" "$work/s3.txt"
[[ $(value "$work/s3.txt" vod_server_catalog_generation) == 2 && $(value "$work/s3.txt" vod_server_movies) == 2 ]] ||
  fail "after SIGHUP: generation $(value "$work/s3.txt" vod_server_catalog_generation), movies $(value "$work/s3.txt" vod_server_movies)"
pass "vod-server /metrics moves: $requests UDP requests and $bytes bytes for one get; a rescan shows generation 2 and 2 movies"

code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$metrics/")
[[ $code == 404 ]] || fail "GET / answered $code, not 404"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$metrics/metrics")
[[ $code == 405 ]] || fail "POST /metrics answered $code, not 405"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "X-Big: $(head -c 8000 /dev/zero | tr '\0' a)" "http://127.0.0.1:$metrics/metrics" || true)
[[ $code != 200 ]] || fail "a request with 8000 bytes of headers was answered 200"
curl -s "http://127.0.0.1:$metrics/metrics" -o /dev/null || fail "the endpoint died after an oversized request"
pass "other paths 404, other methods 405, and the endpoint survives an oversized request"

# A flood of idle connections: at most 16 are held, the rest closed at once; scraping works after.
server_pid=${pids[-1]}
before=$(find /proc/"$server_pid"/fd -lname 'socket:*' | wc -l)
fds=()
for _ in $(seq 40); do exec {fd}<> "/dev/tcp/127.0.0.1/$metrics"; fds+=("$fd"); done
sleep 1
held=$(( $(find /proc/"$server_pid"/fd -lname 'socket:*' | wc -l) - before ))
for fd in "${fds[@]}"; do exec {fd}>&-; done
[[ $held -le 16 ]] || fail "40 idle connections to /metrics hold $held sockets in vod-server (at most 16 expected)"
sleep 0.5
scrape "$metrics" "$work/s4.txt"
pass "40 idle connections: vod-server holds $held of them, and answers again once they leave"

"$build/proxy/vod-proxy" --server rdma://127.0.0.1 --transport udp --udp-port "$udp" --listen "127.0.0.1:$http" 2> "$work/proxy.log" &
pids+=($!)
wait_log "$work/proxy.log" 'listening on'
curl -sf "http://127.0.0.1:$http/movies/clip.bin" -o "$work/proxy.out" || fail "GET a movie through vod-proxy failed"
cmp -s "$work/media/clip.bin" "$work/proxy.out" || fail "the proxy's copy differs"
curl -s -o /dev/null "http://127.0.0.1:$http/movies/nothing-here.bin"
scrape "$http" "$work/p1.txt"
lint "$work/p1.txt"
[[ $(value "$work/p1.txt" 'vod_proxy_http_requests_total{status="200"}') -ge 1 ]] || fail "no 200 counted"
[[ $(value "$work/p1.txt" 'vod_proxy_http_requests_total{status="404"}') == 1 ]] || fail "the 404 is not counted"
[[ $(value "$work/p1.txt" vod_proxy_http_response_bytes_total) -ge 3000000 ]] || fail "response bytes $(value "$work/p1.txt" vod_proxy_http_response_bytes_total)"
[[ $(value "$work/p1.txt" vod_proxy_rdma_reads_total) -gt 0 ]] || fail "no reads counted"
[[ $(value "$work/p1.txt" vod_proxy_rdma_sessions) == 1 ]] || fail "sessions $(value "$work/p1.txt" vod_proxy_rdma_sessions), not 1"
[[ $(value "$work/p1.txt" vod_proxy_server_up) == 1 ]] || fail "server_up is not 1"
pass "vod-proxy /metrics: promtool clean; a 200 and a 404 counted, $(value "$work/p1.txt" vod_proxy_http_response_bytes_total) bytes, $(value "$work/p1.txt" vod_proxy_rdma_reads_total) reads, 1 session"

"$build/server/vod-server" --no-rdma --udp-port $((udp + 10)) --media-dir "$work/media" --metrics-port "$metrics" 2> "$work/busy.log" &&
  fail "a second server on a busy metrics port started"
grep -q "metrics: cannot listen on 127.0.0.1:$metrics" "$work/busy.log" || fail "busy port: unclear error: $(tail -n 1 "$work/busy.log")"
"$build/server/vod-server" --no-rdma --udp-port $((udp + 10)) --media-dir "$work/media" --metrics-port 1 --metrics-bind nowhere 2> "$work/bad.log" &&
  fail "--metrics-bind nowhere was accepted"
grep -q -- "--metrics-bind nowhere: not an IP address" "$work/bad.log" || fail "bad bind: unclear error: $(tail -n 1 "$work/bad.log")"
pass "a busy metrics port and a bad --metrics-bind fail at start, saying which"
