#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# An edge that fills from an HTTP origin (vod-server --origin), natively over Write-Record (no RDMA
# device: --no-rdma), with a real nginx as the origin. nginx's access log says what the origin sent.
#  - The library is listed from nginx's JSON autoindex (a folder included). The MP4 and the Matroska
#    movie are indexed from their containers' own indexes, having fetched their headers only (under
#    1 MiB each of movies of 7.5 and 0.8 MB); every scan request is a byte range.
#  - An MPEG-TS movie (no index of its own) is indexed on its first use, from the same fills as its
#    viewer: the origin sends its bytes once for both.
#  - Eight concurrent gets of one movie from an empty cache are byte-exact, and the origin sent each
#    byte of it once: one 206 per segment, the ranges disjoint, their sum the movie's size.
#  - An object replaced with other bytes of the same size is never spliced: a get that began on the
#    old version stops (or delivers the old bytes only), and the next get reads the new one, exactly.
#  - With the origin killed, a get of an object not resident fails within 30 s naming the origin,
#    and the server stays up.
command -v nginx > /dev/null || { echo "SKIP: nginx is not installed (scripts/install-deps.sh installs nginx-light)"; exit 77; }
source "$(dirname "$0")/test_lib.sh"  # $work, $pids, cleanup, step/pass/fail
source "$(dirname "$0")/../test_media.sh"

chmod 755 "$work"  # nginx's worker (nobody, when started as root) reads the origin below it
mkdir -p "$work/origin/Films" "$work/nginx"
cp "$test_media/test-480p-60s.mp4" "$work/origin/Films/"
cp "$test_media/test-240p-20s.mkv" "$test_media/test-240p-20s.ts" "$test_media/test-480p-60s.ts" "$work/origin/"
cp "$test_media/test-480p-60s.mp4" "$work/origin/Films/replaced.mp4"  # replaced below, while partly resident
http_port=$(free_port) udp_port=$(free_port) rdma_port=$(free_port)
cat > "$work/nginx/nginx.conf" << CONF
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 256; }
http {
  log_format fills '\$uri "\$http_range" \$status \$body_bytes_sent';
  access_log $work/access.log fills;
  types { video/mp2t ts; video/mp4 mp4; }
  server { listen 127.0.0.1:$http_port; root $work/origin; location / { autoindex on; autoindex_format json; } }
}
CONF
nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" 2> "$work/nginx-start.log" &
nginx_pid=$!
pids+=("$nginx_pid")
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$http_port/" > /dev/null && break; sleep 0.1; done
: > "$work/access.log"

step "an edge of that origin"
"$build/server/vod-server" --no-rdma --bind 127.0.0.1 --port "$rdma_port" --udp-port "$udp_port" --origin "http://127.0.0.1:$http_port/" \
  --cache-size 64M --segment-size 1M --state-dir "$work/state" --origin-rescan 0 2> "$work/server.log" &
server=$!
pids+=("$server")
for _ in $(seq 100); do grep -q 'listening on' "$work/server.log" && break; sleep 0.1; done
grep -q 'listening on' "$work/server.log" || fail "the edge did not start"
client() { "$build/client/vod-client" "$@" --transport udp --udp-port "$udp_port" --connect-timeout 3; }
get() { client get "$@" --quiet; }
uri="rdma://127.0.0.1:$rdma_port"
list=$(client list "$uri")
for m in Films/test-480p-60s.mp4 test-240p-20s.mkv test-240p-20s.ts; do grep -qF "$m" <<< "$list" || fail "$m is not listed: $list"; done
pass "the origin's library, a folder included, is listed"

fetched() { awk -v u="/$1" '$1 == u {s += $NF} END {print s + 0}' "$work/access.log"; }
for m in Films/test-480p-60s.mp4 test-240p-20s.mkv; do
  grep -F "$m: " "$work/server.log" | grep -q "keyframes from the container's own index" || fail "$m was not indexed from its container"
  bytes=$(fetched "$m") size=$(stat -c %s "$work/origin/$m")
  ((bytes <= 1024 * 1024 && bytes < size)) || fail "indexing $m fetched $bytes of its $size bytes"
  echo "$m: $bytes of $size bytes fetched to probe and index it"
done
if awk '$2 == "\"\""' "$work/access.log" | grep -v '^/ \|/ "' | grep -q .; then fail "a scan request of an object was not a Range request"; fi
pass "MP4 and Matroska indexed from their own indexes, with their headers fetched only"

step "an MPEG-TS movie is indexed on its first use, from the fills its viewer gets"
ts=test-480p-60s.ts
ts_size=$(stat -c %s "$work/origin/$ts")
probed=$(fetched "$ts")
((probed <= 1024 * 1024)) || fail "listing $ts fetched $probed bytes of it"
sleep 1
[[ $(fetched "$ts") -eq $probed ]] || fail "$ts was read after start before anyone asked for it"
get "$uri/$ts" -o "$work/ts.out" 2> "$work/ts.log" || fail "the get of $ts failed"
cmp "$work/ts.out" "$work/origin/$ts" || fail "$ts differs"
for _ in $(seq 100); do grep -q "index of $ts ready" "$work/server.log" && break; sleep 0.1; done
grep "index of $ts ready" "$work/server.log" | grep -q " [1-9][0-9]* keyframes" || fail "$ts was not indexed on its first use"
filled=$(($(fetched "$ts") - probed))
[[ $filled -eq $ts_size ]] || fail "the get and the index of $ts fetched $filled bytes of its $ts_size"
pass "$ts indexed on its first use; the get and the index fetched its $ts_size bytes once"

step "eight concurrent gets of one movie from an empty cache"
movie=Films/test-480p-60s.mp4
size=$(stat -c %s "$work/origin/$movie")
: > "$work/access.log"
getters=()
for i in $(seq 8); do get "$uri/$movie" -o "$work/get-$i.mp4" 2> "$work/get-$i.log" & getters+=($!); done
for g in "${getters[@]}"; do wait "$g" || fail "a concurrent get failed"; done
for i in $(seq 8); do cmp "$work/get-$i.mp4" "$work/origin/$movie" || fail "get $i differs"; done
sent=$(fetched "$movie")
ranges=$(awk -v u="/$movie" '$1 == u {print $2}' "$work/access.log" | sort)
[[ $sent -eq $size ]] || fail "the origin sent $sent bytes for a movie of $size"
[[ -z $(uniq -d <<< "$ranges") ]] || fail "a range was fetched twice: $(uniq -d <<< "$ranges")"
awk -v u="/$movie" '$1 == u && $3 != 206 {bad = 1} END {exit bad}' "$work/access.log" || fail "a fill was not a 206"
pass "8 gets byte-exact; the origin sent $sent bytes for $size ($(wc -l <<< "$ranges") ranges, each once)"

step "an object replaced with other bytes of the same size"
movie=Films/replaced.mp4
get "$uri/$movie" -r 0-2097151 -o "$work/part.bin" 2> "$work/part.log" || fail "the partial get failed"
cp "$work/origin/$movie" "$work/old.mp4"
python3 - "$work/origin/$movie" << 'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
for i in range(0, len(b), 4096): b[i] ^= 0xff
open(p + '.new', 'wb').write(b)
PY
touch -d '+1 min' "$work/origin/$movie.new"  # another ETag, whatever the clock's resolution
mv "$work/origin/$movie.new" "$work/origin/$movie"
rc=0
get "$uri/$movie" -o "$work/after.mp4" 2> "$work/after.log" || rc=$?
got=$(stat -c %s "$work/after.mp4" 2> /dev/null || echo 0)
cmp -n "$got" "$work/after.mp4" "$work/old.mp4" || fail "the get after the change delivered bytes of the new version after the old"
if ((rc == 0)); then [[ $got -eq $size ]] || fail "a get that succeeded wrote $got bytes"; else grep -q "changed at the server's origin" "$work/after.log" || fail "the get stopped without saying the movie changed: $(tail -1 "$work/after.log")"; fi
grep -q "changed at the origin" "$work/server.log" || fail "the edge did not see the change"
for _ in $(seq 50); do
  get "$uri/$movie" -o "$work/new.mp4" 2> "$work/new.log" && cmp -s "$work/new.mp4" "$work/origin/$movie" && break
  sleep 0.2
done
cmp "$work/new.mp4" "$work/origin/$movie" || fail "the new version is not served after the change"
pass "the change stopped the old version's get after $got bytes of it (exit $rc); the new version is served, exactly"

step "the origin killed"
kill -KILL $(pgrep -P "$nginx_pid") "$nginx_pid"  # the workers too: they outlive a killed master, and serve on
wait "$nginx_pid" 2> /dev/null || true
start=$SECONDS
rc=0
timeout 60 "$build/client/vod-client" get "$uri/test-240p-20s.mkv" -o "$work/down.mkv" --transport udp --udp-port "$udp_port" --quiet \
  --connect-timeout 3 2> "$work/down.log" || rc=$?
took=$((SECONDS - start))
((rc != 0)) || fail "a get of an object not resident succeeded with the origin dead"
grep -q "origin" "$work/down.log" || fail "the error does not name the origin: $(tail -1 "$work/down.log")"
((took <= 30)) || fail "the get took $took s to fail"
kill -0 "$server" || fail "the edge died"
client list "$uri" > /dev/null || fail "the edge no longer answers"
pass "with the origin dead a get failed in $took s: $(tail -1 "$work/down.log" | cut -c1-160)"
