# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the tests of a library that is a tree (tests/hls/library_tree_test.sh natively over UDP,
# tests/rdma/vod_tree_test.sh over RDMA in the guest): the tree they serve, and what they check of
# `vod-client list`. The caller defines fail and $work.

# make_library_tree MEDIA OUTSIDE MP4: makes in MEDIA the test tree and sets `names` to the names a
# server must list:
#   three levels of folders; names with spaces, non-ASCII letters, '(', '#', '%' and '?'; a path of
#   more than 600 bytes; MP4 (a real movie, copied) in a nested folder; a symlink that stays inside
#   (listed) and a file and a folder symlinked from OUTSIDE (not listed); a hidden folder and a
#   top-level folder named "live" (not listed).
make_library_tree() {
  local media=$1 outside=$2 mp4=$3 name n=0
  local long="Series/$(printf 'L%.0s' {1..200})/$(printf 'M%.0s' {1..200})/$(printf 'N%.0s' {1..200}).bin"
  local nested="Films/Läder (2024)/Läder (2024) - 720p #1 50% ?.mp4"
  mkdir -p "$media/Films/Läder (2024)/extras" "$media/Series/Show (2019)/Season 01" "$(dirname "$media/$long")" "$media/.hidden" \
    "$media/live" "$outside"
  names=()
  for name in "top.bin" "Films/Läder (2024)/extras/making of.bin" "Series/Show (2019)/Season 01/Show S01E01 #1.bin" "$long"; do
    n=$((n + 1))
    head -c $((n * 100003)) /dev/urandom > "$media/$name"
    names+=("$name")
  done
  cp "$mp4" "$media/$nested"
  names+=("$nested")
  ln -s "../top.bin" "$media/Films/inside link.bin"
  names+=("Films/inside link.bin")
  head -c 1000 /dev/urandom > "$outside/secret.bin"
  ln -s "$outside/secret.bin" "$media/outside.bin"
  ln -s "$outside" "$media/outdir"
  head -c 1000 /dev/urandom > "$media/.hidden/x.bin"
  head -c 1000 /dev/urandom > "$media/live/x.bin"
}

# path_uri NAME: NAME as a URI path, each folder and file name percent-encoded.
path_uri() { /usr/bin/python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe="/"))' "$1"; }

# expect_listed LIST: the output of `vod-client list` names exactly `names`.
expect_listed() {
  # A row is the name, then the size ("97.7 KiB"): the names are what comes before it. The movies
  # end at the blank line before the titles ("Films/Läder (2024)" is one: its one rendition).
  tail -n +3 "$1" | sed '/^$/,$d' | sed -E 's/ +[0-9.]+ (B|KiB|MiB|GiB|TiB) .*$//' | sort > "$work/listed"
  printf '%s\n' "${names[@]}" | sort > "$work/expected-names"
  diff "$work/expected-names" "$work/listed" || fail "vod-client list shows other names: $(cat "$1")"
}
