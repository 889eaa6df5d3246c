#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A library that is a tree, over RDMA: the tree of tests/library_tree_lib.sh (three levels, names
# with spaces, non-ASCII letters, '(', '#', '%' and '?', a path of more than 600 bytes, symlinks in
# and out, a hidden folder, a top-level "live"): vod-client list shows exactly the expected paths,
# each get is byte-exact, and a client of protocol version 2 is refused with the reason.
# (library_tree reads the same tree over UDP natively, with vod-proxy's routes.)
source "$(dirname "$0")/vod_test_lib.sh"
source "$(dirname "$0")/../library_tree_lib.sh"
media=$work/media
make_library_tree "$media" "$work/outside" "$test_media/test-240p-20s.mp4"
((${#names[@]} == 6)) || fail "make_library_tree made ${#names[@]} names"
start_server "$media"
grep -q "generation 1: 6 movies" "$server_log" || fail "expected 6 movies: $(grep generation "$server_log")"

step "vod-client list shows exactly the expected paths"
"$client_bin" list "$(uri)" > "$work/list"
expect_listed "$work/list"
pass "${#names[@]} paths; the symlinks out, the hidden folder and 'live' left out"

step "vod-client get over RDMA: every path byte-exact"
for name in "${names[@]}"; do
  "$client_bin" get "$(uri "$(path_uri "$name")")" -o "$work/out" --quiet || fail "get '$name' failed"
  cmp "$media/$name" "$work/out" || fail "'$name' differs"
done
pass "${#names[@]} movies byte-exact"

step "a client of protocol version 2 is refused, with the reason"
# A catalog-only connect request of version 2: the header, kind 2, then zeros (56 bytes).
rc=0
out=$("$build/tests/rdma/smoke_peer" raw --host "$addr" --port "$port" --hex "52564f440201003802$(printf '00%.0s' $(seq 47))") || rc=$?
[[ $rc -eq 3 ]] || fail "a version-2 connect was not rejected (exit $rc): $out"
grep -q "reject code 2 (unsupported version): this library has folders or names over 128 bytes, which need protocol version 3; the client speaks 2" <<< "$out" ||
  fail "the reject does not say why: $out"
pass "refused: $(grep -o 'reject code 2.*' <<< "$out")"
