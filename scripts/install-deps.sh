#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installs every package rdma-vod needs to build, test, benchmark and run, from Debian 12 only.
# Idempotent: packages already present are left alone, and apt runs only when something is missing.
set -euo pipefail

packages=(
  # build
  build-essential cmake pkg-config git
  # rdma-core: verbs, rdma_cm, the rxe provider, diagnostics and perftest for the benchmarks
  rdma-core libibverbs-dev librdmacm-dev ibverbs-providers ibverbs-utils rdmacm-utils perftest
  # FFmpeg: libraries for media/, tools for test-media generation and verification
  libavformat-dev libavcodec-dev libavutil-dev libswscale-dev ffmpeg
  # GStreamer 1.22
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev gstreamer1.0-tools
  gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad gstreamer1.0-plugins-ugly gstreamer1.0-libav
  # vod-mount: libfuse3 and fusermount3
  libfuse3-dev fuse3
  # operations: sd_notify (libsystemd), manual pages (help2man, man-db), systemd-analyze (systemd),
  # and CPack's .deb (dpkg-shlibdeps in dpkg-dev; CPack finds ELF files with file)
  libsystemd-dev help2man man-db systemd dpkg-dev file
  # the segment cache's disk reads: io_uring (liburing)
  liburing-dev
  # a fleet: etcd (server and etcdctl, for the tests), reached over its JSON gateway with libcurl;
  # nlohmann-json reads and writes the JSON; openssl makes the tests' certificates for etcds://
  etcd-server etcd-client libcurl4-openssl-dev nlohmann-json3-dev openssl
  # promtool (in Debian's prometheus package) checks both /metrics outputs
  prometheus
  # Boost: Program_options, Beast/Asio; OpenSSL's libcrypto (HMAC for Write-Record cookies)
  libboost-program-options-dev libboost-dev libssl-dev
  # vod-proxy's web pages: Mustache templates (header-only)
  libkainjow-mustache-dev
  # GoogleTest
  googletest libgtest-dev
  # libFuzzer comes with clang's runtime; llvm brings llvm-symbolizer, which names the functions in
  # sanitizer reports and in the fuzzers' coverage table
  clang libclang-rt-14-dev llvm
  # the tree's format (.clang-format), checked by ctest's source_format at this one version
  clang-format-14
  # Soft-RoCE guest: QEMU/TCG, busybox initramfs, module tools
  qemu-system-x86 busybox-static kmod cpio iproute2 zstd xz-utils
  # the benchmarks' disk of the guest's own: an ext4 image filled by mkfs.ext4 -d
  e2fsprogs
  # players and peers used by tests and benchmarks (srt-tools: the loss-recovery peer of Write-Record)
  curl nginx-light gnuplot-nox bc srt-tools
  # VLC for the proxy test (cvlc runs as a non-root user; setpriv is in util-linux)
  vlc-bin vlc-plugin-base util-linux
  # the web page test: headless Chromium driven by Selenium (Debian's python3, not a pyenv one)
  chromium chromium-driver python3-selenium
  procps
)

# siw (software iWARP) for the Soft-RoCE guest, where this host has no RDMA device of its own (the
# guest is used only then): Debian's kernel is built without it, so tests/softroce/guest-boot builds
# it from linux-source-6.1 against the headers of the guest's kernel (the one linux-image-amd64 names).
# Natively nothing of this is needed.
has_rdma_device() { [[ -n $(ls /sys/class/infiniband 2>/dev/null) ]]; }
guest_kernel() { apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }'; }

apt_updated=
apt_update_once() { [[ -n $apt_updated ]] || { apt-get update -q; apt_updated=1; }; }

install_missing() {  # install_missing PACKAGE...: what is not installed yet, with one apt run
  local p missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  if [[ $(id -u) -ne 0 ]]; then
    echo "install-deps: missing packages (${missing[*]}) and not root; run as root or install them" >&2
    exit 1
  fi
  echo "install-deps: installing ${#missing[@]} packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # Daemons among these packages (nginx, prometheus) must not start on installation: tests start
  # their own, on their own ports. A policy-rc.d that says no (invoke-rc.d(8)), unless one exists.
  policy=  # global: the EXIT trap reads it
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\n# installed by rdma-vod install-deps.sh for the length of one apt-get run\nexit 101\n' > "$policy"
    chmod 755 "$policy"
    trap 'rm -f "$policy"' EXIT
  fi
  apt_update_once
  # dpkg's --force-unsafe-io: no fsync per unpacked file, for the several hundred packages of a fresh
  # machine. The price: after a power loss during this install, packages may need 'apt-get install --reinstall'.
  apt-get install -y -q --no-install-recommends -o Dpkg::Options::=--force-unsafe-io "${missing[@]}"
  [[ -n $policy ]] && rm -f "$policy"
  trap - EXIT
}

install_missing "${packages[@]}"
if ! has_rdma_device; then
  kpkg=$(guest_kernel)
  if [[ -z $kpkg && $(id -u) -eq 0 ]]; then apt_update_once >/dev/null; kpkg=$(guest_kernel); fi
  if [[ -n $kpkg ]]; then
    install_missing linux-source-6.1 "${kpkg/linux-image-/linux-headers-}"
  else
    echo "install-deps: cannot resolve the guest's kernel (apt-cache depends linux-image-amd64): the guest will have no siw" >&2
  fi
fi
echo "install-deps: all ${#packages[@]} packages present"
