#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A fleet (docs/operations.md, "A fleet"): one etcd and three vod-servers on three addresses of the
# guest's RDMA link, registered with --cluster; clients name the fleet (rdma+etcd://).
#  1. 12 viewers of 6 movies land where the placement (vod-client cluster) says; all byte-exact.
#  2. kill -9 of the server with the most viewers mid-stream: each of them goes on from another
#     member, byte-exact. The gap from the kill to each viewer's reconnect is printed (a figure).
#  3. A fourth server joins: of 100 names about a quarter move, all of them to it, none elsewhere;
#     real opens go where the new placement says.
#  4. Hostile member records (garbage JSON, a huge weight, a bad address, a key that lies) are
#     ignored with a log line; opens still work.
#  5. etcd stops: a running viewer is untouched, and a new process opens from the member list
#     saved on disk, with a warning.
source "$(dirname "$0")/vod_test_lib.sh"
media=$work/media
mkdir -p "$media"
export VOD_CLUSTER_CACHE_DIR=$work/member-cache
movies=(fleet-a.bin fleet-b.bin fleet-c.bin fleet-d.bin fleet-e.bin fleet-f.bin)
for i in "${!movies[@]}"; do "$build/tests/rdma/make_pattern" $((12 * 1024 * 1024 + 77 * i)) $((i + 3)) "$media/${movies[$i]}"; done

# Members on addresses of their own where this is the guest (its link is ours to change); on a
# machine's own RDMA device, on ports of their own on one address.
step "members' addresses"
hosts=() ports=()
if [[ ${VOD_RDMA_GUEST:-} == 1 ]]; then
  dev=$(ip -o -4 addr show | awk -v a="$addr" '{ split($4, p, "/"); if (p[1] == a) print $2 }' | head -n 1)
  [[ -n $dev ]] || fail "no interface holds $addr"
  base=${addr%.*}
  for n in 2 3 4; do
    ip addr add "$base.$((n + 10))/24" dev "$dev" 2>/dev/null || true
    cleanup_hooks+=("ip addr del $base.$((n + 10))/24 dev $dev 2>/dev/null")
  done
  hosts=("$addr" "$base.12" "$base.13" "$base.14")
  p=$(free_port)
  ports=("$p" "$p" "$p" "$p")
else
  hosts=("$addr" "$addr" "$addr" "$addr")
  ports=("$(free_port)" "$(free_port)" "$(free_port)" "$(free_port)")
fi

step "etcd on loopback"
etcd_port=$(free_port) peer_port=$(free_port)
etcd --name fleet-test --data-dir "$work/etcd" --listen-client-urls "http://127.0.0.1:$etcd_port" \
  --advertise-client-urls "http://127.0.0.1:$etcd_port" --listen-peer-urls "http://127.0.0.1:$peer_port" \
  --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" --initial-cluster "fleet-test=http://127.0.0.1:$peer_port" > "$work/etcd.log" 2>&1 &
etcd_pid=$!
cleanup_hooks+=("kill -KILL $etcd_pid 2>/dev/null")
etcdctl() { ETCDCTL_API=3 command etcdctl --endpoints "127.0.0.1:$etcd_port" "$@"; }
for _ in $(seq 300); do etcdctl endpoint health > /dev/null 2>&1 && break; sleep 0.2; done
etcdctl endpoint health > /dev/null 2>&1 || { tail -5 "$work/etcd.log"; fail "etcd did not come up within 60 s"; }
fleet="etcd://127.0.0.1:$etcd_port/fleet-test"
# epsilon=0: this test checks the rendezvous order itself (placement, joins, failover to the next);
# bounded loads, which would spread its 12 viewers evenly, are fleet_membership's subject.
fleet_uri() { echo "rdma+etcd://127.0.0.1:$etcd_port/$1?prefix=/fleet-test&epsilon=0"; }

pids=()
start_member() {  # start_member N: vod-server N (0-3) in the fleet, with a 6 s lease (TCG delays keepalives)
  local n=$1 log=$work/member-$1.log
  : > "$log"  # emptied here: the child's redirection may come after the wait below has read a restarted member's old log
  "$server_bin" --media-dir "$media" --bind "${hosts[$n]}" --port "${ports[$n]}" --cluster "$fleet" --cluster-ttl 6 2> "$log" &
  pids[$n]=$!
  cleanup_hooks+=("kill -KILL ${pids[$n]} 2>/dev/null")
  for _ in $(seq 600); do
    grep -q 'registered in' "$log" && return 0
    kill -0 "${pids[$n]}" 2>/dev/null || { cat "$log"; fail "member $n exited while starting"; }
    sleep 0.1
  done
  fail "member $n did not register within 60 s: $(tail -3 "$log")"
}
member_id() { echo "${hosts[$1]}:${ports[$1]}"; }
members_listed() { "$client_bin" cluster "$fleet" 2>/dev/null | awk '/^MEMBER/ { on = 1; next } on && NF == 0 { exit } on { n++ } END { print n + 0 }'; }
wait_members() {  # wait_members COUNT: until etcd lists that many (leases end within their TTL)
  for _ in $(seq 150); do [[ $(members_listed) -eq $1 ]] && return 0; sleep 0.2; done
  fail "etcd lists $(members_listed) members, not $1"
}
placement_of() { "$client_bin" cluster "$fleet" "$@" 2> /dev/null | awk '/ k=/ { sub("first=", "", $3); print $1, $3 }'; }
order_of() { "$client_bin" cluster "$fleet" "$@" 2> /dev/null | awk '/ k=/ { sub("order=", "", $4); print $1, $4 }'; }

viewer_pids=()
start_viewer() {  # start_viewer N MOVIE [MBIT/S]: viewer N of MOVIE, paced by vod-client play, at 4 Mbit/s
  # by default (12 MiB in about 25 s, so it is mid-stream for the kill below); its log in viewer-N.log
  local n=$1 movie=$2 rate=${3:-4}
  "$client_bin" play "$(fleet_uri "$movie")" --rate "$rate" --burst 0 --depth 2 --chunk-kib 128 --readahead-kib 512 --reconnect-for 60 \
    --log-level info > "$work/viewer-$n.out" 2> "$work/viewer-$n.log" &
  viewer_pids[$n]=$!
  cleanup_hooks+=("kill -KILL ${viewer_pids[$n]} 2>/dev/null")
}
served_by() { sed -n "s/.* INFO cluster: '.*' on \([^ ]*\) (.*/\1/p" "$work/viewer-$1.log" | head -n 1; }

for n in 0 1 2; do start_member "$n"; done
wait_members 3
pass "three members registered: $(member_id 0) $(member_id 1) $(member_id 2)"

step "12 viewers of 6 movies, placed as the hashing says"
declare -A expected
declare -A order
while read -r name first; do expected[$name]=$first; done < <(placement_of "${movies[@]}")
while read -r name list; do order[$name]=$list; done < <(order_of "${movies[@]}")
[[ ${#expected[@]} -eq 6 ]] || fail "vod-client cluster placed ${#expected[@]} of 6 movies"
for v in $(seq 0 11); do start_viewer "$v" "${movies[$((v % 6))]}"; done
# Each viewer is stopped (SIGSTOP) as soon as it streams, so that all twelve are mid-stream at the
# kill below however long a loaded guest takes to start them; they go on together before it.
declare -A viewers_on
waiting=$(seq 0 11)
for _ in $(seq 1200); do
  left=
  for v in $waiting; do
    if [[ -s $work/viewer-$v.out && -n $(served_by "$v") ]]; then kill -STOP "${viewer_pids[$v]}"; else left+=" $v"; fi
  done
  waiting=$left
  [[ -z $waiting ]] && break
  sleep 0.1
done
[[ -z $waiting ]] || fail "viewers$waiting did not start streaming within 120 s"
for v in $(seq 0 11); do
  movie=${movies[$((v % 6))]} on=$(served_by "$v")
  [[ $on == "${expected[$movie]}" ]] || fail "viewer $v of $movie is on '$on', placement says ${expected[$movie]}: $(tail -3 "$work/viewer-$v.log")"
  viewers_on[$on]+="$v "
done
for m in "${!viewers_on[@]}"; do echo "    $m: viewers ${viewers_on[$m]}"; done
pass "every viewer is on its movie's first member"

step "kill -9 the member with the most viewers, mid-stream"
victim= most=0
for n in 0 1 2; do
  count=$(wc -w <<< "${viewers_on[$(member_id "$n")]:-}")
  ((count > most)) && { most=$count; victim=$n; }
done
victims=(${viewers_on[$(member_id "$victim")]})
for v in $(seq 0 11); do kill -CONT "${viewer_pids[$v]}"; done
killed_at=$(date +%s.%N)
kill -KILL "${pids[$victim]}"
wait "${pids[$victim]}" 2> /dev/null || true
exited_at=$(date +%s.%N)  # the kernel has torn the process down (its QPs, its registrations)
echo "    the killed member's process was gone after $(echo "($exited_at - $killed_at) * 1000" | bc -l | cut -d. -f1) ms"
for v in $(seq 0 11); do
  rc=0; wait "${viewer_pids[$v]}" || rc=$?
  [[ $rc -eq 0 ]] || fail "viewer $v exited $rc: $(tail -5 "$work/viewer-$v.log")"
  cmp "$media/${movies[$((v % 6))]}" "$work/viewer-$v.out" || fail "viewer $v's recording of ${movies[$((v % 6))]} differs"
done
gaps=() detect=() resume=()
for v in "${victims[@]}"; do
  line=$(grep -m1 "reconnected to" "$work/viewer-$v.log") || fail "viewer $v of the killed member did not reconnect: $(tail -5 "$work/viewer-$v.log")"
  to=$(sed -n 's/.*reconnected to \([^ ]*\) after.*/\1/p' <<< "$line")
  [[ $to != "$(member_id "$victim")" ]] || fail "viewer $v reconnected to the member that was killed"
  next=$(tr ',' '\n' <<< "${order[${movies[$((v % 6))]}]}" | grep -vx "$(member_id "$victim")" | head -n 1)
  [[ $to == "$next" ]] || fail "viewer $v of ${movies[$((v % 6))]} went on from $to, not the next in its order ($next of ${order[${movies[$((v % 6))]}]})"
  at=$(date -d "$(cut -d' ' -f1 <<< "$line")" +%s.%N)
  lost=$(date -d "$(grep -m1 'lost (' "$work/viewer-$v.log" | cut -d' ' -f1)" +%s.%N)
  gaps+=("$(echo "($at - $killed_at) * 1000" | bc -l | cut -d. -f1)")
  detect+=("$(echo "($lost - $killed_at) * 1000" | bc -l | cut -d. -f1)")
  resume+=("$(echo "($at - $lost) * 1000" | bc -l | cut -d. -f1)")
  echo "    viewer $v: lost after $(echo "($lost - $killed_at) * 1000" | bc -l | cut -d. -f1) ms, went on from $to after $(echo "($at - $killed_at) * 1000" | bc -l | cut -d. -f1) ms"
  grep -E 'lost \(|cluster|reconnected' "$work/viewer-$v.log" | sed 's/^/      /' | head -n 8
done
sorted=($(printf '%s\n' "${gaps[@]}" | sort -n))
p50=${sorted[$(((${#sorted[@]} - 1) / 2))]} p99=${sorted[$((${#sorted[@]} - 1))]}  # of at most 12: the largest
sorted=($(printf '%s\n' "${detect[@]}" | sort -n))
d50=${sorted[$(((${#sorted[@]} - 1) / 2))]} d99=${sorted[$((${#sorted[@]} - 1))]}
sorted=($(printf '%s\n' "${resume[@]}" | sort -n))
r50=${sorted[$(((${#sorted[@]} - 1) / 2))]} r99=${sorted[$((${#sorted[@]} - 1))]}
echo "FIGURE fleet_failover_ms viewers=${#gaps[@]} kill_to_reconnect_p50=$p50 p99=$p99 kill_to_loss_seen_p50=$d50 p99=$d99 loss_seen_to_reconnect_p50=$r50 p99=$r99"
[[ -n ${VOD_FLEET_FIGURES:-} ]] && echo "failover_ms ${#gaps[@]} $p50 $p99 $d50 $d99 $r50 $r99" >> "$VOD_FLEET_FIGURES"
pass "the ${#victims[@]} viewers of $(member_id "$victim") went on from other members; all 12 recordings byte-exact"
start_member "$victim"  # back, for what follows
wait_members 3

step "a fourth member joins: about a quarter of 100 names move, all of them to it"
names=()
for i in $(seq -w 0 99); do names+=("title-$i.mp4"); done
placement_of "${names[@]}" > "$work/before"
start_member 3
wait_members 4
placement_of "${names[@]}" > "$work/after"
moved=$(join "$work/before" "$work/after" | awk '$2 != $3' | wc -l)
elsewhere=$(join "$work/before" "$work/after" | awk -v new="$(member_id 3)" '$2 != $3 && $3 != new' | wc -l)
echo "    $moved of 100 moved (ideal 25)"
[[ $elsewhere -eq 0 ]] || fail "$elsewhere names moved to a member other than the new one"
((moved >= 10 && moved <= 45)) || fail "$moved of 100 names moved; a quarter was expected"
[[ -n ${VOD_FLEET_FIGURES:-} ]] && echo "join_moved 100 $moved" >> "$VOD_FLEET_FIGURES"
while read -r name first; do expected[$name]=$first; done < <(placement_of "${movies[@]}")
for i in "${!movies[@]}"; do
  "$client_bin" get "$(fleet_uri "${movies[$i]}")" -o "$work/open-$i" --quiet --log-level info 2> "$work/open-$i.log" || fail "get ${movies[$i]} after the join failed: $(tail -3 "$work/open-$i.log")"
  on=$(sed -n "s/.* INFO cluster: '.*' on \([^ ]*\) (.*/\1/p" "$work/open-$i.log" | head -n 1)
  [[ $on == "${expected[${movies[$i]}]}" ]] || fail "${movies[$i]} opened on '$on', the placement with four says ${expected[${movies[$i]}]}"
  cmp "$media/${movies[$i]}" "$work/open-$i" || fail "${movies[$i]} after the join differs"
done
pass "$moved of 100 names moved, all to $(member_id 3); the 6 movies open where the placement says, byte-exact"

step "vod-proxy, rdmasrc and vod-mount take the fleet's URI"
http_port=$(free_port)
"$build/proxy/vod-proxy" --server "$(fleet_uri "")" --listen "127.0.0.1:$http_port" 2> "$work/proxy.log" &
proxy_pid=$!
cleanup_hooks+=("kill $proxy_pid 2>/dev/null")
for _ in $(seq 600); do curl -s -o /dev/null "http://127.0.0.1:$http_port/" && break; sleep 0.1; done
curl -sf -o "$work/playlist.m3u" "http://127.0.0.1:$http_port/playlist.m3u" || fail "no playlist from vod-proxy: $(tail -3 "$work/proxy.log")"
for m in "${movies[@]}"; do grep -q "$m" "$work/playlist.m3u" || fail "vod-proxy's merged catalog lacks $m"; done
curl -sf -r 1000-4000999 -o "$work/proxy-range" "http://127.0.0.1:$http_port/movies/fleet-d.bin" || fail "Range through vod-proxy failed: $(tail -3 "$work/proxy.log")"
dd if="$media/fleet-d.bin" iflag=skip_bytes,count_bytes skip=1000 count=4000000 status=none | cmp - "$work/proxy-range" || fail "vod-proxy's Range of fleet-d.bin differs"
kill "$proxy_pid"; wait "$proxy_pid" 2> /dev/null || true
gst-launch-1.0 -q rdmasrc uri="$(fleet_uri fleet-e.bin)" ! filesink location="$work/gst.bin" > "$work/gst.log" 2>&1 ||
  fail "rdmasrc with a fleet URI failed: $(tail -3 "$work/gst.log")"
cmp "$media/fleet-e.bin" "$work/gst.bin" || fail "rdmasrc delivered other bytes than fleet-e.bin"
mnt=$(mktemp -d /tmp/vod-mnt.XXXXXX)
cleanup_hooks+=("fusermount3 -u -z $mnt 2>/dev/null; rmdir $mnt")
"$build/mount/vod-mount" "$(fleet_uri "")" "$mnt" --log-file "$work/mount.log" || fail "vod-mount exited $?"
[[ $(ls "$mnt" | grep -c '^fleet-') -eq 6 ]] || fail "vod-mount lists $(ls "$mnt" | tr '\n' ' '), not the fleet's 6 movies"
cmp "$media/fleet-f.bin" "$mnt/fleet-f.bin" || fail "fleet-f.bin through vod-mount differs"
fusermount3 -u "$mnt"
pass "vod-proxy's catalog merges the members' and its Range is byte-exact; rdmasrc and vod-mount byte-exact"

step "hostile member records are ignored, with a log line"
etcdctl put /fleet-test/members/garbage 'not json {' > /dev/null
etcdctl put "/fleet-test/members/192.0.2.99:7470" '{"version":1,"host":"192.0.2.99","port":7470,"weight":1e300,"catalog_generation":1}' > /dev/null
etcdctl put "/fleet-test/members/bad-host:1" '{"version":1,"host":"bad host;rm","port":1,"weight":1,"catalog_generation":1}' > /dev/null
etcdctl put "/fleet-test/members/192.0.2.98:7470" '{"version":1,"host":"192.0.2.97","port":7470,"weight":1,"catalog_generation":1}' > /dev/null
"$client_bin" cluster "$fleet" "${movies[@]}" > "$work/hostile.out" 2> "$work/hostile.err" || fail "vod-client cluster failed: $(cat "$work/hostile.err")"
sed 's/^/    /' "$work/hostile.err"
[[ $(grep -c 'ignoring the member record' "$work/hostile.err") -eq 4 ]] || fail "not every hostile record was reported"
grep -q "members/192.0.2.99:7470.*'weight' is 1e+300" "$work/hostile.err" || fail "the huge weight was not named"
[[ $(members_listed) -eq 4 ]] || fail "a hostile record was taken as a member"
"$client_bin" get "$(fleet_uri fleet-a.bin)" -o "$work/hostile-get" --quiet 2> /dev/null || fail "a get failed beside hostile records"
cmp "$media/fleet-a.bin" "$work/hostile-get" || fail "fleet-a.bin differs beside hostile records"
etcdctl del --prefix /fleet-test/members/garbage > /dev/null
pass "4 hostile records ignored and named; opens unaffected"

step "etcd stops: a running viewer goes on; a new process opens from the saved member list"
start_viewer 20 fleet-b.bin 40
sleep 1
kill -KILL "$etcd_pid"; wait "$etcd_pid" 2> /dev/null || true
"$client_bin" get "$(fleet_uri fleet-c.bin)" -o "$work/no-etcd" --quiet --log-level info 2> "$work/no-etcd.log" || fail "a get with etcd down failed: $(tail -3 "$work/no-etcd.log")"
cmp "$media/fleet-c.bin" "$work/no-etcd" || fail "fleet-c.bin with etcd down differs"
grep -q 'etcd is unreachable.*saved on disk' "$work/no-etcd.log" || fail "the client did not warn that it used the saved member list: $(cat "$work/no-etcd.log")"
rc=0; wait "${viewer_pids[20]}" || rc=$?
[[ $rc -eq 0 ]] || fail "the running viewer exited $rc when etcd stopped"
cmp "$media/fleet-b.bin" "$work/viewer-20.out" || fail "the running viewer's recording differs"
grep -q 'reconnected' "$work/viewer-20.log" && fail "the running viewer reconnected when etcd stopped"
for n in 0 1 2 3; do kill -0 "${pids[$n]}" 2> /dev/null || fail "member $n stopped when etcd did"; done
pass "with etcd gone the viewer was untouched, a new open used the saved list, and every member serves on"

for n in 0 1 2 3; do kill -TERM "${pids[$n]}"; done
for n in 0 1 2 3; do wait "${pids[$n]}" 2> /dev/null || true; done
