#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A fleet's membership, natively (no RDMA device: vod-server --no-rdma serves Write-Record over UDP,
# and clients read with --transport udp): a real etcd on loopback, servers on 127.0.0.x.
#  - a server registers its record (address, weight, generation, live channels) under a lease;
#  - a fleet URI reads each movie from the member the placement names, byte-exact, a movie in a
#    folder too, and a record that spreads a movie in a folder is read by the client;
#  - SIGTERM withdraws the record at once; kill -9 loses it within the lease's TTL;
#  - a server started while etcd is down serves, and registers when etcd comes;
#  - etcd restarted: the members are listed again;
#  - bounded loads: 20 viewers of one movie in one bench process fill its first member to its bound
#    and spill over to the other (all 20 on the first with ?epsilon=0), and a member without RDMA
#    puts its record again with the UDP sessions it serves;
#  - a live channel's DVR window through a fleet URI (--start -4): the viewer stays with the member
#    whose window it reads, and what it writes decodes.
source "$(dirname "$0")/fleet_lib.sh"

mkdir -p "$work/media"
head -c $((3 * 1024 * 1024 + 5)) /dev/urandom > "$work/media/one.bin"
head -c $((2 * 1024 * 1024 + 9)) /dev/urandom > "$work/media/two.bin"
nested="Films/Läder (2024)/deep #1.bin"  # a movie in a folder, spread by server 3's record
nested_uri="Films/L%C3%A4der%20(2024)/deep%20%231.bin"
mkdir -p "$work/media/Films/Läder (2024)"
head -c $((1024 * 1024 + 3)) /dev/urandom > "$work/media/$nested"
# A title (two renditions with keyframes at the same times): the fleet's merged catalog lists it.
mkdir -p "$work/media/Show"
for r in 160:hi 96:lo; do
  ffmpeg -v error -f lavfi -i "testsrc2=size=${r%%:*}x$((${r%%:*} * 9 / 16)):rate=25" -t 4 -c:v libx264 -preset ultrafast -g 25 -keyint_min 25 \
    -sc_threshold 0 "$work/media/Show/Show - ${r#*:}.mp4"
done
udp_port=$(free_port) rdma_port=$(free_port)
fleet="etcd://127.0.0.1:$etcd_port/membership"

declare -A server_pid
media=$work/media cluster=$fleet extra=()
start_server() {  # start_server N [TTL]: vod-server on 127.0.0.N, in the fleet, with a lease of TTL seconds (2); $media, $cluster, $extra
  local n=$1 ttl=${2:-2}
  : > "$work/server-$n.log"  # emptied here: the child's redirection may come after the wait below has read a restarted server's old log
  "$build/server/vod-server" --no-rdma --media-dir "$media" --bind "127.0.0.$n" --port "$rdma_port" --udp-port "$udp_port" \
    --cluster "$cluster" --cluster-ttl "$ttl" --cluster-weight "$n" --live "cam$n=file:/dev/null" "${extra[@]}" 2> "$work/server-$n.log" &
  server_pid[$n]=$!
  pids+=("${server_pid[$n]}")
  for _ in $(seq 100); do grep -q 'listening on' "$work/server-$n.log" && return 0; sleep 0.1; done
  fail "server $n did not start"
}
prefix=membership
record() { etcdctl get --print-value-only "/$prefix/members/127.0.0.$1:$rdma_port"; }
wait_record() {  # wait_record N present|absent SECONDS
  local deadline=$((SECONDS + $3))
  while ((SECONDS <= deadline)); do
    if [[ -n $(record "$1") ]]; then [[ $2 == present ]] && return 0; else [[ $2 == absent ]] && return 0; fi
    sleep 0.1
  done
  fail "member 127.0.0.$1 is not $2 after $3 s"
}

step "a server started while etcd is down serves, then registers"
start_server 2
grep -q "cannot keep this server's record in etcd" "$work/server-2.log" || sleep 1
grep -q "cannot keep this server's record in etcd" "$work/server-2.log" || fail "no warning about the unreachable etcd"
kill -0 "${server_pid[2]}" || fail "the server stopped without etcd"
start_etcd
wait_record 2 present 10
pass "registered once etcd came up"

step "records say what clients need"
extra=(--cluster-spread "$nested=2")
start_server 3 30  # a long lease: its SIGTERM below must withdraw long before the lease could expire
extra=()
wait_record 3 present 10
json=$(record 3)
echo "    $json"
python3 - "$json" "$rdma_port" "$nested" << 'PY'
import json, sys
r = json.loads(sys.argv[1]); port = int(sys.argv[2])
assert r["host"] == "127.0.0.3" and r["port"] == port, r
assert r["weight"] == 3 and r["catalog_generation"] == 1 and r["live"] == ["cam3"], r
assert r["spread"] == {sys.argv[3]: 2}, r
assert r["load"]["estimate"] and r["load"]["connections"] == 0, r
PY
pass "address, weight, generation, live channels and the labelled load estimate"

step "a fleet URI reads each movie from where the placement says"
for movie in one.bin two.bin; do
  first=$("$build/client/vod-client" cluster "$fleet" "$movie" 2> /dev/null | awk '/ k=/ { sub("first=", "", $3); print $3 }')
  "$build/client/vod-client" get "rdma+etcd://127.0.0.1:$etcd_port/$movie?prefix=/membership" -o "$work/$movie" --transport udp --udp-port "$udp_port" \
    --quiet --log-level info 2> "$work/get-$movie.log" || fail "get $movie failed: $(tail -3 "$work/get-$movie.log")"
  grep -q "'$movie' on $first (1st" "$work/get-$movie.log" || fail "$movie was not read from $first: $(grep cluster "$work/get-$movie.log")"
  cmp "$work/media/$movie" "$work/$movie" || fail "$movie differs"
done
spread=$("$build/client/vod-client" cluster "$fleet" "$nested" 2> /dev/null | grep -F "$nested k=") || fail "vod-client cluster does not place '$nested'"
[[ $spread == "$nested k=2 "* ]] || fail "the record's spread of '$nested' was not read: $spread"
"$build/client/vod-client" get "rdma+etcd://127.0.0.1:$etcd_port/$nested_uri?prefix=/membership" -o "$work/nested.bin" --transport udp \
  --udp-port "$udp_port" --quiet 2> "$work/get-nested.log" || fail "get '$nested' failed: $(tail -3 "$work/get-nested.log")"
cmp "$work/media/$nested" "$work/nested.bin" || fail "'$nested' differs"
pass "both movies byte-exact, each from its first member; '$nested' spread over k=2 by the record, byte-exact"
"$build/client/vod-client" list "rdma+etcd://127.0.0.1:$etcd_port/?prefix=/membership" --transport udp --udp-port "$udp_port" > "$work/fleet-list" 2>&1 ||
  fail "list through the fleet: $(tail -3 "$work/fleet-list")"
grep -q '^1 titles$' "$work/fleet-list" && grep -Eq '^Show +hi lo( |$)' "$work/fleet-list" || fail "the fleet's catalog lists no title: $(cat "$work/fleet-list")"
pass "the fleet's merged catalog lists the title 'Show' (hi, lo)"

step "bounded loads: 20 viewers of one movie in one process spread past its first member; records count UDP sessions"
# Weights 2 and 3: the movie's first member takes viewers up to ceil(1.15 x 20 x its weight / 5)
# (10 or 14) and the rest go to the other. The bench process counts its own opens, so the bound
# holds before the records show them; with epsilon=0 (no bound) all 20 go to the first.
# Its first member by the rendezvous order alone (--epsilon 0): the UDP sessions of the gets above
# linger in the records, and would move the bounded order's first.
movie_first=$("$build/client/vod-client" cluster "$fleet" --epsilon 0 one.bin 2> /dev/null | awk '/ k=/ { sub("first=", "", $3); print $3 }')
first_n=${movie_first%%:*}; first_n=${first_n##*.}  # 127.0.0.N, of weight N
placed() {  # placed EPSILON: the bench's viewers per member, "member count" lines (small rings: 20 fit RLIMIT_MEMLOCK's 8 MiB)
  "$build/client/vod-client" bench "rdma+etcd://127.0.0.1:$etcd_port/one.bin?prefix=/membership&epsilon=$1" --clients 20 --duration 3 \
    --rate 2 --chunk-kib 64 --readahead-kib 64 --depth 2 --transport udp --udp-port "$udp_port" --log-level info > "$work/bench-$1.out" 2> "$work/bench-$1.log" &
  local bench=$! sessions=0
  for _ in $(seq 40); do  # while it plays, the first member's record shows its UDP sessions (put at most once a second)
    sessions=$(record "$first_n" | python3 -c 'import json,sys; print(json.load(sys.stdin)["load"]["udp_sessions"])' 2> /dev/null || echo 0)
    ((sessions > 0)) && break
    sleep 0.1
  done
  wait "$bench" || fail "bench with epsilon=$1: $(grep -v ' INFO ' "$work/bench-$1.log" | tail -3) $(tail -3 "$work/bench-$1.out")"
  ((sessions > 0)) || fail "the record of ${movie_first} never showed a UDP session while 20 viewers played"
  grep -o "'one.bin' on [0-9.:]* (1st" "$work/bench-$1.log" | awk '{ print $3 }' | sort | uniq -c
}
placed 0.15 > "$work/placed"
cat "$work/placed"
bound=$(( (115 * 20 * first_n + 500 - 1) / 500 ))
first_count=$(awk -v m="$movie_first" '$2 == m { print $1 }' "$work/placed")
total=$(awk '{ n += $1 } END { print n }' "$work/placed")
[[ $total -eq 20 ]] || fail "20 viewers, $total placed at their first choice: $(cat "$work/placed")"
share=$((20 * first_n / 5))  # its share by weight
# At most its bound (one more for a record a second old), and about its share at least: the UDP
# sessions of the gets above linger in the records a while, and count, so it may fill sooner.
((first_count <= bound + 1 && first_count >= share - 3 && first_count < 20)) || fail "the first member $movie_first took ${first_count:-0} viewers, its bound is $bound"
placed 0 > "$work/unbounded"
[[ $(awk -v m="$movie_first" '$2 == m { print $1 }' "$work/unbounded") == 20 ]] || fail "with no bound, not all 20 on $movie_first: $(cat "$work/unbounded")"
pass "bounded loads: $first_count of 20 on $movie_first (its share $share, its bound $bound), the rest on the other; 20 there with no bound; the record counts UDP sessions"

step "SIGTERM withdraws at once; kill -9 drops out within the TTL"
# Bounds with room for a loaded machine (each took about a second here): the withdrawn record's
# lease had 30 s to run, and the killed one's 2 s lease expires in 2-3 s.
start=$SECONDS
kill -TERM "${server_pid[3]}"
wait_record 3 absent 10
withdrawn=$((SECONDS - start))
kill -KILL "${server_pid[2]}"
start=$SECONDS
wait_record 2 absent 15
pass "withdrawn ${withdrawn} s after SIGTERM (its lease had 30 s to run); gone $((SECONDS - start)) s after kill -9 (lease 2 s)"

step "etcd restarted: a member registers again"
start_server 4
wait_record 4 present 10
kill -KILL "$etcd_pid"; wait "$etcd_pid" 2> /dev/null || true
sleep 3  # past the lease: etcd may forget it
start_etcd
wait_record 4 present 15
kill -0 "${server_pid[4]}" || fail "the server stopped while etcd was down"
pass "the member is listed again after etcd's restart"

step "a 2 s lease is renewed every two thirds of a second, not in a loop"
# etcd's own count of renewals. Only member 4 holds a lease now: about 4-5 renewals in 3 s; the
# bug this guards against (a third of 2 s in whole seconds was 0) made thousands a second. A loaded
# machine renews later, never more often, so the bound cannot flake.
renewed() { curl -s "http://127.0.0.1:$etcd_port/metrics" | awk '/^etcd_debugging_lease_renewed_total / { printf "%d", $2 }'; }
# After etcd's restart above the member may still be backing off (up to 4 s): from its first renewal.
start_count=$(renewed)
for _ in $(seq 100); do (($(renewed) > start_count)) && break; sleep 0.1; done
before=$(renewed)
sleep 3
renewals=$(($(renewed) - before))
((renewals >= 1 && renewals <= 12)) || fail "$renewals renewals of a 2 s lease in 3 s (expected about 4)"
pass "$renewals renewals in 3 s"

step "SIGTERM exits within 2 s while etcd accepts and never answers"
start_server 5 30  # a long lease: calls of up to 2 s, and the revoke of a lease that is alive
wait_record 5 present 10
kill -STOP "$etcd_pid"  # its sockets still accept; nothing answers
sleep 1                  # the members' next calls are now waiting on it
for n in 4 5; do
  start=$(date +%s%N)
  kill -TERM "${server_pid[$n]}"
  # The design bound is 2 s (nothing to drain); 5 s leaves room for a loaded machine. Before the
  # fix a 2 s lease's calls had no timeout at all and the server never exited.
  for _ in $(seq 50); do kill -0 "${server_pid[$n]}" 2> /dev/null || break; sleep 0.1; done
  ms=$((($(date +%s%N) - start) / 1000000))
  kill -0 "${server_pid[$n]}" 2> /dev/null && { kill -CONT "$etcd_pid"; fail "member $n still runs 5 s after SIGTERM while etcd hangs"; }
  echo "    member $n (lease $( ((n == 4)) && echo 2 || echo 30) s) exited ${ms} ms after SIGTERM"
done
kill -CONT "$etcd_pid"
pass "both members exited while etcd hung"

step "members with other bytes under one name: a resume never joins two versions (content identity)"
# Two members list versions/movie.bin with the same size: all 0x00 on member 8 (loaded whole: its
# identity is hashed as it loads), all 0xFF on member 9 (from its segment cache: hashed after start,
# kept in its state directory). A paced get loses its member to kill -9 mid-transfer. Before issue
# 43 it resumed on the other one and exited 0 with a file of both.
size=$((4 * 1024 * 1024))
mkdir -p "$work/zeros" "$work/ones"
head -c "$size" /dev/zero > "$work/zeros/movie.bin"
head -c "$size" /dev/zero | tr '\0' '\377' > "$work/ones/movie.bin"
vfleet="etcd://127.0.0.1:$etcd_port/versions" prefix=versions
cluster=$vfleet media=$work/zeros extra=()
start_server 8 30
media=$work/ones extra=(--cache-size 32M --state-dir "$work/state-9")
start_server 9 30
wait_record 8 present 10
wait_record 9 present 10
for _ in $(seq 100); do grep -q 'content identity of movie.bin' "$work/server-9.log" && break; sleep 0.1; done
grep -q 'content identity of movie.bin: sha256:' "$work/server-9.log" || fail "member 9 logged no content identity: $(grep -m 3 cache "$work/server-9.log")"
ls "$work/state-9/digests/"*.rvcd > /dev/null 2>&1 || fail "member 9 kept no digest in its state directory"
paced_get() {  # paced_get OUT LOG: a get of versions/movie.bin at 4 Mbit/s that loses its first member to kill -9 after 1 MiB; its exit status
  local out=$1 log=$2 first
  first=$("$build/client/vod-client" cluster "$vfleet" movie.bin 2> /dev/null | awk '/ k=/ { sub("first=", "", $3); print $3 }')
  "$build/client/vod-client" get "rdma+etcd://127.0.0.1:$etcd_port/movie.bin?prefix=/versions" -o "$out" --transport udp --udp-port "$udp_port" \
    --udp-rate 4 --quiet --log-level info --connect-timeout 2 2> "$log" &
  local get=$!
  for _ in $(seq 200); do (($(stat -c %s "$out" 2> /dev/null || echo 0) >= 1024 * 1024)) && break; sleep 0.05; done
  killed=${first%%:*}
  killed=${killed##*.}
  kill -KILL "${server_pid[$killed]}"
  local rc=0
  wait "$get" || rc=$?
  return "$rc"
}
rc=0
paced_get "$work/spliced.bin" "$work/get-versions.log" || rc=$?
((rc != 0)) || fail "the get exited 0 after its member died and the other has other bytes"
grep -q "movie changed" "$work/get-versions.log" || fail "no 'movie changed': $(tail -n 3 "$work/get-versions.log")"
grep "movie changed" "$work/get-versions.log" | grep -q "127.0.0.8" && grep "movie changed" "$work/get-versions.log" | grep -q "127.0.0.9" ||
  fail "movie_changed does not name both members: $(grep "movie changed" "$work/get-versions.log")"
[[ $(od -An -v -tx1 "$work/spliced.bin" | tr -s ' \n' '\n' | grep -v '^$' | sort -u | wc -l) == 1 ]] ||
  fail "the output holds bytes of both versions: $(od -An -v -tx1 "$work/spliced.bin" | tr -s ' \n' '\n' | grep -v '^$' | sort | uniq -c | tr '\n' ' ')"
echo "    exit $rc after $(stat -c %s "$work/spliced.bin") bytes of one version: $(grep -o "movie changed.*" "$work/get-versions.log" | cut -c 1-220)"
# Now both members hold the 0xFF bytes (member 9 restarted: its identity from its state directory,
# at once): the same identity, so the same get resumes on the other member and ends byte-exact.
for n in 8 9; do kill -KILL "${server_pid[$n]}" 2> /dev/null || true; done
media=$work/ones extra=()
start_server 8 30
extra=(--cache-size 32M --state-dir "$work/state-9")
start_server 9 30
wait_record 8 present 10
wait_record 9 present 10
paced_get "$work/resumed.bin" "$work/get-resumed.log" || fail "a resume onto the same bytes failed: $(tail -n 3 "$work/get-resumed.log")"
cmp "$work/ones/movie.bin" "$work/resumed.bin" || fail "the resumed get differs"
grep -q "reconnected" "$work/get-resumed.log" || fail "the get did not resume on another member: $(grep -i -m 3 "cluster\|reconnect" "$work/get-resumed.log")"
pass "another version: exit $rc with 'movie changed' naming both members and one version's bytes; the same bytes: resumed and byte-exact"

step "a live channel's DVR window through a fleet URI: the viewer stays with the member whose window it reads"
for n in 8 9; do kill -KILL "${server_pid[$n]}" 2> /dev/null || true; done
ffmpeg -v error -f lavfi -i "testsrc2=size=160x90:rate=25" -t 20 -c:v libx264 -preset ultrafast -g 25 -keyint_min 25 -sc_threshold 0 \
  -f mpegts "$work/show.ts"
cluster="etcd://127.0.0.1:$etcd_port/dvr" prefix=dvr media=$work/zeros
for n in 10 11; do
  extra=(--live "show=file:$work/show.ts" --live-dvr 10s --live-dvr-dir "$work/dvr-$n" --segment-size 256K --live-dvr-cache 8M)
  start_server "$n" 30
done
extra=()
wait_record 10 present 10
wait_record 11 present 10
sleep 7  # each member's window holds more than the 4 s asked for
"$build/client/vod-client" get "rdma+etcd://127.0.0.1:$etcd_port/live/show?prefix=/dvr" --start -4 --duration 3 -o "$work/show-dvr.ts" \
  --transport udp --udp-port "$udp_port" --log-level info 2> "$work/get-dvr.log" || fail "the DVR get through the fleet failed: $(tail -n 3 "$work/get-dvr.log")"
member=$(sed -n 's/.*its DVR window on member \(127\.0\.0\.1[01]\):.*/\1/p' "$work/get-dvr.log")
[[ -n $member ]] || fail "the viewer did not say which member's window it reads: $(grep -m 3 'live/show' "$work/get-dvr.log")"
grep -q 'starting .* behind live' "$work/get-dvr.log" || fail "no start behind live: $(tail -n 3 "$work/get-dvr.log")"
frames=$({ ffprobe -v error -select_streams v:0 -show_entries frame=key_frame -of csv=p=0 "$work/show-dvr.ts" 2> "$work/show-dvr.err" || true; } | grep -c .)
errors=$(grep -v 'non monotonically increasing dts' "$work/show-dvr.err" || true)
[[ -z $errors ]] || fail "what the viewer wrote does not decode cleanly: $(head -n 3 <<< "$errors")"
((frames >= 50)) || fail "only $frames frames in 3 s of a 25 fps channel"
for n in 10 11; do kill -TERM "${server_pid[$n]}" 2> /dev/null || true; done
pass "4 s behind live through the fleet, on member $member's window alone: $frames frames decode cleanly"

step "etcd over TLS with client certificates and authentication (etcds://, --etcd-*): a member registers, a client reads through it; a certificate that does not verify and a wrong password are refused with the reason"
tls=$work/tls
mkdir -p "$tls"
(
  cd "$tls"
  quiet() { "$@" > /dev/null 2>&1 || { echo "FAIL: $*" >&2; exit 1; }; }
  quiet openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 1 -subj "/CN=rdma-vod test CA"
  quiet openssl req -newkey rsa:2048 -nodes -keyout etcd.key -out etcd.csr -subj "/CN=etcd"
  printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n' > server.ext
  quiet openssl x509 -req -in etcd.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out etcd.crt -days 1 -extfile server.ext
  # No CommonName: etcd refuses a client certificate with one on its JSON gateway (CVE-2018-16886);
  # the password decides who the client is.
  quiet openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj "/O=rdma-vod/OU=fleet member"
  printf 'extendedKeyUsage=clientAuth\n' > client.ext
  quiet openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out client.crt -days 1 -extfile client.ext
  quiet openssl req -x509 -newkey rsa:2048 -nodes -keyout other.key -out other.crt -days 1 -subj "/CN=another CA"
) || fail "openssl could not make the test certificates"
(umask 077; printf 's3cret-%s\n' "$RANDOM" > "$tls/password"; echo wrong > "$tls/wrong")
tls_port=$(free_port) tls_peer=$(free_port)
etcd --name s --data-dir "$work/etcd-tls" --listen-client-urls "https://127.0.0.1:$tls_port" --advertise-client-urls "https://127.0.0.1:$tls_port" \
  --listen-peer-urls "http://127.0.0.1:$tls_peer" --initial-advertise-peer-urls "http://127.0.0.1:$tls_peer" --initial-cluster "s=http://127.0.0.1:$tls_peer" \
  --cert-file "$tls/etcd.crt" --key-file "$tls/etcd.key" --client-cert-auth --trusted-ca-file "$tls/ca.crt" --auth-token-ttl 1 >> "$work/etcd-tls.log" 2>&1 &
pids+=($!)
tls_etcdctl() {
  ETCDCTL_API=3 command etcdctl --endpoints "https://127.0.0.1:$tls_port" --cacert "$tls/ca.crt" --cert "$tls/client.crt" --key "$tls/client.key" "$@"
}
for _ in $(seq 150); do tls_etcdctl endpoint health > /dev/null 2>&1 && break; sleep 0.2; done
tls_etcdctl endpoint health > /dev/null 2>&1 || fail "etcd over TLS did not come up: $(tail -n 3 "$work/etcd-tls.log")"
tls_etcdctl user add "root:$(cat "$tls/password")" > /dev/null || fail "etcdctl user add"
tls_etcdctl auth enable > /dev/null || fail "etcdctl auth enable"
secure=(--etcd-cacert "$tls/ca.crt" --etcd-cert "$tls/client.crt" --etcd-key "$tls/client.key" --etcd-user root --etcd-password-file "$tls/password")
: > "$work/server-7.log"
"$build/server/vod-server" --no-rdma --media-dir "$work/media" --bind 127.0.0.7 --port "$rdma_port" --udp-port "$udp_port" \
  --cluster "etcds://127.0.0.1:$tls_port/secure" --cluster-ttl 9 "${secure[@]}" 2> "$work/server-7.log" &
pids+=($!)
for _ in $(seq 100); do grep -q 'registered in' "$work/server-7.log" && break; sleep 0.1; done
grep -q 'registered in etcds://' "$work/server-7.log" || fail "the member did not register over TLS: $(grep -m 2 cluster "$work/server-7.log")"
[[ -n $(tls_etcdctl --user "root:$(cat "$tls/password")" get --print-value-only "/secure/members/127.0.0.7:$rdma_port") ]] ||
  fail "no record under /secure in etcd"
"$build/client/vod-client" get "rdma+etcds://127.0.0.1:$tls_port/one.bin?prefix=/secure" -o "$work/secure.bin" --transport udp --udp-port "$udp_port" \
  --quiet "${secure[@]}" 2> "$work/secure-get.log" || fail "a get through etcds:// failed: $(tail -n 3 "$work/secure-get.log")"
cmp "$work/media/one.bin" "$work/secure.bin" || fail "one.bin through etcds:// differs"
# rdmasrc takes the same as properties (etcd-cacert, etcd-cert, etcd-key, etcd-user, etcd-password-file).
GST_PLUGIN_PATH=$build/client/gst GST_REGISTRY=$work/gst-registry.bin timeout 60 gst-launch-1.0 -q \
  rdmasrc uri="rdma+etcds://127.0.0.1:$tls_port/one.bin?prefix=/secure" transport=udp udp-port="$udp_port" etcd-cacert="$tls/ca.crt" \
  etcd-cert="$tls/client.crt" etcd-key="$tls/client.key" etcd-user=root etcd-password-file="$tls/password" ! filesink location="$work/secure-gst.bin" \
  > "$work/secure-gst.log" 2>&1 || fail "rdmasrc through etcds:// failed: $(tail -n 3 "$work/secure-gst.log")"
cmp "$work/media/one.bin" "$work/secure-gst.bin" || fail "one.bin through rdmasrc and etcds:// differs"
refused() {  # refused WHAT EXPECTED OPTIONS...: vod-client cluster fails, saying EXPECTED
  local what=$1 expected=$2 rc=0
  shift 2
  VOD_CLUSTER_CACHE_DIR=$work/no-saved-list "$build/client/vod-client" cluster "etcds://127.0.0.1:$tls_port/secure" "$@" > /dev/null 2> "$work/refused.log" || rc=$?
  ((rc != 0)) && grep -qi "$expected" "$work/refused.log" || fail "$what: exit $rc: $(tail -n 2 "$work/refused.log")"
  echo "    $what: $(grep -io "$expected.*" "$work/refused.log" | head -n 1 | cut -c 1-150)"
}
refused "a CA that did not sign etcd's certificate" "certificate" --etcd-cacert "$tls/other.crt" --etcd-cert "$tls/client.crt" --etcd-key "$tls/client.key" \
  --etcd-user root --etcd-password-file "$tls/password"
refused "a wrong password" "authentication failed" --etcd-cacert "$tls/ca.crt" --etcd-cert "$tls/client.crt" --etcd-key "$tls/client.key" \
  --etcd-user root --etcd-password-file "$tls/wrong"
refused "no client certificate" "client certificate" --etcd-cacert "$tls/ca.crt" --etcd-user root --etcd-password-file "$tls/password"
# etcd's tokens live 1 s here (--auth-token-ttl 1); the member's keepalives come every 3 s, each
# after its token expired: it authenticates again and the lease lives on.
sleep 7
grep -q "cannot keep this server's record" "$work/server-7.log" && fail "the member lost etcd when its token expired: $(grep -m 1 "cannot keep" "$work/server-7.log")"
[[ -n $(tls_etcdctl --user "root:$(cat "$tls/password")" get --print-value-only "/secure/members/127.0.0.7:$rdma_port") ]] ||
  fail "the record went when the member's token expired"
pass "registered and read (vod-client, rdmasrc) over etcds:// with a client certificate and a password (kept across expired 1 s tokens); a foreign CA, a wrong password and a missing certificate refused"
