#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Hostile HTTP clients for vod-proxy's limits test, on loopback only, with the standard library.

Each subcommand does one thing, bounded in count and time, and prints what it saw as key=value
pairs on one line (the shell test asserts on them):

  idle PORT --count N [--pid PID]     open N connections that send nothing; the proxy's VmRSS
  cap PORT --count N                  open N idle connections; how many got a 503 or were closed
  slowloris PORT [--interval S]       a request header one byte per S seconds; when it was closed
  keepalive PORT                      one request, then idle on the open connection; when closed
  request PORT [--host H|--no-host]   one request; its status line and the body's first line
  slowlive PORT PATH --out FILE       an HTTP/1.0 live viewer with a small receive buffer that reads
                                      --rate bytes a second for --seconds; the body goes to FILE.
                                      With --until-skip, it reads on (at most --max-seconds) until
                                      the proxy's /metrics on PORT count a live skip
  slowget PORT PATH --out FILE        one GET read at --rate bytes a second through a 64 KiB receive
                                      buffer (curl's --limit-rate leaves the kernel free to buffer
                                      the whole body ahead of it on loopback), to its end or
                                      --max-seconds; the body goes to FILE
"""
import argparse
import os
import socket
import sys
import time
import urllib.request

LOOPBACK = "127.0.0.1"


def connect(port, timeout=5.0):
    return socket.create_connection((LOOPBACK, port), timeout=timeout)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def peek_state(sock):
    """'open' (nothing to read), 'closed' (EOF or reset), or the first line the peer sent."""
    sock.setblocking(False)
    try:
        data = sock.recv(4096)
    except BlockingIOError:
        return "open"
    except OSError:
        return "closed"
    finally:
        sock.setblocking(True)
    if not data:
        return "closed"
    return data.split(b"\r\n", 1)[0].decode("latin-1")


def wait_closed(sock, limit):
    """Seconds until the peer closed `sock` (reading and discarding), or None after `limit`."""
    start = time.monotonic()
    first = b""
    while time.monotonic() - start < limit:
        sock.settimeout(max(0.05, limit - (time.monotonic() - start)))
        try:
            data = sock.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            return time.monotonic() - start, first
        if not data:
            return time.monotonic() - start, first
        first = first or data
    return None, first


def open_many(port, count, deadline):
    socks = []
    for _ in range(count):
        if time.monotonic() > deadline:
            break
        try:
            socks.append(connect(port))
        except OSError as e:
            print(f"connect failed after {len(socks)}: {e}", file=sys.stderr)
            break
    return socks


def cmd_idle(a):
    socks = open_many(a.port, a.count, time.monotonic() + 30)
    time.sleep(a.settle)
    rss = rss_kib(a.pid) if a.pid else -1
    states = [peek_state(s) for s in socks]
    print(f"opened={len(socks)} open={states.count('open')} closed={states.count('closed')} rss_kib={rss}")
    for s in socks:
        s.close()
    return 0


def cmd_cap(a):
    socks = open_many(a.port, a.count, time.monotonic() + 30)
    time.sleep(a.settle)
    states = [peek_state(s) for s in socks]
    refused = [st for st in states if st.startswith("HTTP/1.1 503")]
    other = [st for st in states if st not in ("open", "closed") and not st.startswith("HTTP/1.1 503")]
    print(f"opened={len(socks)} open={states.count('open')} refused_503={len(refused)} closed={states.count('closed')} other={len(other)}")
    if a.hold:
        # Still holding them: the caller checks that an honest request is refused too, then signals.
        sys.stdout.flush()
        sys.stdin.readline()
    for s in socks:
        s.close()
    return 0


def cmd_slowloris(a):
    s = connect(a.port)
    header = b"GET /static/style.css HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-Slow: " + b"a" * 10000
    start = time.monotonic()
    sent = 0
    closed_after = None
    reply = ""
    while time.monotonic() - start < a.limit and sent < len(header):
        try:
            s.sendall(header[sent:sent + 1])
            sent += 1
        except OSError:
            closed_after = time.monotonic() - start
            break
        after, first = wait_closed(s, a.interval)
        if first:
            reply = first.split(b"\r\n", 1)[0].decode("latin-1")
        if after is not None:
            closed_after = time.monotonic() - start
            break
    print(f"sent={sent} closed_after={'%.1f' % closed_after if closed_after is not None else 'never'} reply={reply!r}")
    return 0


def read_response(s):
    """Reads one response with a Content-Length; returns (status line, body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = s.recv(65536)
        if not chunk:
            break
        body += chunk
    return lines[0], body


def cmd_keepalive(a):
    s = connect(a.port, timeout=10)
    s.sendall(b"GET /static/style.css HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    status, _ = read_response(s)
    after, first = wait_closed(s, a.limit)
    print(f"status={status!r} closed_after={'%.1f' % after if after is not None else 'never'} extra={len(first)}")
    return 0


def cmd_request(a):
    s = connect(a.port, timeout=10)
    lines = [f"GET {a.path} HTTP/{a.version}"]
    if not a.no_host:
        lines.append(f"Host: {a.host}")
    lines.append("Connection: close")
    s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
    status, body = read_response(s)
    first = body.split(b"\n", 1)[0].decode("utf-8", "replace")
    print(f"status={status!r} body={first!r}")
    return 0


def live_skips(port):
    """vod_proxy_live_skips_total from the proxy's /metrics on PORT (0 when it cannot be read)."""
    try:
        with urllib.request.urlopen(f"http://{LOOPBACK}:{port}/metrics", timeout=5) as r:
            for line in r.read().decode("latin-1").splitlines():
                if line.startswith("vod_proxy_live_skips_total "):
                    return float(line.split()[1])
    except OSError:
        pass
    return 0


def slow_read(a, request, rcvbuf, timeout, step, go_on, end_on_short):
    """Sends REQUEST to a.port through a socket with a small receive buffer, then reads a.rate bytes a
    second in steps of STEP seconds while go_on(seconds since the request) holds. A step that got
    less than it wanted ends the read if END_ON_SHORT (the body's end, or nothing for TIMEOUT), else
    only if it got nothing. The body goes to a.out; prints the status line and the body's size."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)  # before connect: the window stays small
    s.settimeout(timeout)
    s.connect((LOOPBACK, a.port))
    s.sendall(request.encode())
    start = time.monotonic()
    data = bytearray()
    while go_on(time.monotonic() - start):
        want = int(a.rate * step)
        got = 0
        while got < want:
            try:
                chunk = s.recv(want - got)
            except socket.timeout:
                break
            if not chunk:
                break
            data += chunk
            got += len(chunk)
        if got < want and (end_on_short or got == 0):
            break
        time.sleep(step)
    s.close()
    head, _, body = bytes(data).partition(b"\r\n\r\n")
    with open(a.out, "wb") as f:
        f.write(body)
    status = head.split(b"\r\n", 1)[0].decode("latin-1")
    print(f"status={status!r} body_bytes={len(body)} seconds={time.monotonic() - start:.1f}")
    return 0


def cmd_slowlive(a):
    checked = 0.0

    def go_on(elapsed):
        nonlocal checked
        if elapsed < a.seconds:
            return True
        if not a.until_skip or elapsed >= a.max_seconds:
            return False
        if elapsed - checked < 1.0:
            return True
        checked = elapsed
        return live_skips(a.port) < 1

    return slow_read(a, f"GET {a.path} HTTP/1.0\r\nHost: 127.0.0.1:{a.port}\r\n\r\n", 4096, 10, 0.1, go_on, end_on_short=False)


def cmd_slowget(a):
    return slow_read(a, f"GET {a.path} HTTP/1.1\r\nHost: 127.0.0.1:{a.port}\r\nConnection: close\r\n\r\n", 65536, 30, 0.05,
                     lambda elapsed: elapsed < a.max_seconds, end_on_short=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("idle")
    c.add_argument("port", type=int)
    c.add_argument("--count", type=int, required=True)
    c.add_argument("--pid", type=int)
    c.add_argument("--settle", type=float, default=1.0)
    c = sub.add_parser("cap")
    c.add_argument("port", type=int)
    c.add_argument("--count", type=int, required=True)
    c.add_argument("--settle", type=float, default=1.0)
    c.add_argument("--hold", action="store_true", help="keep them open until a line arrives on stdin")
    c = sub.add_parser("slowloris")
    c.add_argument("port", type=int)
    c.add_argument("--interval", type=float, default=1.0)
    c.add_argument("--limit", type=float, default=30.0)
    c = sub.add_parser("keepalive")
    c.add_argument("port", type=int)
    c.add_argument("--limit", type=float, default=30.0)
    c = sub.add_parser("request")
    c.add_argument("port", type=int)
    c.add_argument("--host", default="127.0.0.1")
    c.add_argument("--no-host", action="store_true")
    c.add_argument("--version", default="1.1")
    c.add_argument("--path", default="/static/style.css")
    c = sub.add_parser("slowlive")
    c.add_argument("port", type=int)
    c.add_argument("path")
    c.add_argument("--out", required=True)
    c.add_argument("--rate", type=int, default=20000, help="bytes a second")
    c.add_argument("--seconds", type=float, default=8.0)
    # When the viewer falls behind depends on how much the kernel's send buffer takes on loopback
    # (autotuned), not only on the proxy's backlog: a test of the jump reads on until it happened.
    c.add_argument("--until-skip", action="store_true", help="after --seconds, read on until the proxy counts a live skip")
    c.add_argument("--max-seconds", type=float, default=60.0)
    c = sub.add_parser("slowget")
    c.add_argument("port", type=int)
    c.add_argument("path")
    c.add_argument("--out", required=True)
    c.add_argument("--rate", type=int, default=1000000, help="bytes a second")
    c.add_argument("--max-seconds", type=float, default=120.0)
    a = p.parse_args()
    commands = {"idle": cmd_idle, "cap": cmd_cap, "slowloris": cmd_slowloris, "keepalive": cmd_keepalive, "request": cmd_request,
                "slowlive": cmd_slowlive, "slowget": cmd_slowget}
    return commands[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
