#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# ts_continuity.py FILE: every 188-byte packet of an MPEG-TS file has its sync byte, and every PID's
# continuity counters are continuous (+1 per packet with payload, repeated by one without; ISO
# 13818-1 2.4.3.3). Prints the packets, PIDs and breaks; exits 1 on a break.
import sys

data = open(sys.argv[1], "rb").read()
last, bad = {}, 0
for at in range(0, len(data) - 187, 188):
    p = data[at:at + 188]
    if p[0] != 0x47:
        sys.exit(f"no sync byte at {at}")
    pid, cc, payload = ((p[1] & 0x1f) << 8) | p[2], p[3] & 0x0f, p[3] & 0x10
    if pid == 0x1fff:
        continue
    if pid in last:
        want = (last[pid] + 1) % 16 if payload else last[pid]
        if cc != want:
            bad += 1
            print(f"PID {pid:#x} at byte {at}: counter {cc}, {want} expected")
    if payload:
        last[pid] = cc
print(f"{len(data) // 188} packets, {len(last)} PIDs, {bad} counter breaks")
sys.exit(1 if bad else 0)
