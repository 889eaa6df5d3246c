#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A library that is a tree, natively (vod-server --no-rdma: Write-Record over UDP on loopback): the
# tree of tests/library_tree_lib.sh (three levels, names with spaces, non-ASCII letters, '(', '#',
# '%' and '?', a path of more than 600 bytes, symlinks in and out, a hidden folder, a top-level
# "live"). rdma_vod_tree reads the same tree over RDMA in the guest.
#  - vod-client list shows exactly the expected paths;
#  - vod-client get over UDP is byte-exact for each of them;
#  - vod-proxy answers /movies/ Ranges byte-exact, /hls/.../master.m3u8 and index.m3u8 for a nested
#    MP4, which ffprobe reads through the playlist, and the folder pages list what each folder holds.
source "$(dirname "$0")/native_proxy_lib.sh"
source "$(dirname "$0")/../library_tree_lib.sh"
media=$work/media
client=$build/client/vod-client
make_library_tree "$media" "$work/outside" "$test_media/test-240p-20s.mp4"
nested=$(grep -m1 '\.mp4$' <<< "$(printf '%s\n' "${names[@]}")")
long=$(awk 'length > 600' <<< "$(printf '%s\n' "${names[@]}")")
((${#names[@]} == 6 && ${#long} > 600)) || fail "make_library_tree made ${#names[@]} names, the longest ${#long} bytes"

start_server_and_proxy "$media" --
udp=$(grep -o 'UDP [0-9]* with' "$work/server.log" | grep -o '[0-9]*')
[[ -n $udp ]] || fail "no UDP port in the server's log"
grep -q "skipping outside.bin: a symlink to .*, outside the media directory" "$work/server.log" || fail "the symlink out was not refused"
grep -q "skipping live: 'live' is reserved at the top" "$work/server.log" || fail "the top-level folder 'live' was not refused"

step "vod-client list shows exactly the expected paths"
"$client" list rdma://127.0.0.1 --transport udp --udp-port "$udp" > "$work/list" 2> "$work/list.err" || fail "list: $(cat "$work/list.err")"
expect_listed "$work/list"
pass "${#names[@]} paths, the longest ${#long} bytes; the symlink out, the hidden folder and 'live' left out"

step "vod-client get over UDP: every path byte-exact"
for name in "${names[@]}"; do
  "$client" get "rdma://127.0.0.1/$(path_uri "$name")" --transport udp --udp-port "$udp" -o "$work/out" --quiet 2> "$work/get.err" ||
    fail "get '$name': $(cat "$work/get.err")"
  cmp "$media/$name" "$work/out" || fail "'$name' differs"
done
pass "${#names[@]} movies byte-exact"

step "vod-proxy: /movies/ Ranges of nested names byte-exact"
for name in "$nested" "$long"; do
  size=$(stat -c %s "$media/$name")
  curl -sf -r 1000-49999 -o "$work/range" "$base/movies/$(path_uri "$name")" || fail "no range of '$name'"
  cmp -n 49000 -i 1000:0 "$media/$name" "$work/range" && [[ $(stat -c %s "$work/range") == 49000 ]] || fail "the range of '$name' differs"
  curl -sf -r "$((size - 10))-" -o "$work/range" "$base/movies/$(path_uri "$name")" || fail "no tail of '$name'"
  tail -c 10 "$media/$name" | cmp - "$work/range" || fail "the tail of '$name' differs"
done
pass "ranges and tails byte-exact"

step "vod-proxy: the nested MP4's HLS playlists answer, and ffprobe reads the movie through them"
hls=$base/hls/$(path_uri "$nested")
curl -sf "$hls/master.m3u8" -o "$work/master.m3u8" || fail "no master.m3u8 for '$nested'"
grep -q '^#EXT-X-STREAM-INF:' "$work/master.m3u8" && grep -qx 'index.m3u8' "$work/master.m3u8" || fail "master.m3u8: $(cat "$work/master.m3u8")"
for _ in $(seq 100); do curl -sf "$hls/index.m3u8" -o "$work/index.m3u8" && break; sleep 0.2; done
grep -q '^#EXT-X-MAP:URI="init.mp4"' "$work/index.m3u8" || fail "index.m3u8: $(head -5 "$work/index.m3u8")"
frames=$(ffprobe -v error -select_streams v:0 -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$hls/master.m3u8")
frames=$(awk 'NF { print; exit }' <<< "$frames")  # a line per program: the first
want=$(ffprobe -v error -select_streams v:0 -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$media/$nested")
[[ $frames == "$want" ]] || fail "ffprobe reads $frames video packets through HLS, the file has $want"
pass "master.m3u8 and index.m3u8 of a nested name; ffprobe reads all $frames video packets through them"

step "vod-proxy: folder pages"
curl -sf "$base/" -o "$work/top.html" || fail "no catalog page"
grep -q 'href="/browse/Films/"' "$work/top.html" && grep -q 'href="/browse/Series/"' "$work/top.html" || fail "the top page lists no folders"
grep -q 'data-name="top.bin"' "$work/top.html" || fail "the top page does not show top.bin"
curl -sf "$base/browse/$(path_uri "Films/Läder (2024)")/" -o "$work/films.html" || fail "no page for the folder"
grep -qF "data-name=\"$nested\"" "$work/films.html" || grep -qF "data-name=\"${nested//&/&amp;}\"" "$work/films.html" || fail "the folder page does not show '$nested'"
grep -q 'href="/browse/Films/L%C3%A4der%20%282024%29/extras/"' "$work/films.html" || fail "the folder page does not link extras/"
[[ $(curl -s -o /dev/null -w '%{http_code}' "$base/browse/Nope/") == 404 ]] || fail "an unknown folder is not 404"
[[ $(curl -s -o /dev/null -w '%{http_code}' --path-as-is "$base/movies/Films/../top.bin") == 400 ]] || fail "a '..' path is not 400"
pass "the top page and a folder page list their folders and movies; an unknown folder is 404, '..' is 400"

step "the same tree from a segment cache: --pin matches paths, gets are byte-exact, a rescan finds a new folder"
udp2=$(free_port)
"$build/server/vod-server" --no-rdma --udp-port "$udp2" --bind 127.0.0.1 --media-dir "$media" --cache-size 4M --segment-size 64K \
  --pin 'Films/Läder*' --state-dir "$work/state" 2> "$work/cache-server.log" &
cache_pid=$!
pids+=("$cache_pid")
for _ in $(seq 300); do grep -q 'listening on' "$work/cache-server.log" && break; sleep 0.1; done
grep -q 'listening on' "$work/cache-server.log" || fail "the cached server did not start: $(tail -3 "$work/cache-server.log")"
grep -qF "loading 1/6: $nested" "$work/cache-server.log" || fail "--pin 'Films/Läder*' did not pin '$nested'"
grep -qF "probing (segment cache) 4/6: Series/" "$work/cache-server.log" || fail "the long path is not in the segment cache"
for name in "${names[@]}"; do
  "$client" get "rdma://127.0.0.1/$(path_uri "$name")" --transport udp --udp-port "$udp2" -o "$work/out" --quiet 2> "$work/get.err" ||
    fail "get '$name' from the cache: $(cat "$work/get.err")"
  cmp "$media/$name" "$work/out" || fail "'$name' from the cache differs"
done
mkdir -p "$media/New Folder/inner"
head -c 77777 /dev/urandom > "$media/New Folder/inner/new #2.bin"
kill -HUP "$cache_pid"
for _ in $(seq 100); do grep -q "generation 2: 7 movies" "$work/cache-server.log" && break; sleep 0.1; done
grep -q "generation 2: 7 movies" "$work/cache-server.log" || fail "the rescan did not find the new folder: $(grep generation "$work/cache-server.log")"
"$client" get "rdma://127.0.0.1/New%20Folder/inner/new%20%232.bin" --transport udp --udp-port "$udp2" -o "$work/out" --quiet ||
  fail "get of the rescanned movie failed"
cmp "$media/New Folder/inner/new #2.bin" "$work/out" || fail "the rescanned movie differs"
pass "pinned by a path pattern, the rest from the cache, all byte-exact; SIGHUP found New Folder/inner/new #2.bin"
