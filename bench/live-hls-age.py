#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# live-hls-age.py PLAYLIST_URL SECONDS: how old a live channel's newest playable media is when a
# player can first have it from vod-proxy, for LL-HLS (a part, by blocking playlist reload) and for
# plain HLS (a complete segment). Follows the playlist with blocking reloads for SECONDS seconds, as
# an LL-HLS player does, and for each new part and each newly complete segment takes
#   age = (when the reload listing it returned) - (the wall-clock time of its first frame)
# The time of a segment's first frame is its EXT-X-PROGRAM-DATE-TIME, which vod-proxy stamps when
# the segment's first byte arrives from vod-server; a part's is that plus the parts before it. So the
# age leaves out the server-to-proxy delivery, which section 7 measures (publish stamp to delivery).
# Prints "KIND COUNT P50_MS P99_MS" for parts and segments, and the time of the first plain playlist
# request (the channel's packaging begins: its session opens, its first segment is made) and the
# median of nine more.
import datetime
import re
import sys
import time
import urllib.request

url, seconds = sys.argv[1], float(sys.argv[2])
HINT = re.compile(r'^#EXT-X-PRELOAD-HINT:TYPE=PART,URI="part-(\d+)\.(\d+)\.ts"$', re.M)


def get(u):
    with urllib.request.urlopen(u, timeout=30) as r:
        return r.read().decode()


def parse(text):
    """{msn: {"pdt": seconds, "parts": [durations], "complete": bool}} and the hint (msn, part)."""
    segments, msn, pdt, parts = {}, None, None, []
    first = int(re.search(r'^#EXT-X-MEDIA-SEQUENCE:(\d+)$', text, re.M).group(1))
    msn = first
    for line in text.splitlines():
        if line.startswith("#EXT-X-PROGRAM-DATE-TIME:"):
            pdt = datetime.datetime.fromisoformat(line.split(":", 1)[1].replace("Z", "+00:00")).timestamp()
        elif line.startswith("#EXT-X-PART:"):
            parts.append(float(re.search(r'DURATION=([0-9.]+)', line).group(1)))
        elif line and not line.startswith("#"):
            segments[msn] = {"pdt": pdt, "parts": parts, "complete": True}
            msn, parts = msn + 1, []
    if parts:
        segments[msn] = {"pdt": pdt, "parts": parts, "complete": False}
    m = HINT.search(text)
    return segments, (int(m.group(1)), int(m.group(2)))


def percentile(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(p / 100 * len(s)))] if s else float("nan")


times = []
for _ in range(10):
    t0 = time.time()
    text = get(url)
    times.append(time.time() - t0)
segments, (msn, part) = parse(text)
seen_complete = {m for m, s in segments.items() if s["complete"]}
part_ages, segment_ages = [], []
deadline = time.time() + seconds
while time.time() < deadline:
    text = get(f"{url}?_HLS_msn={msn}&_HLS_part={part}")
    now = time.time()
    segments, hint = parse(text)
    s = segments.get(msn)
    if s and part < len(s["parts"]) and s["pdt"] is not None:
        part_ages.append(now - (s["pdt"] + sum(s["parts"][:part])))
    for m, seg in segments.items():
        if seg["complete"] and m not in seen_complete:
            seen_complete.add(m)
            segment_ages.append(now - seg["pdt"])
    msn, part = hint
print(f"playlist_first 1 {times[0] * 1000:.1f}")
print(f"playlist {len(times) - 1} {percentile(times[1:], 50) * 1000:.1f}")
print(f"parts {len(part_ages)} {percentile(part_ages, 50) * 1000:.0f} {percentile(part_ages, 99) * 1000:.0f}")
print(f"segments {len(segment_ages)} {percentile(segment_ages, 50) * 1000:.0f} {percentile(segment_ages, 99) * 1000:.0f}")
