#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# vod-server's sd_notify protocol as systemd (Type=notify) sees it, without systemd: a datagram
# socket as NOTIFY_SOCKET. READY=1 only once it listens with the library registered, with a STATUS
# of its movies; RELOADING=1 then READY=1 around a SIGHUP rescan; STOPPING=1 on SIGTERM, exit 0.
# Natively, over UDP only (--no-rdma): the notifications do not depend on the transport.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../free_port.sh"
build=${VOD_BUILD_DIR:?CTest sets VOD_BUILD_DIR}
work=$(mktemp -d)
pids=()
trap 'kill ${pids[*]} 2>/dev/null || true; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; echo "--- notifications:"; cat "$work/notify.log" 2>/dev/null; echo "--- server log:"; tail -n 20 "$work/server.log" 2>/dev/null; exit 1; }
pass() { echo "PASS: $*"; }
wait_for() {  # wait_for PATTERN: a notification line matching PATTERN within 30 s
  for _ in $(seq 300); do grep -q -- "$1" "$work/notify.log" && return 0; sleep 0.1; done
  fail "no notification matching '$1'"
}
mkdir "$work/media"
head -c 100000 /dev/urandom > "$work/media/a.bin"
"${NOTIFY_LISTENER:?CTest sets NOTIFY_LISTENER}" "$work/notify.sock" 120 > "$work/notify.log" &
pids+=($!)
for _ in $(seq 50); do [[ -S $work/notify.sock ]] && break; sleep 0.1; done
port=$(free_port)
NOTIFY_SOCKET=$work/notify.sock "$build/server/vod-server" --no-rdma --udp-port "$port" --bind 127.0.0.1 --media-dir "$work/media" \
  2> "$work/server.log" &
server=$!
pids+=($server)
wait_for '^READY=1'
grep -q 'listening on' "$work/server.log" || fail "READY=1 came before the server was listening"
grep -q '^READY=1 | STATUS=0 clients, 1 movie, 0 live channels, catalog generation 1$' "$work/notify.log" || fail "READY=1 without the expected STATUS"
pass "READY=1 once listening, with STATUS '0 clients, 1 movie, ...'"

head -c 5000 /dev/urandom > "$work/media/b.bin"
kill -HUP "$server"
wait_for 'STATUS=0 clients, 2 movies, 0 live channels, catalog generation 2'
awk '/^RELOADING=1/ { r = NR } /^READY=1/ && r && NR > r { ok = 1 } END { exit !ok }' "$work/notify.log" || fail "no RELOADING=1 followed by READY=1 on SIGHUP"
pass "SIGHUP: RELOADING=1, then READY=1 with generation 2 and 2 movies"

kill -TERM "$server"
rc=0; wait "$server" || rc=$?
[[ $rc -eq 0 ]] || fail "vod-server exited $rc after SIGTERM"
wait_for '^STOPPING=1'
pass "SIGTERM: STOPPING=1 and exit 0"

: > "$work/server2.log"
# Under systemd, stderr is the journal when JOURNAL_STREAM names it: lines carry sd-daemon priorities.
JOURNAL_STREAM=$(stat -c '%d:%i' "$work/server2.log") \
  "$build/server/vod-server" --no-rdma --udp-port "$port" --bind 127.0.0.1 --media-dir "$work/media" 2>> "$work/server2.log" &
server=$!
pids+=($server)
for _ in $(seq 100); do grep -q 'listening on' "$work/server2.log" && break; sleep 0.1; done
kill -TERM "$server"; wait "$server" || fail "vod-server without NOTIFY_SOCKET exited $?"
grep -qi 'sd_notify' "$work/server2.log" && fail "vod-server without NOTIFY_SOCKET tried to notify"
pass "without NOTIFY_SOCKET nothing is sent and nothing is logged about it"
grep -q '^<6>INFO server: listening on' "$work/server2.log" || fail "with stderr as the journal, lines lack the <6> priority prefix: $(head -n 2 "$work/server2.log")"
bad=$(grep -cvE '^(<7>DEBUG|<6>INFO|<4>WARN|<3>ERROR) [a-z-]+: ' "$work/server2.log" || true)
[[ $bad -eq 0 ]] || fail "with stderr as the journal, $bad lines lack the priority that matches their level"
pass "stderr as the journal (JOURNAL_STREAM): every line has its priority (<6>INFO, <4>WARN, ...), no time stamp"

"$build/server/vod-server" --no-rdma --udp-port "$port" --bind 127.0.0.1 --media-dir "$work/media" --log-format json 2> "$work/server3.log" &
server=$!
pids+=($server)
for _ in $(seq 100); do grep -q 'listening on' "$work/server3.log" && break; sleep 0.1; done
kill -TERM "$server"; wait "$server" || fail "vod-server --log-format json exited $?"
grep -qE '^\{"time":"[0-9T:.Z-]+","level":"info","component":"server","message":"listening on [^"]*"\}$' "$work/server3.log" ||
  fail "--log-format json: no JSON line for 'listening on': $(head -n 2 "$work/server3.log")"
bad=$(grep -cvE '^\{"time":"[^"]+","level":"(debug|info|warn|error)","component":"[^"]+","message":".*"\}$' "$work/server3.log" || true)
[[ $bad -eq 0 ]] || fail "--log-format json: $bad lines are not one JSON object each"
"$build/server/vod-server" --media-dir "$work/media" --log-format xml > /dev/null 2> "$work/err" && fail "--log-format xml was accepted"
grep -q "unknown log format 'xml' (text, json)" "$work/err" || fail "--log-format xml: unclear error: $(cat "$work/err")"
pass "--log-format json: one object per line with time, level, component, message; xml refused clearly"
