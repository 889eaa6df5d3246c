# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced: an RDMA link that can be shaped, in the Soft-RoCE guest (tests/rdma/vod_abr_test.sh,
# bench/abr-benchmarks.sh). rxe cannot cross network namespaces in this kernel (it opens its UDP
# port in the initial one: ../shared/softroce.md, "Shaping an RDMA link"), but siw rides on kernel
# TCP, which is per namespace. So:
#   shaped_link_up NAME: a namespace NAME and a veth pair, 198.18.7.1 here and 198.18.7.2 there,
#     with a siw device at each end ($link_ns, $link_here, $link_there name them);
#   shape RATE: a tbf qdisc of RATE (e.g. 4mbit) on this end, which carries the Read responses;
#   in_ns COMMAND...: COMMAND in the namespace;
#   shaped_link_down: all of it removed (the namespace's name lingers on the host's /run otherwise),
#     once the processes that use its devices have ended (deleting a siw device waits for them).
link_addr=198.18.7.1 link_peer=198.18.7.2
# link_answers ADDR [PREFIX...]: a TCP connect to ADDR's discard port (under PREFIX: ip netns exec
# NS) is refused or taken within a second, which needs the neighbour resolved; only a timeout is not.
link_answers() {
  local rc=0
  timeout 1 "${@:2}" bash -c "exec 3<>/dev/tcp/$1/9" > /dev/null 2>&1 || rc=$?
  [[ $rc -ne 124 ]]
}
shaped_link_up() {
  link_ns=$1 link_here=${1}a link_there=${1}b
  ip netns add "$link_ns"
  ip link add "$link_here" type veth peer name "$link_there"
  ip link set "$link_there" netns "$link_ns"
  ip addr add "$link_addr/24" dev "$link_here"
  ip link set "$link_here" up
  ip -n "$link_ns" addr add "$link_peer/24" dev "$link_there"
  ip -n "$link_ns" link set "$link_there" up
  ip -n "$link_ns" link set lo up
  rdma link add "s$link_here" type siw netdev "$link_here"
  ip netns exec "$link_ns" rdma link add "s$link_there" type siw netdev "$link_there"
  # siw's Read responses are TCP: after an idle spell (a rendition's connection that was not read
  # for a while) TCP would start slow again, which an RDMA NIC never does.
  link_slow_start=$(sysctl -n net.ipv4.tcp_slow_start_after_idle)
  sysctl -qw net.ipv4.tcp_slow_start_after_idle=0
  # Ready: both siw ports ACTIVE and each end answering the other (neighbours resolved), so that
  # the first rdma_cm address resolution across it does not wait out its timeout (seen once: 5 s).
  local _
  for _ in $(seq 100); do
    [[ $(rdma link show "s$link_here/1" 2> /dev/null) == *"state ACTIVE"* &&
      $(ip netns exec "$link_ns" rdma link show "s$link_there/1" 2> /dev/null) == *"state ACTIVE"* ]] && break
    sleep 0.1
  done
  for _ in $(seq 20); do
    link_answers "$link_addr" ip netns exec "$link_ns" && link_answers "$link_peer" && return 0
  done
  echo "shaped_link_up: $link_addr and $link_peer do not answer each other" >&2
  return 1
}
shaped_link_down() {
  timeout 20 ip netns exec "$link_ns" rdma link delete "s$link_there" 2>/dev/null
  timeout 20 rdma link delete "s$link_here" 2>/dev/null
  [[ -z ${link_slow_start:-} ]] || sysctl -qw net.ipv4.tcp_slow_start_after_idle="$link_slow_start"
  ip link del "$link_here" 2>/dev/null
  ip netns del "$link_ns" 2>/dev/null
  return 0
}
# A burst of 16 KB: a larger one lets a 300 KB segment through faster than the rate, and a player
# would measure headroom the link does not have.
shape() { tc qdisc replace dev "$link_here" root tbf rate "$1" burst 16kb latency 400ms; }
in_ns() { ip netns exec "$link_ns" "$@"; }
# link_read_mbps: ib_read_bw's average across the link (64 KiB Reads, 16 of them, on a port of its
# own), in Mbit/s.
source "$(dirname "${BASH_SOURCE[0]}")/../../bench/perftest.sh"
link_read_mbps() {
  local mbytes
  local -a perftest_client=(ip netns exec "$link_ns")  # seen by perftest_figure
  mbytes=$(perftest_bandwidth 65536 16 "$link_addr" -p "$(free_port)")
  awk -v m="$mbytes" 'BEGIN { if (m ~ /^[0-9.]+$/) printf "%.2f", m * 8 * 1.048576 }'
}
# link_read_lat_us: ib_read_lat's typical latency across the link for a 16 KiB Read (vod-client's
# first Read after a seek or switch), in microseconds.
link_read_lat_us() {
  local -a perftest_client=(ip netns exec "$link_ns")
  perftest_figure ib_read_lat 5 16384 "$link_addr" -n 200 -p "$(free_port)"
}
