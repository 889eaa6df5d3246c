#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# An edge of an HTTP origin over real rdma-core, with access tokens (vod-server --origin
# --auth-secret): nginx in the guest is the origin, on loopback, its access log counting what it
# sent; the clients Read the edge's segment cache one-sided.
#  - four concurrent gets with a token for the movie are byte-exact, and the origin sent the movie
#    once; a token for another movie is refused;
#  - the MPEG-TS movie is indexed on its first use, and a play from 30 s starts at ffprobe's keyframe;
#  - with the origin killed, a get of a movie not resident fails within 30 s naming the origin, and
#    the edge goes on serving what is resident.
source "$(dirname "$0")/vod_test_lib.sh"
command -v nginx > /dev/null || { echo "SKIP: nginx is not installed (scripts/install-deps.sh installs nginx-light)"; exit 77; }
chmod 755 "$work"  # nginx's worker (nobody) reads the origin below it
origin=$work/origin
mkdir -p "$origin/Films" "$work/nginx"
cp "$test_media/test-480p-60s.mp4" "$origin/Films/"
cp "$test_media/test-480p-60s.ts" "$test_media/test-240p-20s.mkv" "$origin/"
http_port=$(free_port)
cat > "$work/nginx/nginx.conf" << CONF
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 256; }
http {
  log_format fills '\$uri "\$http_range" \$status \$body_bytes_sent';
  access_log $work/access.log fills;
  server { listen 127.0.0.1:$http_port; root $origin; location / { autoindex on; autoindex_format json; } }
}
CONF
nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" 2> "$work/nginx/start.log" &
nginx_pid=$!
cleanup_hooks+=('kill -KILL $(pgrep -P "$nginx_pid") "$nginx_pid" 2> /dev/null')
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$http_port/" > /dev/null && break; sleep 0.1; done
keys=$work/keys
(umask 077 && printf '1 %s\n' "$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" > "$keys")
mint() { "$build/server/vod-token" --secret "$keys" "$@"; }
fetched() { awk -v u="/$1" '$1 == u { s += $NF } END { print s + 0 }' "$work/access.log"; }

step "an edge of the origin, with tokens"
start_server "" --origin "http://127.0.0.1:$http_port/" --cache-size 64M --segment-size 1M --state-dir "$work/state" \
  --origin-rescan 0 --auth-secret "$keys"
movie=Films/test-480p-60s.mp4
size=$(stat -c %s "$origin/$movie")
token=$(mint --movie "$movie" --ttl 10m)
before=$(fetched "$movie")
getters=()
for i in 1 2 3 4; do "$client_bin" get "$(uri "$movie")?token=$token" -o "$work/get-$i" -q 2> "$work/get-$i.log" & getters+=($!); done
for g in "${getters[@]}"; do wait "$g" || fail "a get over RDMA failed"; done
for i in 1 2 3 4; do cmp "$work/get-$i" "$origin/$movie" || fail "get $i differs"; done
sent=$(($(fetched "$movie") - before))
[[ $sent -eq $size ]] || fail "the origin sent $sent bytes for the $size of $movie"
expect "a token for another movie" 1 "unauthorized: out of scope" "$client_bin" get "$(uri test-480p-60s.ts)?token=$token" -o "$work/x"
pass "4 gets with a token byte-exact over RDMA; the origin sent the movie's $size bytes once; another movie refused"

step "MPEG-TS indexed on first use; a play from 30 s"
ts=test-480p-60s.ts
ts_token=$(mint --movie "$ts" --ttl 10m)
"$client_bin" get "$(uri "$ts")?token=$ts_token" -o "$work/ts.out" -q || fail "the get of $ts failed"
cmp "$work/ts.out" "$origin/$ts" || fail "$ts differs"
for _ in $(seq 300); do grep -q "index of $ts ready" "$server_log" && break; sleep 0.1; done
grep -q "index of $ts ready" "$server_log" || fail "$ts was not indexed on its first use"
[[ $(fetched "$ts") -le $(($(stat -c %s "$origin/$ts") + 1024 * 1024)) ]] || fail "the origin sent $(fetched "$ts") bytes of $ts"
timeout 120 "$client_bin" play "$(uri "$ts")?token=$ts_token" --start 30 --unpaced > "$work/play.ts" 2> "$work/play.log" || fail "the play from 30 s failed: $(tail -n 1 "$work/play.log")"
pos=$(cat "$(expected test-480p-60s.ts.keyframe-30s)")  # ffprobe's last keyframe at or before 30 s, found natively
tail -c +$((pos + 1)) "$origin/$ts" | cmp - "$work/play.ts" || fail "play --start 30 did not start at the keyframe the index gives (byte $pos)"
pass "$ts indexed on its first use; play --start 30 starts at byte $pos, ffprobe's keyframe"

step "the origin killed"
kill -KILL $(pgrep -P "$nginx_pid") "$nginx_pid"
wait "$nginx_pid" 2> /dev/null || true
start=$SECONDS
expect "a movie not resident" 7 "origin" timeout 60 "$client_bin" get "$(uri test-240p-20s.mkv)?token=$(mint --movie test-240p-20s.mkv)" -o "$work/x" -q
took=$((SECONDS - start))
((took <= 30)) || fail "the get took $took s to fail"
"$client_bin" get "$(uri "$movie")?token=$token" -o "$work/again" -q || fail "a resident movie is no longer served"
cmp "$work/again" "$origin/$movie" || fail "the resident movie differs"
pass "with the origin dead a get failed in $took s naming it; the resident movie is still served, byte-exact"
