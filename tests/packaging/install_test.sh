#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installation and packaging: 'cmake --install' into a staging root puts programs, plugin, units,
# configuration and manual pages in their conventional places; every manual page renders and
# names every option its program's --help lists; systemd-analyze verifies both units (with the
# staged binaries and pages in place) and rates the server's sandbox; an example program builds on the
# installed libvodclient with pkg-config and copies a movie; CPack builds a .deb whose
# dependencies come from dpkg-shlibdeps, and the programs unpacked from it run; dpkg installs,
# reinstalls (keeping the edited conffile), removes and purges it in an overlay root of its own.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../free_port.sh"
build=${VOD_BUILD_DIR:?CTest sets VOD_BUILD_DIR}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "PASS: $*"; }
stage=$work/stage
DESTDIR=$stage cmake --install "$build" --prefix /usr > "$work/install.log"
for f in usr/include/rdma-vod/vod/client/session.hpp usr/bin/vod-server usr/bin/vod-client usr/bin/vod-proxy usr/bin/vod-mount usr/bin/vod-media usr/bin/vod-token \
         usr/lib/systemd/system/vod-server.service usr/lib/systemd/user/vod-proxy.service etc/rdma-vod/vod-server.conf \
         usr/share/man/man8/vod-server.8 usr/share/man/man1/vod-client.1 usr/share/man/man1/vod-proxy.1 \
         usr/share/man/man1/vod-mount.1 usr/share/man/man1/vod-media.1 \
         usr/share/rdma-vod/web/catalog.html usr/share/rdma-vod/web/watch.html usr/share/rdma-vod/web/static/style.css; do
  [[ -e $stage/$f ]] || fail "cmake --install did not install /$f"
done
ls "$stage"/usr/lib/*/gstreamer-1.0/libgstrdma.so > /dev/null || fail "the GStreamer plugin is not in GStreamer's plugin directory"
# vod-client loads vod-title-remux.so (MP4 titles) by name, through its RUNPATH: beside the programs.
runpath=$(readelf -d "$stage/usr/bin/vod-client" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
remux=$stage/usr/bin/${runpath#\$ORIGIN/}/vod-title-remux.so
[[ $runpath == '$ORIGIN/'* && -f $remux ]] || fail "vod-client's RUNPATH '$runpath' does not lead to vod-title-remux.so"
pass "cmake --install: programs, plugin, units, /etc/rdma-vod/vod-server.conf, manual pages, web pages"

# The installed vod-proxy finds its pages beside itself (<prefix>/share/rdma-vod/web), with no
# server there at all (over UDP, so no RDMA device is needed).
port=$(free_port)
env -u VOD_WEB_DIR "$stage/usr/bin/vod-proxy" --server rdma://127.0.0.1 --transport udp --udp-port 9 --listen "127.0.0.1:$port" \
  > "$work/proxy.log" 2>&1 &
proxy_pid=$!
for _ in $(seq 100); do curl -s -o "$work/style.css" "http://127.0.0.1:$port/static/style.css" && break; sleep 0.1; done
kill "$proxy_pid" 2>/dev/null || true
cmp -s "$work/style.css" "$src/proxy/web/static/style.css" || fail "the installed vod-proxy does not serve its installed pages: $(tail -n 3 "$work/proxy.log")"
pass "the installed vod-proxy serves the installed pages"

# libvodclient: another program builds against the installed headers, archives and vodclient.pc,
# and fetches a movie byte for byte (over UDP Write-Record, so that no RDMA device is needed here)
pc_dir=$(dirname "$(find "$stage/usr" -name vodclient.pc)")
[[ -f $pc_dir/vodclient.pc ]] || fail "cmake --install did not install vodclient.pc"
example=$(find "$stage/usr/share/doc" -name fetch_movie.cpp)
[[ -f $example ]] || fail "the example program's source is not installed"
# shellcheck disable=SC2046  # pkg-config's output is a list of flags
g++ -o "$work/fetch_movie" "$example" $(PKG_CONFIG_PATH=$pc_dir pkg-config --cflags --libs vodclient) 2> "$work/cc.log" ||
  { cat "$work/cc.log"; fail "the example does not build against the installed libvodclient"; }
mkdir "$work/media"
head -c 3000000 /dev/urandom > "$work/media/clip.bin"
port=$(free_port)
"$stage/usr/bin/vod-server" --no-rdma --udp-port "$port" --bind 127.0.0.1 --media-dir "$work/media" 2> "$work/server.log" &
server=$!
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do grep -q 'listening on' "$work/server.log" && break; sleep 0.1; done
"$work/fetch_movie" "rdma://127.0.0.1/clip.bin" "$work/clip.out" "$port" > "$work/fetch.log" 2>&1 ||
  { cat "$work/fetch.log"; fail "the example built on the installed library failed"; }
cmp "$work/media/clip.bin" "$work/clip.out" || fail "the example's copy differs from the movie"
kill "$server"; wait "$server" 2>/dev/null || true
pass "libvodclient: the example builds with pkg-config vodclient and copies a movie byte-exact ($(cat "$work/fetch.log"))"

# every --option of a program's --help (and of each vod-client command's) is in its manual page
render() { MANWIDTH=250 LC_ALL=C man --warnings -l "$1" 2> "$work/man.err"; }
for page in man8/vod-server.8 man1/vod-client.1 man1/vod-proxy.1 man1/vod-mount.1 man1/vod-media.1 man1/vod-token.1; do
  prog=$(basename "$page"); prog=${prog%.*}
  render "$stage/usr/share/man/$page" > "$work/page.txt" || fail "man -l $page failed: $(cat "$work/man.err")"
  [[ ! -s $work/man.err ]] || fail "$page renders with warnings: $(head -n 3 "$work/man.err")"
  grep -q "^NAME" "$work/page.txt" || fail "$page has no NAME section"
  { "$stage/usr/bin/$prog" --help 2>&1 || true
    if [[ $prog == vod-client ]]; then for c in list get play bench; do "$stage/usr/bin/$prog" "$c" --help; done; fi; } |
    grep -oE -- '--[a-z][a-z0-9-]+' | sort -u > "$work/options"
  [[ $(wc -l < "$work/options") -ge 1 ]] || fail "$prog --help lists no option"
  while read -r opt; do
    grep -qF -- "$opt" "$work/page.txt" || fail "$page does not mention $opt, which $prog --help lists"
  done < "$work/options"
  "$stage/usr/bin/$prog" --version | grep -qx "$prog [0-9.]*" || fail "$prog --version printed '$("$stage/usr/bin/$prog" --version)'"
  echo "  $page: $(wc -l < "$work/options") options, all documented"
done
pass "every manual page renders without warnings and lists every option of --help; --version everywhere"

if command -v systemd-analyze > /dev/null; then
  # verify wants ExecStart's binary and the Documentation= page to exist: check copies of the units
  # whose /usr/bin is the staging root's, with MANPATH on the staged pages.
  mkdir -p "$work/units/system" "$work/units/user" "$work/runtime"
  sed "s|/usr/bin/|$stage/usr/bin/|g" "$stage/usr/lib/systemd/system/vod-server.service" > "$work/units/system/vod-server.service"
  sed "s|/usr/bin/|$stage/usr/bin/|g" "$stage/usr/lib/systemd/user/vod-proxy.service" > "$work/units/user/vod-proxy.service"
  (
    export MANPATH=$stage/usr/share/man: XDG_RUNTIME_DIR=$work/runtime
    systemd-analyze verify "$work/units/system/vod-server.service"
    systemd-analyze verify --user "$work/units/user/vod-proxy.service"
    systemd-analyze security --offline=yes "$stage/usr/lib/systemd/system/vod-server.service" > "$work/security.txt"
  ) > "$work/verify.log" 2>&1 || { cat "$work/verify.log"; fail "systemd-analyze verify failed"; }
  [[ ! -s $work/verify.log ]] || { cat "$work/verify.log"; fail "systemd-analyze verify printed warnings"; }
  exposure=$(grep -oE 'Overall exposure level for vod-server.service: [0-9.]+ [A-Z]+' "$work/security.txt" || true)
  [[ -n $exposure ]] || { tail -n 5 "$work/security.txt"; fail "systemd-analyze security gave no rating"; }
  pass "systemd-analyze verify: both units clean; security: ${exposure#*: }"
else
  echo "SKIP: systemd-analyze is missing here (scripts/install-deps.sh installs systemd)"
fi

(cd "$build" && cpack -G DEB -B "$work/deb" > "$work/cpack.log" 2>&1) || { tail -n 20 "$work/cpack.log"; fail "cpack -G DEB failed"; }
deb=$(ls "$work"/deb/rdma-vod_*.deb)
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libibverbs1 librdmacm1 libavformat libgstreamer1.0-0 libfuse3-3 libboost-program-options libssl3 libsystemd0 fuse3; do
  grep -q "$lib" <<< "$depends" || fail "the package does not depend on $lib: $depends"
done
dpkg-deb -c "$deb" > "$work/contents"
grep -q './usr/lib/systemd/system/vod-server.service$' "$work/contents" || fail "the package lacks the unit"
grep -q './etc/rdma-vod/vod-server.conf$' "$work/contents" || fail "the package lacks the configuration"
grep -q './usr/lib/.*rdma-vod/vod-title-remux.so$' "$work/contents" || fail "the package lacks vod-title-remux.so"
dpkg-deb -x "$deb" "$work/unpacked"
"$work/unpacked/usr/bin/vod-server" --version | grep -qx 'vod-server [0-9.]*' || fail "vod-server from the package does not run"
"$work/unpacked/usr/bin/vod-client" --help > /dev/null || fail "vod-client --help from the package failed"
pc=$(find "$work/unpacked" -name vodclient.pc)
[[ -n $pc ]] || fail "the package lacks vodclient.pc"
# shellcheck disable=SC2046
g++ -o "$work/fetch_movie_deb" "$(find "$work/unpacked" -name fetch_movie.cpp)" $(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs vodclient) ||
  fail "the example does not build against the libvodclient unpacked from the package"
pass "$(basename "$deb"): $(du -k "$deb" | cut -f1) KiB, Depends: $depends"

# dpkg installs, upgrades, removes and purges the package in a root of the test's own: an overlay on
# this machine's / (so the dependencies are there), in a mount namespace, nothing written to the host.
if unshare -m true 2> /dev/null; then
  mkdir -p "$work/ovl/upper" "$work/ovl/work" "$work/ovl/root"
  cp "$deb" "$work/ovl/rdma-vod.deb"
  unshare -m bash -c '
    set -euo pipefail
    ovl=$1
    mount -t overlay overlay -o "lowerdir=/,upperdir=$ovl/upper,workdir=$ovl/work" "$ovl/root" 2> "$ovl/mount.err" || exit 77
    mount -t proc proc "$ovl/root/proc"
    mount --rbind /dev "$ovl/root/dev"
    mount -t tmpfs tmpfs "$ovl/root/tmp"
    mount -t tmpfs tmpfs "$ovl/root/run"
    cp "$ovl/rdma-vod.deb" "$ovl/root/tmp/"
    in_root() { chroot "$ovl/root" "$@"; }
    in_root dpkg -i /tmp/rdma-vod.deb > "$ovl/dpkg.log" 2>&1 || { cat "$ovl/dpkg.log"; echo "dpkg -i failed"; exit 1; }
    [[ $(in_root dpkg-query -W -f="\${Status}" rdma-vod) == "install ok installed" ]] || { echo "not installed"; exit 1; }
    in_root vod-server --version | grep -qx "vod-server [0-9.]*" || { echo "vod-server --version failed in the root"; exit 1; }
    in_root vod-client --help > /dev/null || { echo "vod-client --help failed in the root"; exit 1; }
    in_root dpkg-query -W -f="\${Conffiles}" rdma-vod | grep -q "/etc/rdma-vod/vod-server.conf" || { echo "vod-server.conf is not a conffile"; exit 1; }
    echo "media-dir = /srv/edited-by-the-admin" >> "$ovl/root/etc/rdma-vod/vod-server.conf"
    in_root dpkg -i /tmp/rdma-vod.deb > "$ovl/dpkg.log" 2>&1 || { cat "$ovl/dpkg.log"; echo "reinstalling failed"; exit 1; }
    grep -q edited-by-the-admin "$ovl/root/etc/rdma-vod/vod-server.conf" || { echo "reinstalling overwrote the edited configuration"; exit 1; }
    in_root dpkg -r rdma-vod > "$ovl/dpkg.log" 2>&1 || { cat "$ovl/dpkg.log"; echo "dpkg -r failed"; exit 1; }
    [[ ! -e $ovl/root/usr/bin/vod-server && -e $ovl/root/etc/rdma-vod/vod-server.conf ]] || { echo "dpkg -r: binary left or configuration lost"; exit 1; }
    in_root dpkg -P rdma-vod > "$ovl/dpkg.log" 2>&1 || { cat "$ovl/dpkg.log"; echo "dpkg -P failed"; exit 1; }
    [[ ! -e $ovl/root/etc/rdma-vod ]] || { echo "dpkg -P left /etc/rdma-vod"; exit 1; }
  ' _ "$work/ovl" && rc=0 || rc=$?
  case $rc in
    0) pass "dpkg in a root of its own: install, programs run, conffile kept across a reinstall, remove keeps it, purge removes it" ;;
    77) echo "SKIP: overlayfs is not available here ($(cat "$work/ovl/mount.err")): the dpkg install cycle was not run" ;;
    *) fail "the dpkg install cycle failed" ;;
  esac
else
  echo "SKIP: no mount namespaces here (unshare -m): the dpkg install cycle was not run"
fi
