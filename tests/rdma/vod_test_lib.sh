# SPDX-License-Identifier: LGPL-2.1-or-later
# Shell helpers for the vod-server RDMA tests. Source it; it needs VOD_RDMA_ADDR (softroce-run sets it)
# and VOD_BUILD_DIR (CTest sets it).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../free_port.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../test_media.sh"
addr=${VOD_RDMA_ADDR:?run through tests/softroce/softroce-run}
build=${VOD_BUILD_DIR:?CTest sets VOD_BUILD_DIR}
server_bin=$build/server/vod-server
client_bin=$build/client/vod-client
work=$(mktemp -d)
# GStreamer finds rdmasrc in the build tree, through one registry per session and user: a fresh
# registry scans every installed plugin, which takes tens of seconds under TCG, so the tests share
# the one the first of them makes (GStreamer writes it by a rename, and rescans a plugin that changed).
export GST_PLUGIN_PATH=$build/client/gst
export GST_REGISTRY=${TMPDIR:-/tmp}/vod-gst-registry-$(id -u).bin
# gst_ready: the registry made (or found) before a step that gives a GStreamer process a time limit:
# a fresh one took 15.6 s to scan alone in the guest, longer beside another test, which is how a
# 15-second live rdmasrc window once gave no frame at all (issue 43, defect 12).
gst_ready() {
  flock "$GST_REGISTRY.lock" gst-inspect-1.0 rdmasrc > /dev/null || fail "gst-inspect-1.0 does not find rdmasrc in $GST_PLUGIN_PATH"
}
server_pid=
server_log=
port=
cleanup_hooks=()
cleanup() {
  local rc=$?
  for hook in "${cleanup_hooks[@]}"; do eval "$hook" || true; done
  # A server a hook already stopped is no failure (an && list that fails here would be the exit status).
  if [[ -n $server_pid ]]; then kill -KILL "$server_pid" 2>/dev/null || true; fi
  if [[ $rc -ne 0 && -n $server_log && -f $server_log ]]; then
    echo "--- server log (last 40 lines)"; tail -n 40 "$server_log"
  fi
  rm -rf "$work"
}
trap cleanup EXIT
# host_media NAME: sets $media to a new media directory on the host's disk (the build tree), for a
# test that serves one of the test_data fixture's large files: they are hard-linked in (the same
# filesystem), since vod-server skips a symlink that leaves its media directory. Removed at the end.
host_media() {
  media=$(mktemp -d "$build/test-data/$1.XXXXXX") || fail "cannot make a media directory in $build/test-data"
  cleanup_hooks+=("rm -rf '$media'")
}
step() { echo "--- [${SECONDS}s] $*"; }  # with the seconds since the test began: where its time goes
pass() { echo "PASS: [${SECONDS}s] $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }  # stderr: also seen from inside $(...) and > /dev/null

# start_server MEDIA_DIR [vod-server options...]: starts vod-server on a free port and waits for it
# (an empty MEDIA_DIR: no --media-dir, for a server of --origin or of live channels only).
start_server() {
  local dir=$1; shift
  port=${VOD_TEST_PORT:-$((20000 + RANDOM % 20000))}
  server_log=$work/server-$port.log
  : > "$server_log"  # emptied here: the child's redirection may come after the wait below has read a restarted server's old log
  "$server_bin" ${dir:+--media-dir "$dir"} --bind "$addr" --port "$port" "$@" 2> "$server_log" &
  server_pid=$!
  # 300 s: a start that loads (and hashes) the 1.1 GB movie of vod_get_test.sh took 150 s beside
  # another test under TCG; a bound by the clock, not by rounds whose length the load decides.
  local deadline=$((SECONDS + 300))
  while ((SECONDS < deadline)); do
    grep -q 'listening on' "$server_log" && return 0
    kill -0 "$server_pid" 2>/dev/null || { cat "$server_log"; fail "vod-server exited while starting"; }
    sleep 0.1
  done
  fail "vod-server did not listen within 300 s: $(tail -n 3 "$server_log")"
}

# crash_and_restart_server DIR [ARGS...]: SIGKILL the server, then start it again on the same port
# (the test exports VOD_TEST_PORT for that): clients see a crash, not a drain.
crash_and_restart_server() {
  kill -KILL "$server_pid"; wait "$server_pid" 2>/dev/null || true
  server_pid=
  sleep 1
  start_server "$@"
}

# stop_server: SIGTERM, and the server must exit 0. A server with clients still connected drains them
# first (--drain-seconds): the time it took is said when it is long, since a test that leaves a
# proxy or a mount connected pays for it here.
stop_server() {
  local rc=0 started=$SECONDS
  kill -TERM "$server_pid"
  wait "$server_pid" || rc=$?
  server_pid=
  [[ $rc -eq 0 ]] || fail "vod-server exited $rc after SIGTERM"
  # Every QP drained by its count of outstanding work (cm::QpDrain), on rxe and siw alike: none fell
  # back to the time limit.
  if grep -q "did not flush within" "$server_log"; then
    fail "a QP's drain fell back to its time limit: $(grep -m1 'did not flush within' "$server_log")"
  fi
  ((SECONDS - started < 3)) || echo "--- [${SECONDS}s] the server took $((SECONDS - started)) s to stop (clients still connected drained)"
}

server_cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# live_viewing LOG: waits (at most 60 s) until the live viewer logging to LOG (--log-level info) has
# opened its channel. A step that stops a viewer for longer than the ring must stop one that is
# reading: in a loaded guest a viewer's start took 6 s once, and a stop during it proved nothing.
live_viewing() {
  for _ in $(seq 600); do grep -q "live channel '.*' on .*: ring of" "$1" && return 0; sleep 0.1; done
  fail "the live viewer logging to $1 did not open its channel within 60 s: $(tail -n 2 "$1")"
}
uri() { echo "rdma://$addr:$port${1:+/$1}"; }

# vlc_remux SOURCE OUT_NAME LOG [cvlc options...]: VLC plays SOURCE as nobody (VLC refuses root)
# and remuxes it with --sout into $vlc_home/OUT_NAME (TS), a directory nobody may write; 120 s at
# most. With VLC_SECONDS, VLC gets SIGINT after that many seconds (it closes the file and exits):
# --run-time does not end a live stream's remux (it ran for two minutes once).
vlc_home=
vlc_remux() {
  local src=$1 name=$2 log=$3; shift 3
  if [[ -z $vlc_home ]]; then
    vlc_home=$(mktemp -d)  # beside $work, which nobody cannot enter
    chown nobody "$vlc_home"
    cleanup_hooks+=("rm -rf $vlc_home")
  fi
  local limit=(120)
  [[ -n ${VLC_SECONDS:-} ]] && limit=(-s INT -k 10 "$VLC_SECONDS")
  HOME=$vlc_home timeout "${limit[@]}" setpriv --reuid=nobody --regid=nogroup --clear-groups \
    cvlc --play-and-exit --vout=dummy --aout=dummy "$@" "$src" --sout "#std{access=file,mux=ts,dst=$vlc_home/$name}" > "$log" 2>&1
}
# framecrc_all [--decode N] FILE...: one ffmpeg reads every FILE and writes FILE.packets, a framecrc
# of its first video stream's packets (a line each; a keyframe's line has no "F=" field), and for
# the first N files (all by default) FILE.frames, a framecrc of the decoded frames (a line each).
# The errors of all of them go to $work/framecrc.errors. Under TCG a player's start costs a few
# seconds, more than decoding seconds of video: twenty recordings checked by one process instead of
# twenty saved most of a minute of a serial test.
framecrc_all() {
  local decode=$# n=0 f inputs=() outputs=()
  [[ $1 == --decode ]] && { decode=$2; shift 2; }
  for f in "$@"; do
    inputs+=(-i "$f")
    outputs+=(-map "$n:v:0" -c copy -copyinkf -f framecrc "$f.packets")  # -copyinkf: from the first packet, key or not
    ((n < decode)) && outputs+=(-map "$n:v:0" -f framecrc "$f.frames")
    n=$((n + 1))
  done
  ffmpeg -hide_banner -nostdin -v error -y "${inputs[@]}" "${outputs[@]}" 2> "$work/framecrc.errors" || true
}
# framecrc_lines FILE: its data lines (a framecrc's lines that are not comments)
framecrc_lines() { grep -vc '^#' "$1" 2>/dev/null || true; }
# video_frames FILE: the video frames ffprobe decodes in FILE (empty when none)
video_frames() { { ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$1" 2>/dev/null || true; } | head -n 1; }  # never fails: callers check the count and say why

expect() {  # expect LABEL EXIT PATTERN COMMAND...: exit status and output must match
  local label=$1 want=$2 pattern=$3; shift 3
  local rc=0 out
  out=$("$@" 2>&1) || rc=$?
  echo "$out" | sed 's/^/    /'
  [[ $rc -eq $want ]] || fail "$label: exit $rc, expected $want"
  grep -q -- "$pattern" <<< "$out" || fail "$label: output lacks '$pattern'"
  pass "$label"
}

# clients_byte_exact RANGE_FILE FIRST LAST MOUNT_FILE [vod-proxy options...]: every client on
# libvodclient against the server at $(uri): vod-proxy's Range FIRST-LAST of RANGE_FILE, rdmasrc's
# test-480p-60s.mp4 and MOUNT_FILE read through vod-mount, each byte-identical to $media's copy.
clients_byte_exact() {
  local range_file=$1 first=$2 last=$3 mount_file=$4; shift 4
  local http_port=$((port + 2000)) proxy_pid mnt
  "$build/proxy/vod-proxy" --server "$(uri)" --listen "127.0.0.1:$http_port" "$@" 2> "$work/proxy.log" &
  proxy_pid=$!
  cleanup_hooks+=("kill $proxy_pid 2>/dev/null")
  for _ in $(seq 600); do curl -s -o /dev/null "http://127.0.0.1:$http_port/" && break; sleep 0.1; done
  curl -s -r "$first-$last" -o "$work/range" "http://127.0.0.1:$http_port/movies/$range_file" || fail "curl through vod-proxy failed: $(tail -3 "$work/proxy.log")"
  dd if="$media/$range_file" iflag=skip_bytes,count_bytes skip="$first" count=$((last - first + 1)) status=none | cmp - "$work/range" ||
    fail "vod-proxy's Range $first-$last of $range_file differs"
  kill "$proxy_pid"; wait "$proxy_pid" 2>/dev/null || true
  gst-launch-1.0 -q rdmasrc uri="$(uri test-480p-60s.mp4)" ! filesink location="$work/gst.mp4" > "$work/gst.log" 2>&1 ||
    fail "rdmasrc failed: $(tail -3 "$work/gst.log")"
  cmp "$media/test-480p-60s.mp4" "$work/gst.mp4" || fail "rdmasrc delivered other bytes than test-480p-60s.mp4"
  mnt=$(mktemp -d /tmp/vod-mnt.XXXXXX)
  cleanup_hooks+=("fusermount3 -u -z $mnt 2>/dev/null; rmdir $mnt")
  "$build/mount/vod-mount" "$(uri)" "$mnt" --log-file "$work/mount.log" || fail "vod-mount exited $?"
  cmp "$media/$mount_file" "$mnt/$mount_file" || fail "$mount_file through vod-mount differs"
  fusermount3 -u "$mnt"
}
