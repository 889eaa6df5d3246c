#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# VoD core: what the server refuses, each with its reason, and the client's errors and exit codes;
# and the server's Prometheus metrics counting them (connections by kind and movie, rejects by code,
# registered bytes, the RDMA device's own counters), checked by promtool.
source "$(dirname "$0")/vod_test_lib.sh"
media=$work/media
mkdir -p "$media"
"$build/tests/rdma/make_pattern" 100000 1 "$media/a.bin"
"$build/tests/rdma/make_pattern" 200000 2 "$media/b.bin"
cp "$test_media/test-480p-60s.ts" "$media/"
metrics_port=$(free_port)
start_server "$media" --max-clients 2 --metrics-port "$metrics_port"
scrape() { curl -sS -f --max-time 10 "http://127.0.0.1:$metrics_port/metrics" -o "$1" 2> "$work/curl.err" || fail "GET /metrics failed: $(cat "$work/curl.err")"; }
series() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }  # series FILE NAME{LABELS}
peer=$build/tests/rdma/smoke_peer

step "unknown movie: reject code 1, and the client lists what exists"
expect "unknown movie (client)" 3 "no movie 'nope.mp4' on $addr:$port; it has: a.bin, b.bin, test-480p-60s.ts" "$client_bin" get "$(uri nope.mp4)" -o "$work/x"
grep -q "reject .*: unknown movie: no such movie; 3 movies: a.bin, b.bin, test-480p-60s.ts" "$server_log" || fail "server did not log the reject"

step "malformed requests, sent raw"
expect "bad magic" 3 "reject code 3 (malformed request): connect request: magic 0xdeadbeef" \
  "$peer" raw --host "$addr" --port "$port" --hex "deadbeef01010038"
expect "unsupported version" 3 "reject code 2 (unsupported version)" \
  "$peer" raw --host "$addr" --port "$port" --hex "52564f44ff010038"
expect "empty private data" 3 "reject code 3 (malformed request)" "$peer" raw --host "$addr" --port "$port" --hex ""
# A live request (kind 3) by name hash: valid, but this server has no such live channel.
expect "live request" 3 "reject code 1 (unknown movie): no such live channel; 0 live channels" \
  "$peer" raw --host "$addr" --port "$port" --hex "52564f440101003803010000000000000000000000000001$(printf '00%.0s' $(seq 32))"
expect "live request for a movie" 1 "'a.bin' is a movie, not a live channel" "$client_bin" play "$(uri live/a.bin)" --duration 1
expect "unknown live channel (client)" 3 "no such live channel" "$client_bin" play "$(uri live/nope)" --duration 1
# A catalog-index selector for generation 9, which the server never had.
expect "stale catalog" 3 "reject code 7 (stale catalog)" \
  "$peer" raw --host "$addr" --port "$port" --hex "52564f440101003801020000000000090000000000000000$(printf '00%.0s' $(seq 32))"

step "server full: two clients connected, a third is refused"
# 200 kB at 0.04 Mbit/s: 40 s of play, so they are still connected when /metrics is read below
# (at 0.2 Mbit/s they ended after 8 s, before a slow guest had refused the third).
"$client_bin" play "$(uri b.bin)" --rate 0.04 --burst 0 > /dev/null 2>&1 &
p1=$!
"$client_bin" play "$(uri b.bin)" --rate 0.04 --burst 0 > /dev/null 2>&1 &
p2=$!
cleanup_hooks+=("kill $p1 $p2 2>/dev/null")
for _ in $(seq 600); do [[ $(grep -c '^.*accept .*movie' "$server_log") -ge 2 ]] && break; sleep 0.1; done
expect "server full" 1 "rejected the connection: server full: 2 clients connected, the limit is 2" "$client_bin" get "$(uri a.bin)" -o "$work/x"
scrape "$work/m1.txt"
[[ $(series "$work/m1.txt" 'vod_server_connections{kind="movie",movie="b.bin"}') == 2 ]] ||
  fail "metrics: connections for b.bin are '$(series "$work/m1.txt" 'vod_server_connections{kind="movie",movie="b.bin"}')', not 2"
pass "metrics: 2 connections of kind movie for b.bin while they play"
kill "$p1" "$p2"; wait "$p1" "$p2" 2>/dev/null || true
for _ in $(seq 100); do
  scrape "$work/m2.txt"
  [[ $(series "$work/m2.txt" 'vod_server_connections{kind="movie",movie="b.bin"}') == 0 ]] && break
  sleep 0.1
done
[[ $(series "$work/m2.txt" 'vod_server_connections{kind="movie",movie="b.bin"}') == 0 ]] || fail "metrics: b.bin's connections did not fall to 0"
pass "metrics: b.bin's connections fall to 0 when its players leave"

step "the client's own errors"
expect "nothing listening" 4 "nothing listens on $addr:1" "$client_bin" get "rdma://$addr:1/a.bin" -o "$work/x"
expect "bad URI" 2 "the scheme must be rdma://" "$client_bin" get "http://$addr/a.bin" -o "$work/x"
expect "seek out of range" 6 "past the end of 'test-480p-60s.ts'" "$client_bin" play "$(uri test-480p-60s.ts)" --start 61
expect "time seek without an index" 6 "cannot be seeked by time" "$client_bin" play "$(uri a.bin)" --start 5
expect "no movie in the URI" 2 "get needs a movie" "$client_bin" get "$(uri)" -o "$work/x"

step "still serving after all that"
"$client_bin" get "$(uri a.bin)" -o "$work/a" && cmp "$media/a.bin" "$work/a" || fail "a.bin after rejects"
pass "served byte-identical after every reject"

step "metrics: every reject above counted by code, registered bytes, the device's counters, promtool"
scrape "$work/m3.txt"
promtool check metrics < "$work/m3.txt" || fail "promtool rejects vod-server's metrics"
at_least() {  # at_least SERIES N
  local v; v=$(series "$work/m3.txt" "$1")
  [[ -n $v && $v -ge $2 ]] || fail "metrics: $1 is '$v', expected at least $2"
}
at_least 'vod_server_rejects_total{code="unknown_movie"}' 3
at_least 'vod_server_rejects_total{code="malformed_request"}' 2
at_least 'vod_server_rejects_total{code="unsupported_version"}' 1
at_least 'vod_server_rejects_total{code="stale_catalog"}' 1
at_least 'vod_server_rejects_total{code="server_full"}' 1
at_least 'vod_server_connects_total{kind="movie"}' 3
size=$(cat "$media"/* | wc -c)
device=$(grep -oE 'vod_server_registered_bytes\{device="[^"]+"\}' "$work/m3.txt" | head -n 1)
[[ -n $device ]] || fail "metrics: no registered bytes per device"
at_least "$device" "$size"
grep -qE '^vod_rdma_(port|hw)_stat\{' "$work/m3.txt" || fail "metrics: none of the device's sysfs counters"
pass "metrics: rejects by code, $(series "$work/m3.txt" "$device") registered bytes on $(sed 's/.*device="\([^"]*\)".*/\1/' <<< "$device"), $(grep -cE '^vod_rdma_(port|hw)_stat' "$work/m3.txt") device counters"
stop_server
