#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# vod-proxy under hostile HTTP clients (issue 29, item 6), natively on loopback. The proxy's
# --server is a vod-server that is not running: the Host check, idle connections, the connection
# cap and the timeouts are all decided before the catalog is needed, and /static/ answers anyway.
#   - --help shows the new options and their defaults; bad values are refused, naming the option
#   - Host: attacker.example gets 421 naming --allow-host; 127.0.0.1:PORT (what the web and proxy
#     tests' pages use), localhost, [::1] and an HTTP/1.0 request without Host get 200; HTTP/1.1
#     without Host gets 400; --allow-host NAME admits NAME
#   - 2000 idle connections: the proxy's VmRSS stays under 100 MB (it was 1 GB: 2 x 256 KiB each)
#   - idle connections are closed after --header-timeout, a slowloris header (a byte a second)
#     gets 408 and is closed within --header-timeout, a kept-alive connection after --idle-timeout
#   - --max-connections: the connections beyond it get 503 at once, an honest request meanwhile
#     gets 503 saying which option to raise, and gets 200 once the idle ones are gone; /metrics
#     counts the refusals and the timeouts
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../free_port.sh"
build=${VOD_BUILD_DIR:?CTest sets VOD_BUILD_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
hostile=("/usr/bin/python3" "$here/hostile_http.py")
work=$(mktemp -d)
pids=()
cleanup() {
  local rc=$?
  kill "${pids[@]}" 2>/dev/null || true
  if [[ $rc -ne 0 ]]; then
    for log in "$work"/proxy-*.log; do [[ -f $log ]] && { echo "--- $log (last 15 lines)"; tail -n 15 "$log"; }; done
  fi
  rm -rf "$work"
}
trap cleanup EXIT
step() { echo "--- $*"; }
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
kv() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<< "$2"; }   # the value of key $1 in a hostile_http.py line
metric() { curl -s "http://127.0.0.1:$1/metrics" | awk -v m="$2" '$1 == m { print $2 }'; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

# Enough descriptors for 2000 connections on each side (the proxy raises its own limit).
hard=$(ulimit -Hn)
if [[ $hard == unlimited || $hard -ge 4096 ]]; then ulimit -n 4096; else ulimit -n "$hard"; fi
idle_count=2000
(( $(ulimit -n) >= idle_count + 200 )) || idle_count=$(( $(ulimit -n) - 200 ))

dead_udp=$(free_port)  # nothing listens there: the catalog is unavailable (502), which these checks never need
proxy=("$build/proxy/vod-proxy" --server rdma://127.0.0.1 --transport udp --udp-port "$dead_udp")
start_proxy() {  # NAME PORT OPTIONS...: starts it, waits for its listener
  local name=$1 port=$2
  shift 2
  "${proxy[@]}" --listen "127.0.0.1:$port" "$@" 2> "$work/proxy-$name.log" &
  pids+=($!)
  last_pid=$!
  for _ in $(seq 100); do grep -q 'listening on' "$work/proxy-$name.log" && return 0; sleep 0.1; done
  fail "vod-proxy $name did not start: $(tail -n 3 "$work/proxy-$name.log")"
}

step "--help shows the limits and their defaults; bad values are refused"
help=$("${proxy[@]}" --help)
for option in "--max-connections arg (=1024)" "--header-timeout arg (=10)" "--idle-timeout arg (=15)" "--allow-host arg" "--live-buffer-kib arg (=4096)"; do
  grep -qF -- "$option" <<< "$help" || fail "--help lacks '$option'"
done
for bad in "--max-connections 0" "--header-timeout 0" "--idle-timeout 99999" "--live-buffer-kib 1" "--allow-host bad!name"; do
  rc=0; out=$("${proxy[@]}" --listen 127.0.0.1:1 $bad 2>&1) || rc=$?
  [[ $rc -eq 2 ]] && grep -qF -- "${bad%% *}" <<< "$out" || fail "$bad: exit $rc, '$out'"
done
pass "defaults 1024, 10 s, 15 s, 4096 KiB; 5 bad values refused naming the option"

port=$(free_port)
start_proxy main "$port" --header-timeout 4 --idle-timeout 2
main_pid=$last_pid
request() { "${hostile[@]}" request "$port" "$@"; }

step "the Host allow-list"
out=$(request --host attacker.example)
grep -q "HTTP/1.1 421 Misdirected Request" <<< "$out" && grep -qF -- "--allow-host attacker.example" <<< "$out" ||
  fail "Host: attacker.example: $out"
out=$(request --host attacker.example:$port --path /catalog.json)
grep -q "421 Misdirected Request" <<< "$out" || fail "Host: attacker.example on /catalog.json: $out"
for host in "127.0.0.1:$port" "localhost:$port" "[::1]:$port" "LOCALHOST"; do
  out=$(request --host "$host")
  grep -q "HTTP/1.1 200" <<< "$out" || fail "Host: $host: $out"
done
grep -q "HTTP/1.1 200" <<< "$(request --no-host --version 1.0)" || fail "HTTP/1.0 without Host was refused"
out=$(request --no-host)
grep -q "HTTP/1.1 400" <<< "$out" && grep -q "needs a Host header" <<< "$out" || fail "HTTP/1.1 without Host: $out"
[[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/static/style.css") == 200 ]] || fail "curl as the web tests use it"
[[ $(metric "$port" 'vod_proxy_http_requests_total{status="421"}') == 2 ]] || fail "/metrics does not count the two 421s"
port_b=$(free_port)
start_proxy allow "$port_b" --allow-host media.example --allow-host 192.0.2.7
grep -q "HTTP/1.1 200" <<< "$("${hostile[@]}" request "$port_b" --host "media.example:$port_b")" || fail "--allow-host media.example did not admit it"
grep -q "HTTP/1.1 200" <<< "$("${hostile[@]}" request "$port_b" --host 192.0.2.7)" || fail "--allow-host 192.0.2.7 did not admit it"
grep -q "HTTP/1.1 421" <<< "$("${hostile[@]}" request "$port_b" --host attacker.example)" || fail "attacker.example admitted with --allow-host"
pass "421 for attacker.example (saying --allow-host), 200 for 127.0.0.1:PORT, localhost, [::1] and HTTP/1.0 without Host; 400 without Host in 1.1; --allow-host admits"

step "$idle_count idle connections"
port_i=$(free_port)
# A header timeout long enough for opening them all on a loaded host; the cap above their number.
start_proxy idle "$port_i" --max-connections $((idle_count + 100)) --header-timeout 60
idle_pid=$last_pid
before=$(rss_kib "$idle_pid")
out=$("${hostile[@]}" idle "$port_i" --count "$idle_count" --pid "$idle_pid")
echo "    before: VmRSS $before KiB; $out"
[[ $(kv opened "$out") == "$idle_count" && $(kv open "$out") == "$idle_count" ]] || fail "not all $idle_count idle connections stayed open: $out"
rss=$(kv rss_kib "$out")
((rss < 100 * 1024)) || fail "VmRSS with $idle_count idle connections is $rss KiB (over 100 MB)"
pass "VmRSS $before KiB -> $rss KiB with $idle_count idle connections"

step "timeouts: idle connections, a slowloris header, a kept-alive connection"
out=$("${hostile[@]}" idle "$port" --count 50 --settle 6)
[[ $(kv closed "$out") == 50 ]] || fail "50 connections that sent nothing for 6 s with --header-timeout 4: $out"
out=$("${hostile[@]}" slowloris "$port" --interval 0.5 --limit 15)
loris=$(kv closed_after "$out")
[[ $loris != never ]] && awk -v a="$loris" 'BEGIN { exit !(a >= 3.5 && a <= 5.5) }' || fail "slowloris with --header-timeout 4: $out"
grep -q "408 Request Timeout" <<< "$out" || fail "the slowloris did not get a 408: $out"
grep -q '"(request header incomplete)" 408' "$work/proxy-main.log" || fail "no access log line for the 408"
out=$("${hostile[@]}" keepalive "$port" --limit 15)
after=$(kv closed_after "$out")
grep -q "HTTP/1.1 200" <<< "$out" && [[ $after != never ]] && awk -v a="$after" 'BEGIN { exit !(a >= 1.5 && a <= 3.5) }' ||
  fail "kept alive with --idle-timeout 2: $out"
(( $(metric "$port" 'vod_proxy_http_timeouts_total{phase="idle"}') >= 51 )) || fail "idle timeouts not counted: $(metric "$port" 'vod_proxy_http_timeouts_total{phase="idle"}')"
[[ $(metric "$port" 'vod_proxy_http_timeouts_total{phase="header"}') == 1 ]] || fail "the header timeout is not counted"
pass "50 silent connections closed after 4 s, a slowloris got 408 and was closed after $loris s, a kept-alive one after $after s; counted in /metrics"

step "--max-connections 100: 130 idle connections"
port_c=$(free_port)
start_proxy cap "$port_c" --max-connections 100
mkfifo "$work/hold"
"${hostile[@]}" cap "$port_c" --count 130 --hold < "$work/hold" > "$work/cap.out" &
cap_pid=$!
pids+=($cap_pid)
exec 7> "$work/hold"  # held open: the client keeps its connections until a line arrives
for _ in $(seq 150); do [[ -s $work/cap.out ]] && break; sleep 0.1; done
out=$(cat "$work/cap.out")
[[ $(kv open "$out") == 100 && $(kv refused_503 "$out") == 30 ]] || fail "130 connections at --max-connections 100: $out"
code=$(curl -s -o "$work/busy" -w '%{http_code}' "http://127.0.0.1:$port_c/static/style.css" || true)
[[ $code == 503 ]] && grep -qF -- "--max-connections" "$work/busy" || fail "an honest request at the cap: HTTP $code, $(cat "$work/busy")"
echo >&7
exec 7>&-
wait "$cap_pid"
code=
for _ in $(seq 30); do
  code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port_c/static/style.css" || true)
  [[ $code == 200 ]] && break
  sleep 0.1
done
[[ $code == 200 ]] || fail "after the idle connections closed, an honest request got $code"
[[ $(metric "$port_c" vod_proxy_http_connections_refused_total) == 31 ]] || fail "refusals counted: $(metric "$port_c" vod_proxy_http_connections_refused_total)"
grep -q "WARN proxy: refused 1 connection with 503: 100 are open (--max-connections)" "$work/proxy-cap.log" || fail "no warning for the refusals"
(( $(grep -c "WARN proxy: refused" "$work/proxy-cap.log") == 1 )) || fail "the refusal warning is not rate limited"
pass "100 open, 30 refused with 503, an honest request 503 at the cap and 200 after; 31 refusals counted, one warning"
kill -0 "$main_pid" && kill -0 "$idle_pid" || fail "a proxy died"
