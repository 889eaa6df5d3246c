#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The product on iWARP (siw, software iWARP; ctest label rdma-iwarp), in the same session as the rdma
# group: what differs from RoCE, each once. The client sends first, Read sinks need REMOTE_WRITE, the
# private data is MPA's, QPs reach RTS only inside the accept, and there are no memory windows, so
# with tokens each connection gets a protection domain of its own (--isolation auto picks pd).
#   - VoD: get byte-exact (a raw file and a TS), the VCR suite, a kill -9 and restart under a reader
#   - live: viewers record a channel from a keyframe, decodable; a steady one never skips, one stopped
#     (SIGSTOP) for longer than the ring skips forward and says so
#   - vod-proxy (HTTP Range), rdmasrc and vod-mount byte-exact
#   - tokens with a PD per connection: a hostile raw-verbs reader's stolen, wrong, shared-region,
#     out-of-bounds and reused rkeys refused on its own QP while honest viewers stream byte-exact; the
#     catalog lists no rkeys; a movie-A token gives no way to movie B; a viewer cut off at its token's
#     expiry and one by revocation, the others untouched; isolation refused (--isolation-memory too
#     small for one more connection) says why, and the server serves on
#   - the segment cache with tokens: a slot registered on the asking connection's own PD, byte-exact
# Without an iWARP device in the session (a native host with RoCE only) it says so and skips (77).
[[ -n ${VOD_IWARP_ADDR:-} ]] || { echo "SKIP: no iWARP device in this session (VOD_IWARP_ADDR unset): softroce-run --device both brings up siw in the guest"; exit 77; }
export VOD_RDMA_ADDR=$VOD_IWARP_ADDR
source "$(dirname "$0")/vod_test_lib.sh"
# The VCR suite's library (it checks the catalog whole), then the rest beside it.
vcr_media=$work/vcr-media media=$work/media
mkdir -p "$vcr_media" "$media"
"$build/tests/rdma/make_pattern" $((48 * 1024 * 1024 + 5)) 1 "$vcr_media/pattern-a.bin"
"$build/tests/rdma/make_pattern" $((3 * 1024 * 1024 + 7)) 2 "$vcr_media/pattern-b.bin"
cp "$test_media/test-480p-60s.ts" "$vcr_media/"
cp "$vcr_media"/* "$media/"
"$build/tests/rdma/make_pattern" 300000 3 "$media/premium-a.bin"
"$build/tests/rdma/make_pattern" 200000 4 "$media/premium-b.bin"
cp "$test_media/test-480p-60s.mp4" "$media/"
grep -q "transport:.*iWARP" <<< "$(ibv_devinfo)" || fail "no iWARP device: $(ibv_devinfo | grep -E 'hca_id|transport')"

step "VoD on iWARP: get byte-exact, the VCR suite, a restart under a reader"
start_server "$vcr_media"
grep -q "(iWARP)" "$server_log" || fail "the server does not say its device is iWARP: $(grep device "$server_log")"
for f in pattern-b.bin test-480p-60s.ts; do
  "$client_bin" get "$(uri "$f")" -o "$work/$f" -q || fail "get $f on siw"
  cmp "$media/$f" "$work/$f" || fail "$f differs on siw"
done
# Scale.*: 60 sessions, not 1000: siw in Linux 6.1 maps at most 143 queues per process and device
# (SIW_UOBJ_MAX_KEY), about 70 QPs at once, and then fails to create one without a reason (the
# client now says so: rdma::QueuePair).
VOD_TEST_SCALE_SESSIONS=60 VOD_TEST_URI=$(uri) VOD_TEST_SERVER_LOG=$server_log VOD_TEST_MEDIA_DIR=$vcr_media "$build/tests/rdma/vod_vcr_tests" > "$work/vcr.log" 2>&1 ||
  { tail -n 30 "$work/vcr.log"; fail "the VCR suite on siw"; }
export VOD_TEST_PORT=$port
"$client_bin" play "$(uri pattern-a.bin)" --rate 40 --reconnect-for 60 --log-level info > "$work/restart.out" 2> "$work/restart.err" &
reader=$!
sleep 3
crash_and_restart_server "$vcr_media"
wait "$reader" || fail "the reader did not survive the restart: $(tail -n 3 "$work/restart.err")"
cmp "$media/pattern-a.bin" "$work/restart.out" || fail "across the restart on siw the bytes differ"
grep -q "reconnected" "$work/restart.err" || fail "the reader did not reconnect: $(tail -n 3 "$work/restart.err")"
pass "get, $(grep -c '^\[       OK' "$work/vcr.log") VCR cases, and a kill -9 restart under a reader, byte-exact on siw"
stop_server
unset VOD_TEST_PORT
start_server "$media" --live "cam=file:$media/test-480p-60s.ts" --live-buffer 3

step "live on iWARP: two viewers record 'cam' from a keyframe; a stopped one skips forward"
stat_of() { sed -n "s/^LIVE .*\b$2=\([0-9]*\).*/\1/p" "$1"; }
"$client_bin" get "$(uri live/cam)" -o "$work/live1.ts" --duration 10 --log-level info 2> "$work/live1.log" &
l1=$!
# 14 s: it must still be reading after its 5 s stop, or it never sees what it missed (with 10 s,
# a slow start beside another test once left it no time to, and it reported no skip).
"$client_bin" get "$(uri live/cam)" -o "$work/live2.ts" --duration 14 --credits 2 --log-level info 2> "$work/live2.log" &
l2=$!
live_viewing "$work/live2.log"
sleep 2
kill -STOP "$l2"
sleep 5  # longer than the ring's 3 s
kill -CONT "$l2"
wait "$l1" || fail "live viewer on siw: $(tail -n 3 "$work/live1.log")"
wait "$l2" || fail "the stopped live viewer on siw: $(tail -n 3 "$work/live2.log")"
# One decode of each recording, every stream (TCG is slow): its video frames' keyframe flags, and
# its decoders' errors.
for v in live1 live2; do
  ffprobe -v error -show_entries frame=media_type,key_frame -of csv=p=0 "$work/$v.ts" 2> "$work/$v.errors" |
    sed -n 's/^video,\([01]\).*/\1/p' > "$work/$v.frames" || true
  first=$(sed -n 1p "$work/$v.frames")
  [[ $first == 1 ]] || fail "$v does not start on a keyframe"
  frames=$(grep -c . "$work/$v.frames" || true)
  [[ ${frames:-0} -gt 50 ]] || fail "$v decoded $frames frames"
  echo "  $v: $frames frames, $(grep -c . "$work/$v.errors" || true) decoder messages, $(stat_of "$work/$v.log" skips) skips"
done
[[ $(stat_of "$work/live1.log" skips) == 0 ]] || fail "the steady viewer on siw skipped: $(grep ^LIVE "$work/live1.log")"
[[ $(grep -c . "$work/live1.errors" || true) == 0 ]] || fail "the steady viewer's recording does not decode cleanly on siw: $(head -n 3 "$work/live1.errors")"
skips=$(stat_of "$work/live2.log" skips)
[[ ${skips:-0} -ge 1 ]] || fail "the stopped viewer on siw did not skip forward: $(grep ^LIVE "$work/live2.log")"
grep -q 'discontinuity at output byte' "$work/live2.log" || fail "the stopped viewer on siw did not report its skip"
# Only the frames its skips cut short may fail to decode: at most one error per stream and skip.
errors=$(grep -c . "$work/live2.errors" || true)
((errors <= 2 * skips)) || fail "the stopped viewer's recording on siw has $errors decode errors for $skips skip(s)"
pass "two live recordings on siw start on a keyframe and decode; the steady one never skips, the stopped one skipped $skips time(s)"

step "vod-proxy, rdmasrc and vod-mount on iWARP"
clients_byte_exact pattern-b.bin 1000000 2999999 pattern-b.bin
pass "vod-proxy's Range, rdmasrc and vod-mount byte-identical on siw"
stop_server

step "tokens on iWARP: a protection domain per connection"
keys=$work/keys revoked=$work/revoked
(umask 077; printf '1 %s\n' "$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" > "$keys")
echo "# nothing yet" > "$revoked"
mint() { "$build/server/vod-token" --secret "$keys" "$@"; }
with() { echo "$(uri "$1")?token=$2"; }
all=$(mint --all --ttl 10m)
start_server "$media" --auth-secret "$keys" --revoked "$revoked" --log-level debug
grep -q "a protection domain per connection instead" "$server_log" || fail "the server did not choose a PD per connection on siw: $(grep auth "$server_log")"
# The shared region's key, as if it leaked: with a PD per connection nothing reads through it.
mr_rkey=$(sed -n 's/.*registered movie premium-b.bin on [^:]*: [0-9]* bytes, lkey 0x\([0-9a-f]*\) rkey \(0x[0-9a-f]*\) .*/\1/p' "$server_log" | head -n 1)
[[ -n $mr_rkey ]] || fail "the server did not log premium-b.bin's registration"
viewers=()
for i in 1 2 3 4; do
  "$client_bin" play "$(with premium-a.bin "$all")" --rate 0.4 --burst 0 > "$work/honest-$i.out" 2> "$work/honest-$i.err" &
  viewers+=($!)
done
cleanup_hooks+=("kill ${viewers[*]} 2>/dev/null")
"$build/tests/rdma/hostile_reader" --host "$addr" --port "$port" --name premium-b.bin --token "$all" --file "$media/premium-b.bin" \
  --mr-rkey "$mr_rkey" > "$work/hostile.out" 2>&1 || { cat "$work/hostile.out"; fail "a hostile read on siw was not refused"; }
sed 's/^/    /' "$work/hostile.out"
[[ $(grep -c "^refused: " "$work/hostile.out") -eq 5 ]] || fail "expected 5 refused probes on siw"
for i in 1 2 3 4; do
  wait "${viewers[$((i - 1))]}" || fail "honest viewer $i on siw: $(tail -n 2 "$work/honest-$i.err")"
  cmp "$media/premium-a.bin" "$work/honest-$i.out" || fail "honest viewer $i on siw: output differs"
done
"$client_bin" list "$(with "" "$(mint --movie premium-a.bin)")" > /dev/null || fail "list with a movie token on siw"
expect "movie B with movie A's token" 1 "unauthorized: out of scope" "$client_bin" get "$(with premium-b.bin "$(mint --movie premium-a.bin)")" -o "$work/x"
pass "stolen, wrong, shared-region, out-of-bounds and reused rkeys refused on siw; 4 honest viewers byte-exact; a movie-A token reaches no movie B"

step "tokens on iWARP: expiry and revocation cut one viewer off, the others stream on"
short=$(mint --movie pattern-b.bin --ttl 6s)
doomed=$(mint --movie pattern-a.bin --ttl 10m)
"$client_bin" play "$(with pattern-b.bin "$short")" --rate 0.5 > /dev/null 2> "$work/expiring.err" & expiring=$!
"$client_bin" play "$(with pattern-a.bin "$doomed")" --rate 0.5 > /dev/null 2> "$work/revoked.err" & victim=$!
"$client_bin" play "$(with pattern-b.bin "$all")" --rate 0.5 > "$work/bystander.out" 2> "$work/bystander.err" & bystander=$!
sleep 3
echo "token $doomed" >> "$revoked"
kill -HUP "$server_pid"
rc=0; wait "$victim" || rc=$?
[[ $rc -ne 0 ]] && grep -q "unauthorized" "$work/revoked.err" || fail "the revoked viewer on siw: exit $rc: $(tail -n 2 "$work/revoked.err")"
rc=0; wait "$expiring" || rc=$?
[[ $rc -ne 0 ]] && grep -q "token expired" "$work/expiring.err" || fail "the expiring viewer on siw: exit $rc: $(tail -n 2 "$work/expiring.err")"
wait "$bystander" || fail "the bystander on siw: $(tail -n 2 "$work/bystander.err")"
cmp "$media/pattern-b.bin" "$work/bystander.out" || fail "the bystander's bytes differ on siw"
pass "revoked and expired viewers cut off with their reasons on siw; the bystander byte-exact"
stop_server

step "isolation refused on iWARP: --isolation-memory too small for one more connection"
start_server "$media" --auth-secret "$keys" --isolation-memory 1M
expect "a connect that would pin too much" 1 "server full: isolating this connection would pin" \
  "$client_bin" get "$(with pattern-b.bin "$all")" -o "$work/x"
"$client_bin" get "$(with premium-a.bin "$all")" -o "$work/small.out" -q || fail "a connection that fits, after a refused one"
cmp "$media/premium-a.bin" "$work/small.out" || fail "premium-a.bin differs"
kill -0 "$server_pid" || fail "the server died"
pass "a connection past --isolation-memory refused saying why; one that fits served byte-exact"
stop_server

step "the segment cache with tokens on iWARP: each slot registered on the asking connection's PD"
start_server "$media" --auth-secret "$keys" --cache-size 8M --segment-size 1M --cache-grace 300 --cache-read-deadline 1000 --state-dir ""
"$client_bin" get "$(with pattern-a.bin "$(mint --movie pattern-a.bin)")" -o "$work/cached.out" --chunk-kib 256 -q || fail "a cached get with a token on siw"
cmp "$media/pattern-a.bin" "$work/cached.out" || fail "pattern-a.bin from the cache differs on siw"
pass "48 MiB through an 8 MiB cache, each slot on the connection's own PD, byte-exact on siw"
stop_server

step "each slot's registration counts against --isolation-memory: past it the segment is answered busy, with the reason, on a connection that stays"
# 512 KiB: the accept's registrations (catalog, table) fit, one 1 MiB slot does not. Before slot
# registrations were counted, this get was served whole.
start_server "$media" --auth-secret "$keys" --cache-size 8M --segment-size 1M --cache-grace 300 --cache-read-deadline 1000 --state-dir "" \
  --isolation-memory 512K
rc=0
"$client_bin" get "$(with pattern-a.bin "$(mint --movie pattern-a.bin)")" -o "$work/busy.out" --chunk-kib 256 2> "$work/busy.err" || rc=$?
[[ $rc -ne 0 ]] && grep -q "isolation-memory" "$work/busy.err" || fail "a get past --isolation-memory: exit $rc: $(tail -n 2 "$work/busy.err")"
grep -q "lost" "$work/busy.err" && fail "the connection broke instead of answering busy: $(tail -n 2 "$work/busy.err")"
grep -q "answered busy" "$server_log" || fail "the server did not log the busy answer"
kill -0 "$server_pid" || fail "the server died"
pass "refused with the reason: $(grep -o "isolation-memory.*" "$work/busy.err" | head -n 1)"
stop_server
