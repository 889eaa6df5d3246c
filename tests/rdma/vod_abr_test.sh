#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Adaptive bitrate over one-sided Reads across a shaped link (label rdma-iwarp). The players run in
# a network namespace of their own, joined to the server's by a veth pair, each end with a siw
# device: rxe cannot cross namespaces in this kernel (../shared/softroce.md, "Shaping an RDMA
# link"), siw rides on TCP, which is per namespace, so a tbf qdisc on the server's end shapes the
# Read responses. The title (make-test-media.sh): three MPEG-TS renditions at a constant 4, 1.2 and
# 0.4 Mbit/s, keyframes every 2 s, 40 s.
#   - a 1 MiB get across the link at 4 Mbit/s takes at least 1.6 s: the shaping holds for RDMA
#     Reads (ib_read_bw's figure is the benchmark's: its calibration fails beside another test);
#   - with a token for the title's folder, and so a PD per connection on siw: two adaptive players
#     (vod-client play, paced) climb to 360p on a 40 Mbit/s link; then it drops to 4 Mbit/s (two
#     players at 360p need 8): both step down, logged with the reason, with no new connection (each
#     holds one per rendition from the start), and stay in time (at most 2 late segments of 20
#     each); what they recorded decodes with every frame 40 ms apart across the switches, the
#     picture changing size, and continuous continuity counters;
#   - two players pinned to 360p on the same 4 Mbit/s link (vod-client bench --rendition) fall
#     behind: most of their segments late.
# Without siw in a Soft-RoCE guest it says so and skips (77).
[[ -n ${VOD_IWARP_ADDR:-} && ${VOD_RDMA_GUEST:-} == 1 ]] ||
  { echo "SKIP: shaping an RDMA link needs siw in a namespace of the Soft-RoCE guest (softroce-run --device both)"; exit 77; }
export VOD_RDMA_ADDR=198.18.7.1  # the server's end of the shaped link (shaped_link.sh)
source "$(dirname "$0")/vod_test_lib.sh"
[[ -f $test_media/title-shaped/Shaped/.recipe ]] || fail "no title in $test_media/title-shaped (tests/media/make-test-media.sh makes it)"
media=$work/media
mkdir -p "$media/Shaped"
cp "$test_media/title-shaped/Shaped/"*.ts "$media/Shaped/"

step "a link across a network namespace, siw at each end, shaped by tbf on the server's"
source "$(dirname "$0")/shaped_link.sh"
shaped_link_up "vabr$$" || fail "the shaped link did not come up"
# A siw device is deleted only once no process holds it: the players and the server go first.
pids=()
cleanup_hooks+=('kill -KILL "${pids[@]}" $server_pid 2>/dev/null; wait "${pids[@]}" $server_pid 2>/dev/null; server_pid=; shaped_link_down')
# With tokens: on siw each connection gets a protection domain of its own with exactly its movie
# (--isolation auto), so a player holds a connection per rendition, opened with the title.
printf '1 %s\n' "$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" > "$work/keys"
start_server "$media" --auth-secret "$work/keys"
grep -q 'a protection domain per connection' "$server_log" || fail "no PD per connection: $(grep -i isolation "$server_log")"
for _ in $(seq 300); do grep -q "title 'Shaped': 3 renditions" "$server_log" && break; sleep 0.1; done
grep -q "title 'Shaped': 3 renditions (360p, 270p, 180p)" "$server_log" || fail "the server lists no title: $(grep -i title "$server_log")"
token=$("$build/server/vod-token" --secret "$work/keys" --prefix Shaped/ --ttl 1h)  # the title's folder: all its renditions
title="rdma://$link_addr:$port/Shaped?token=$token"
# The shaping holds for Reads: 1 MiB (8.4 Mbit) across the link at 4 Mbit/s takes at least 1.6 s
# (a lower bound that load cannot break: tbf lets nothing through faster than its rate and 16 KB).
# ib_read_bw measured it at 3.86 Mbit/s alone in the guest (bench/abr-benchmarks.sh records it),
# but its clock calibration gives 0.00 beside another test, so the test times a get.
shape 4mbit
t0=$(date +%s.%N)
in_ns "$client_bin" get "rdma://$link_addr:$port/Shaped/Shaped%20-%20360p.ts?token=$token" --range 0-1048575 -o "$work/mib" -q ||
  fail "a get across the shaped link"
elapsed=$(echo "$(date +%s.%N) - $t0" | bc)
cmp "$work/mib" <(head -c 1048576 "$media/Shaped/Shaped - 360p.ts") || fail "the get across the link is not the file's first MiB"
awk -v t="$elapsed" 'BEGIN { exit !(t >= 1.6) }' || fail "1 MiB crossed the 4 Mbit/s link in $elapsed s: it is not shaped"
pass "1 MiB across the link at tbf 4 Mbit/s in $elapsed s ($(echo "scale=2; 8.388608 / $elapsed" | bc) Mbit/s), byte-exact"
connects() { grep -c "connect from $link_peer.*" "$server_log" || true; }

step "adaptive: two players climb to 360p at 40 Mbit/s; at 4 Mbit/s they step down and stay in time"
shape 40mbit
for i in 1 2; do
  in_ns timeout 150 "$client_bin" play "$title" --log-level info > "$work/abr$i.ts" 2> "$work/abr$i.log" &
  pids+=($!)
done
for _ in $(seq 600); do
  grep -q 'abr: switch 270p -> 360p' "$work/abr1.log" && grep -q 'abr: switch 270p -> 360p' "$work/abr2.log" && break
  sleep 0.1
done
grep -q 'abr: switch 270p -> 360p' "$work/abr1.log" && grep -q 'abr: switch 270p -> 360p' "$work/abr2.log" ||
  fail "the players did not climb to 360p in 60 s: $(grep -h 'abr:' "$work"/abr[12].log)"
climbed=$SECONDS
before=$(connects)
shape 4mbit
for i in 1 2; do wait "${pids[$((i - 1))]}" || fail "player $i: $(tail -3 "$work/abr$i.log")"; done
frames=$(ffprobe -v error -select_streams v:0 -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$media/Shaped/Shaped - 360p.ts" | awk 'NF { print; exit }')
for i in 1 2; do
  grep -E 'abr: switch|segments \(' "$work/abr$i.log" | sed "s/^/  player $i: /"
  grep -qE 'abr: switch 360p -> (270p|180p) at .*: goodput too low' "$work/abr$i.log" || fail "player $i did not step down from 360p"
  read -r segments late < <(sed -n 's/.*: \([0-9]*\) segments (\([0-9]*\) late).*/\1 \2/p' "$work/abr$i.log")
  [[ ${segments:-0} -eq 20 ]] || fail "player $i: ${segments:-no} segments, not 20"
  # At most 2 late of 20: the buffer of 12 s covers the three segments it takes to measure the drop.
  ((late <= 2)) || fail "player $i: $late of 20 segments late after stepping down"
  ffprobe -v error -select_streams v:0 -show_entries frame=pts_time,width -of csv=p=0 "$work/abr$i.ts" > "$work/frames$i" 2> "$work/frames$i.err"
  [[ ! -s $work/frames$i.err ]] || fail "decoding player $i's recording: $(head -3 "$work/frames$i.err")"
  awk -F, -v want="$frames" -v i="$i" 'NF >= 2 { if (n && ($1 - last > 0.041 || $1 <= last)) bad = 1; if (n && $2 != width) sizes = sizes " " $2
                                       last = $1; width = $2; n++ }
       END { print "  player " i ": " n " frames, widths changing to" sizes
             if (bad || n != want || sizes !~ / 640 / || width >= 640) exit 1 }' "$work/frames$i" ||
    fail "player $i's recording is not every frame 40 ms apart, up to 640 wide and then down ($frames frames wanted)"
  /usr/bin/python3 "$(dirname "$0")/../udp/ts_continuity.py" "$work/abr$i.ts" || fail "player $i: continuity counters"
done
[[ $(connects) -eq $before ]] || fail "the players connected again while switching: $(grep "connect from $link_peer" "$server_log" | tail -3)"
pass "2 adaptive players, a connection per rendition (no connect at a switch): up to 360p, down within $((SECONDS - climbed)) s of the drop, in time; recordings whole and continuous"

step "pinned to 360p on the 4 Mbit/s link: two players fall behind"
in_ns timeout 120 "$client_bin" bench "$title" --clients 2 --duration 24 --rendition 360p > "$work/pinned.out" 2> "$work/pinned.log" ||
  fail "bench --rendition 360p: $(tail -3 "$work/pinned.log")"
cat "$work/pinned.out"
line=$(grep '^BENCH title' "$work/pinned.out") || fail "no BENCH line"
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<< "$line"; }
awk -v s="$(field segments)" -v l="$(field late)" -v sw="$(field switches)" 'BEGIN { exit !(s >= 4 && l * 2 >= s && sw == 0) }' ||
  fail "pinned players kept up: $line"
pass "pinned to 360p: $(field late) of $(field segments) segments late, no switch"
