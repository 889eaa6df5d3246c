#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# A live channel's watch page with a DVR window, in headless Chromium (Debian's chromium and
# chromium-driver, driven by python3-selenium), as the page plays it by default: through the vendored
# hls.js (Chromium's own HLS gives a live stream no seekable range for the scrub bar):
#  - it plays dvr.m3u8, and the scrub bar spans the video's seekable range, the window (at least
#    MIN_WINDOW seconds of it);
#  - moving the scrub bar 20 s back seeks there and plays on, and the page says how far behind live
#    the picture is (12 to 40 s, with its UTC time);
#  - the "live" button goes back to the live edge: the page says "live" (under 10 s behind);
#  - no media error on the way. A screenshot of each position goes to the artifact directory.
#
# usage: dvr_check.py BASE_URL ARTIFACT_DIR CHANNEL MIN_WINDOW
import os
import re
import sys
import urllib.parse

from selenium.webdriver.common.by import By

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from headless_chromium import Browser, fail, wait_for  # noqa: E402

base, artifacts, channel, min_window = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
session = Browser()
driver = session.driver


def js(script, *args):
    return driver.execute_script(script, *args)


STATE = ("const v = document.getElementById('player'), s = document.getElementById('scrub');"
         " return {t: v.currentTime, paused: v.paused, ready: v.readyState, error: v.error && v.error.message,"
         " min: Number(s.min), max: Number(s.max), value: Number(s.value), behind: document.getElementById('behind').value,"
         " src: v.currentSrc, hls: !!v.vodHls, errors: window.vodErrors};")


def state():
    return js(STATE)


def behind_seconds(text):
    """'20:01:12 UTC · 23 s behind live' gives 23; 'live' gives 0; anything else None."""
    m = re.search(r"(\d+) s behind live", text or "")
    if m:
        return int(m.group(1))
    return 0 if (text or "").endswith("live") else None


try:
    driver.get(f"{base}/watch/{urllib.parse.quote(channel, safe='')}")
    if not driver.find_elements(By.ID, "scrub") or not driver.find_elements(By.ID, "go-live"):
        fail("the watch page of a channel with a DVR window has no scrub bar or live button")
    js("window.vodErrors = []; const v = document.getElementById('player');"
       " v.addEventListener('error', () => window.vodErrors.push('error')); v.muted = true;"
       " v.play().catch(e => window.vodErrors.push(String(e)));")
    wait_for("the channel plays", lambda: state()["ready"] >= 3 and state()["t"] > 0 and not state()["paused"], 60, lambda: str(state()))
    s = state()
    if not s["hls"] or not s["src"].startswith("blob:"):
        page = js("return {url: location.href, player: new URLSearchParams(location.search).get('player'), mse: 'MediaSource' in window,"
                  " sources: [...document.querySelectorAll('source')].map(e => e.type + ' ' + e.src),"
                  " cannot_play_shown: !document.getElementById('cannot-play').hidden, hls_js: typeof window.Hls,"
                  " supported: window.Hls ? window.Hls.isSupported() : null, scripts: [...document.scripts].map(e => e.src)};")
        fail(f"the channel did not play through hls.js: {s}; the page: {page}")
    wait_for(f"the scrub bar spans {min_window} s of window", lambda: state()["max"] - state()["min"] >= min_window, 60, lambda: str(state()))
    s = state()
    print(f"    at live: position {s['t']:.1f} s, scrub bar {s['min']:.1f}..{s['max']:.1f}, '{s['behind']}'")
    driver.save_screenshot(f"{artifacts}/watch-dvr-live.png")

    target = s["max"] - 20
    js("const s = document.getElementById('scrub'); s.value = String(arguments[0]); s.dispatchEvent(new Event('input'));"
       " s.dispatchEvent(new Event('change'));", target)
    wait_for("the scrub bar's seek lands 20 s back and plays", lambda: abs(state()["t"] - target) < 6 and state()["ready"] >= 3, 60, lambda: str(state()))
    landed = state()["t"]
    wait_for("it plays on after the seek", lambda: state()["t"] > landed + 2 and not state()["paused"], 60, lambda: str(state()))
    s = state()
    late = behind_seconds(s["behind"])
    print(f"    scrubbed to {target:.1f}: position {s['t']:.1f} s, '{s['behind']}'")
    if late is None or not 12 <= late <= 40 or "UTC" not in s["behind"]:
        fail(f"the page does not say the picture is about 20 s behind live, with its time: {s}")
    driver.save_screenshot(f"{artifacts}/watch-dvr-behind.png")

    driver.find_element(By.ID, "go-live").click()
    def at_live():
        s = state()
        late = behind_seconds(s["behind"])
        return late is not None and late < 10 and s["t"] > landed + 10

    wait_for("the live button goes back to the live edge", at_live, 60, lambda: str(state()))
    s = state()
    print(f"    live button: position {s['t']:.1f} s of {s['max']:.1f}, '{s['behind']}'")
    if s["error"] or s["errors"]:
        fail(f"media errors: {s}")
    driver.save_screenshot(f"{artifacts}/watch-dvr-back-live.png")
    print("PASS: the DVR watch page: the scrub bar spans the window, a scrub 20 s back plays there, the live button returns")
finally:
    session.close()
