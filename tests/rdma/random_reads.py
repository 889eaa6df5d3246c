#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# random_reads.py MOUNTED LOCAL READS SEED: READS reads of random ranges (1 to 300000 bytes) of the
# file MOUNTED, each compared with the same range of LOCAL; exits 1 at the first difference, saying
# where. One process makes all its reads (vod_mount_test.sh runs several at once): a dd and a cmp
# per read cost a process start each, which under TCG is most of the time such a check takes.
import os
import random
import sys

mounted, local, reads, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
size = os.stat(local).st_size
rng = random.Random(seed)


def read_range(fd, off, length):
    """The range's bytes, read until it is whole or the file ends (a read may return less)."""
    chunks = []
    while length > 0:
        b = os.pread(fd, length, off)
        if not b:
            break
        chunks.append(b)
        off, length = off + len(b), length - len(b)
    return b"".join(chunks)


with open(mounted, "rb", buffering=0) as m, open(local, "rb", buffering=0) as f:
    for _ in range(reads):
        off, length = rng.randrange(size), rng.randrange(300000) + 1
        got, want = read_range(m.fileno(), off, length), read_range(f.fileno(), off, length)
        if got != want:
            sys.exit(f"FAIL: {mounted} bytes {off}+{length} differ from {local} ({len(got)} bytes read, {len(want)} expected)")
