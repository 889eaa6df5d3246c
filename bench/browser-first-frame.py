#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# The time to the first frame in headless Chromium (tests/web/headless_chromium.py), through
# vod-proxy: a <video> element is given a source and the clock runs until the browser presents its
# first frame (requestVideoFrameCallback). Sources: the MP4 progressively (/movies/NAME, Range
# requests), the same MP4 through its HLS playlist (fMP4 remuxed on the fly), and the TS movie through
# its HLS playlist (byte ranges of the file). Each source RUNS times in a fresh page; the first run
# of each is cold (the proxy's facts, remuxes and the browser's cache empty), the others warm.
#
# usage: browser-first-frame.py BASE_URL RUNS MP4_NAME TS_NAME
# Prints one line per source: FIRSTFRAME source=... cold_ms=... warm_p50_ms=... runs=...
import os
import statistics
import sys
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "web"))
from headless_chromium import Browser, fail  # noqa: E402

base, runs, mp4, ts = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
q = lambda name: urllib.parse.quote(name, safe="")  # noqa: E731
sources = [("mp4_progressive", f"/movies/{q(mp4)}"), ("mp4_hls_fmp4", f"/hls/{q(mp4)}/master.m3u8"),
           ("ts_hls_ranges", f"/hls/{q(ts)}/master.m3u8")]
FIRST_FRAME = """
const [src, done] = arguments;
const v = document.createElement('video');
v.muted = true;
v.autoplay = true;
document.body.appendChild(v);
const t0 = performance.now();
const timer = setTimeout(() => done({error: 'no frame within 30 s: ' + (v.error && v.error.message)}), 30000);
v.requestVideoFrameCallback(() => { clearTimeout(timer); done({ms: performance.now() - t0}); });
v.addEventListener('error', () => { clearTimeout(timer); done({error: 'error ' + (v.error && v.error.message)}); });
v.src = src;
"""
session = Browser()
driver = session.driver
driver.set_script_timeout(40)
try:
    for name, path in sources:
        times = []
        for _ in range(runs):
            driver.get(base + "/static/style.css")  # a fresh document of the proxy's origin
            r = driver.execute_async_script(FIRST_FRAME, base + path)
            if "error" in r:
                fail(f"{name}: {r['error']}")
            times.append(r["ms"])
        warm = statistics.median(times[1:]) if len(times) > 1 else times[0]
        print(f"FIRSTFRAME source={name} cold_ms={times[0]:.1f} warm_p50_ms={warm:.1f} runs={runs}")
finally:
    session.close()
