# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the shell tests: free_port prints a port that nothing uses, for TCP and UDP alike.
#
# It picks at random below Linux's ephemeral range (net.ipv4.ip_local_port_range, 32768-60999 by
# default), so no outgoing connection of another process (a browser, a parallel test) can take it
# between this check and the bind of the program under test; a port in that range once was, and a
# proxy failed with "Address already in use". It then checks that both protocols can bind it on
# every address. Tests that run side by side can still draw the same port, so it is rare, not
# impossible: the ranges hold 22000 ports.
free_port() {
  /usr/bin/python3 - <<'PY'
import random, socket
low, high = 10000, 32000
try:
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        first = int(f.read().split()[0])
    high = min(high, first - 1)
except OSError:
    pass
for _ in range(200):
    port = random.randint(low, high)
    try:
        for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
            with socket.socket(socket.AF_INET, kind) as s:
                s.bind(("", port))
    except OSError:
        continue
    print(port)
    break
else:
    raise SystemExit("free_port: no free port below the ephemeral range")
PY
}
