#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# --live-record, natively (vod-server --no-rdma; the catalog and the movies over Write-Record): a
# 40 s file channel (1 s GOPs, B-frames, audio) recorded with --live-record-split 2s.
#  - Three rotations: every completed file is in the catalog, decodes without an error, and the
#    files and the one being written are, end to end, exactly the bytes the source sent. One is got
#    over UDP byte-exact.
#  - kill -9 mid-file: the hidden file holds whole packets up to the last write and decodes; the next
#    start completes it and lists it, and --live-record-keep deletes the oldest with a log line.
#  - A full disk (a 256 KiB tmpfs under Live/, in a mount namespace of its own, when the test may
#    make one): the error is logged, the file so far is kept, and the channel goes on publishing. A
#    DVR window (--live-dvr) a 1 MiB disk has no room for is refused at start, naming the file, and
#    the channel goes on without it.
source "$(dirname "$0")/test_lib.sh"  # $work, $pids, cleanup, step/pass/fail
metric() { curl -s "http://127.0.0.1:$1/metrics" | awk -v m="$2" '$1 == m { print $2 }'; }
errors() { { ffmpeg -v error -i "$1" -f null - 2>&1 || echo "ffmpeg exited $?"; } | head -n 3; }
frames() { { ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$1" 2> /dev/null || true; } | head -n 1; }
# is_span FILE... : the files, concatenated, are the first bytes the (looping) source sent
is_span() {
  /usr/bin/python3 - "$work/src.ts" "$@" << 'PY'
import sys
src = open(sys.argv[1], "rb").read()
got = b"".join(open(f, "rb").read() for f in sys.argv[2:])
want = (src * (len(got) // len(src) + 1))[: len(got)]
sys.exit(0 if got and got == want else 1)
PY
}

media=$work/media
mkdir -p "$media"
ffmpeg -v error -f lavfi -i "testsrc2=size=320x240:rate=25" -f lavfi -i "sine=f=440:r=48000" -t 40 -c:v libx264 -preset veryfast -g 25 -bf 2 \
  -pix_fmt yuv420p -c:a aac -b:a 64k -f mpegts "$work/src.ts"
udp=$(free_port) metrics=$(free_port)
start_server() {  # LOG [options...]
  local log=$1
  shift
  "$build/server/vod-server" --no-rdma --udp-port "$udp" --bind 127.0.0.1 --media-dir "$media" --state-dir "" --metrics-port "$metrics" \
    --live "cam=file:$work/src.ts" --live-record --live-record-split 2s "$@" 2> "$work/$log" &
  server=$!
  pids+=("$server")
  for _ in $(seq 100); do grep -q 'listening on' "$work/$log" && return 0; sleep 0.1; done
  fail "vod-server did not start: $(tail -n 3 "$work/$log")"
}
C=(--transport udp --udp-port "$udp")
folder=$media/Live/cam

step "three rotations"
start_server server.log
for _ in $(seq 200); do (($(grep -c ': recorded ' "$work/server.log") >= 3)) && break; sleep 0.1; done
(($(grep -c ': recorded ' "$work/server.log") >= 3)) || fail "no three recordings in 20 s"
sleep 1.5  # the rescan that follows the third
mapfile -t done < <(find "$folder" -name 'cam *.ts' | sort)
((${#done[@]} >= 3)) || fail "${#done[@]} files: $(ls -la "$folder")"
"$build/client/vod-client" list rdma://127.0.0.1 "${C[@]}" > "$work/list"
for f in "${done[@]}"; do
  grep -qF "Live/cam/$(basename "$f")" "$work/list" || fail "$(basename "$f") is not in the catalog: $(cat "$work/list")"
  [[ -z $(errors "$f") ]] || fail "$(basename "$f") does not decode cleanly: $(errors "$f")"
  n=$(frames "$f")
  ((n >= 50)) || fail "$(basename "$f"): $n frames, not 2 s of them"
done
pass "${#done[@]} files, each in the catalog and decoding cleanly ($(for f in "${done[@]}"; do printf '%s ' "$(frames "$f")"; done)frames)"

step "the files are what the source sent; one over UDP, byte-exact"
name=$(basename "${done[1]}")
"$build/client/vod-client" get "rdma://127.0.0.1/Live/cam/${name// /%20}" -o "$work/got.ts" -q "${C[@]}" || fail "get $name"
cmp "$work/got.ts" "${done[1]}" || fail "$name over UDP differs"
hidden=$(find "$folder" -name '.cam *.ts')
[[ -n $hidden ]] || fail "no file being written: $(ls -la "$folder")"
pass "the completed files are the source's first $(cat "${done[@]}" | wc -c) bytes, exactly; $name came over UDP intact"

step "kill -9 in the middle of a file"
for _ in $(seq 50); do [[ $(find "$folder" -name '.cam *.ts' -size +0) ]] && break; sleep 0.1; done
kill -9 "$server"
wait "$server" 2> /dev/null || true
mapfile -t done < <(find "$folder" -name 'cam *.ts' | sort)
hidden=$(find "$folder" -name '.cam *.ts')
[[ -n $hidden ]] || fail "no hidden file after kill -9: $(ls -la "$folder")"
size=$(stat -c %s "$hidden")
((size % 188 == 0 && size > 0)) || fail "the hidden file has $size bytes: not whole packets"
cp "$hidden" "$work/cut.ts"
is_span "${done[@]}" "$work/cut.ts" || fail "the files and the one cut short are not the bytes the source sent"
n=$(frames "$work/cut.ts")
((n > 0)) || fail "the file cut short does not decode"
pass "$(basename "$hidden") was left with $size bytes of whole packets, the source's own, and $n frames decode"

step "the next start completes it and lists it; --live-record-keep deletes the oldest"
keep=$(($(cat "${done[@]}" "$hidden" | wc -c) - $(stat -c %s "${done[0]}") + 1000))
start_server server2.log --live-record-keep "$keep"
grep -q "completed the recording $folder/${hidden##*/.}" "$work/server2.log" || fail "no completion logged: $(grep live "$work/server2.log")"
grep -q -- "--live-record-keep: deleted the oldest recording $folder/$(basename "${done[0]}")" "$work/server2.log" ||
  fail "the oldest was not deleted: $(grep keep "$work/server2.log")"
[[ ! -e ${done[0]} && -e $folder/${hidden##*/.} ]] || fail "after the start: $(ls -la "$folder")"
"$build/client/vod-client" list rdma://127.0.0.1 "${C[@]}" > "$work/list2"
grep -qF "Live/cam/${hidden##*/.}" "$work/list2" || fail "the completed file is not listed: $(cat "$work/list2")"
grep -qF "Live/cam/$(basename "${done[0]}")" "$work/list2" && fail "the deleted file is still listed"
sleep 1
recorded=$(metric "$metrics" 'vod_server_live_recorded_bytes_total{channel="cam"}')
((recorded > 0)) || fail "vod_server_live_recorded_bytes_total: '$recorded'"
pass "${hidden##*/.} completed and listed; $(basename "${done[0]}") deleted to keep $keep bytes; $recorded bytes recorded since"
kill "$server"
wait "$server" 2> /dev/null || true

step "a full disk"
probe=$(mktemp -d)
if ! unshare -m sh -c "mount -t tmpfs -o size=64k tmpfs '$probe'" 2> /dev/null; then
  echo "SKIP (this step): no mount namespace with a tmpfs can be made here (needs root)"
  exit 0
fi
full=$work/full
mkdir -p "$full/media/Live"
metrics2=$(free_port) udp2=$(free_port)
# The server runs in a mount namespace of its own, where Live/ is a 256 KiB tmpfs; the checks run there too.
unshare -m bash -c '
  set -e
  mount -t tmpfs -o size=256k tmpfs "$1/media/Live"
  "$2/server/vod-server" --no-rdma --udp-port "$4" --bind 127.0.0.1 --media-dir "$1/media" --state-dir "" --metrics-port "$5" \
    --live "cam=file:$3" --live-record --live-record-split 1s 2> "$1/server.log" &
  server=$!
  for _ in $(seq 150); do grep -q "No space left on device" "$1/server.log" && break; sleep 0.1; done
  b1=$(curl -s "http://127.0.0.1:$5/metrics" | awk "/^vod_server_live_bytes_total/ { print \$2 }")
  sleep 1
  b2=$(curl -s "http://127.0.0.1:$5/metrics" | awk "/^vod_server_live_bytes_total/ { print \$2 }")
  curl -s "http://127.0.0.1:$5/metrics" | grep "^vod_server_live_record" > "$1/record.metrics"
  echo "$b1 $b2" > "$1/bytes"
  cp -r "$1/media/Live/cam" "$1/kept"
  kill -0 "$server" && echo alive > "$1/alive"
  kill "$server"
  wait "$server" || true
  # A DVR window that the disk has no room for: refused at start, and the channel goes on without it.
  mkdir -p "$1/dvr"
  mount -t tmpfs -o size=1m tmpfs "$1/dvr"
  "$2/server/vod-server" --no-rdma --udp-port "$4" --bind 127.0.0.1 --media-dir "$1/media" --state-dir "" --metrics-port "$5" \
    --live "cam=file:$3" --live-dvr 5m --live-dvr-dir "$1/dvr" 2> "$1/server-dvr.log" &
  server=$!
  for _ in $(seq 100); do grep -q "listening on" "$1/server-dvr.log" && break; sleep 0.1; done
  sleep 1
  curl -s "http://127.0.0.1:$5/metrics" | awk "/^vod_server_live_bytes_total/ { print \$2 }" > "$1/dvr-bytes"
  kill "$server"
  wait "$server" || true
' full "$full" "$build" "$work/src.ts" "$udp2" "$metrics2"
grep -q "cam: recording: write in .*: No space left on device; what was written is kept" "$full/server.log" ||
  fail "no error line for the full disk: $(grep -i 'live' "$full/server.log" | tail -n 5)"
[[ -e $full/alive ]] || fail "the server died on the full disk"
read -r b1 b2 < "$full/bytes"
((b2 > b1)) || fail "the channel stopped publishing: $b1 then $b2 bytes"
grep -q 'vod_server_live_record_errors_total{channel="cam"} [1-9]' "$full/record.metrics" || fail "no write error counted: $(cat "$full/record.metrics")"
mapfile -t kept < <(find "$full/kept" -name 'cam *.ts' | sort)
((${#kept[@]} >= 1)) || fail "nothing was kept: $(ls -la "$full/kept")"
is_span "${kept[@]}" || fail "what was kept is not the bytes the source sent"
n=$(frames "${kept[-1]}")
((n > 0)) || fail "the file the disk filled up in does not decode"
grep -q "cam: no DVR window: --live-dvr: cannot reserve .* MiB for cam's window in $full/dvr/.*: No space left on device" "$full/server-dvr.log" ||
  fail "a DVR window without room: $(grep -i 'dvr\|listening' "$full/server-dvr.log" | head -n 3)"
(($(cat "$full/dvr-bytes") > 0)) || fail "the channel without its window published nothing"
pass "logged ($(grep -o 'No space left on device' "$full/server.log" | head -n 1)); ${#kept[@]} files kept, the source's bytes, the last decoding $n frames; the channel published $((b2 - b1)) bytes in the second after"
