#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# vod-proxy's pages in headless Chromium (Debian's chromium and chromium-driver, driven by Debian's
# python3-selenium): the catalog shows every movie with a picture that loaded, names are shown
# literally; the watch pages of an MP4, an MPEG-TS and a Matroska movie play through the browser's
# own HLS past 3 s without an error, a seek to 30 s becomes playable near 30 s and plays on; the TS
# movie and a live channel (VOD_LIVE_CHANNEL) through the vendored hls.js too (?player=hls.js).
# Screenshots of the pages go to the artifact directory.
#
# usage: browser_check.py BASE_URL ARTIFACT_DIR MP4_NAME TS_NAME MKV_NAME EXACT_NAME...
#   EXACT_NAME: names the catalog page must show, character for character
import os
import sys
import time
import urllib.parse
import urllib.request

from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.by import By

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from headless_chromium import Browser, fail, wait_for  # noqa: E402

base, artifacts, mp4, ts, mkv = sys.argv[1:6]
exact_names = sys.argv[6:]


def page_url(kind, name):
    return f"{base}/{kind}/{urllib.parse.quote(name, safe='')}"


def hlsjs_reaches_live_edge(video, target, what):
    """hls.js starts behind its target latency (PART-HOLD-BACK) when loading was slow, then plays
    faster to catch up, or jumps forward when further back than the watch page allows (watch.js):
    within 30 s it is within 2 target durations of the live edge. Its trace is printed."""
    trace, deadline = [], time.monotonic() + 30
    while time.monotonic() < deadline:
        trace.append(driver.execute_script(
            "const v = arguments[0], h = v.vodHls; return h && [h.latency, h.targetLatency, v.playbackRate, v.currentTime];", video))
        if trace[-1] and 0 < trace[-1][0] <= 2 * target:
            break
        time.sleep(0.2)
    shown = " ".join(f"[{a:.2f} {b:.2f} {c:.2f} {d:.1f}]" for a, b, c, d in trace[::5] + trace[-1:] if a is not None)
    print(f"    hls.js [latency, target latency, playback rate, position] every second: {shown}")
    if not trace[-1] or not 0 < trace[-1][0] <= 2 * target:
        fail(f"{what} (waited 30 s)")


session = Browser()
driver = session.driver
try:
    # --- the catalog page
    driver.get(base + "/")
    cards = driver.find_elements(By.CSS_SELECTOR, "article.card")
    if not cards:
        fail("the catalog page shows no movie")

    def all_loaded():
        return driver.execute_script(
            "return [...document.querySelectorAll('article.card img')].every(i => i.complete && i.naturalWidth > 0)")

    wait_for("every picture on the catalog page loads (naturalWidth > 0)", all_loaded, 90)
    widths = driver.execute_script("return [...document.querySelectorAll('article.card img')].map(i => i.naturalWidth)")
    shown = [c.find_element(By.TAG_NAME, "h2").text for c in cards]
    for name in exact_names:
        if name not in shown:
            fail(f"the catalog page does not show {name!r} literally; it shows {shown!r}")
    try:
        driver.switch_to.alert
        fail("a movie name ran as script (an alert is open)")
    except NoAlertPresentException:
        pass
    driver.save_screenshot(f"{artifacts}/catalog.png")
    print(f"PASS: catalog page: {len(cards)} movies, every picture loaded (widths {sorted(set(widths))}), names literal")

    def play_and_seek(name, kind, shot, query=""):
        """The watch page of `name` plays past 3 s without an error, a seek to 30 s becomes playable
        near 30 s and plays on. Returns the <video>'s source."""
        driver.get(page_url("watch", name) + query)
        video = driver.find_element(By.ID, "player")
        driver.execute_script("window.vodErrors = []; arguments[0].addEventListener('error', () => window.vodErrors.push('error'));", video)
        driver.execute_script("arguments[0].muted = true; arguments[0].play().catch(e => window.vodErrors.push(String(e)));", video)
        wait_for(f"the {kind} plays past 3 s", lambda: driver.execute_script("return arguments[0].currentTime", video) > 3.0, 60)
        state = driver.execute_script("return {error: arguments[0].error && arguments[0].error.message, errors: window.vodErrors,"
                                      " note: document.getElementById('cannot-play').hidden, src: arguments[0].currentSrc}", video)
        if state["error"] or state["errors"] or not state["note"]:
            fail(f"the {kind} played with errors: {state}")
        wait_for("the timeline strip's pictures load", lambda: all(driver.execute_script(
            "return [...document.querySelectorAll('.strip img')].map(i => i.complete && i.naturalWidth > 0)")), 90)
        strip = len(driver.find_elements(By.CSS_SELECTOR, ".strip img"))
        driver.save_screenshot(f"{artifacts}/{shot}.png")
        print(f"PASS: watch page: the {kind} ({state['src']}) played past 3 s without an error; {strip} strip pictures loaded")
        # A seek to 30 s: the browser's own Range requests (progressive), or the segment holding 30 s (HLS)
        driver.execute_script("arguments[0].currentTime = 30;", video)
        wait_for(f"the {kind}: after the seek, readyState >= 3 near 30 s", lambda: driver.execute_script(
            "const v = arguments[0]; return !v.seeking && v.readyState >= 3 && v.currentTime >= 29.5 && v.currentTime < 33;", video), 60)
        wait_for(f"the {kind}: playback goes on after the seek (past 32 s)", lambda: driver.execute_script(
            "return arguments[0].currentTime", video) > 32.0, 60)
        if driver.execute_script("return arguments[0].error || window.vodErrors.length", video):
            fail(f"the {kind}: an error after the seek")
        driver.save_screenshot(f"{artifacts}/{shot}-after-seek.png")
        print(f"PASS: the {kind}: seek to 30 s: readyState >= 3 near 30 s, then played on to "
              f"{driver.execute_script('return arguments[0].currentTime', video):.1f} s")
        return state["src"]

    # Every movie plays through the browser's own HLS: a TS movie's segments are byte ranges of the
    # file, an MP4's and a Matroska's fMP4 remuxed on the fly.
    for name, kind, shot in ((mp4, "MP4", "watch"), (ts, "MPEG-TS movie", "watch-ts"), (mkv, "Matroska movie", "watch-mkv")):
        src = play_and_seek(name, kind, shot)
        if "/hls/" not in src or not src.endswith("/master.m3u8"):
            fail(f"the {kind} did not play from its HLS playlist: {src}")
    # --- the vendored hls.js (for browsers without HLS of their own), asked for with ?player=hls.js
    src = play_and_seek(ts, "MPEG-TS movie through hls.js", "watch-ts-hlsjs", "?player=hls.js")
    if not src.startswith("blob:") or not driver.execute_script("return !!document.getElementById('player').vodHls"):
        fail(f"the MPEG-TS movie did not play through hls.js (Media Source Extensions): {src}")
    # --- ?t=40 starts there (watch.js: a media fragment is not honoured for HLS)
    driver.get(page_url("watch", ts) + "?t=40")
    video = driver.find_element(By.ID, "player")
    driver.execute_script("arguments[0].muted = true; arguments[0].play().catch(() => {});", video)
    wait_for("?t=40 starts the HLS movie near 40 s", lambda: driver.execute_script(
        "const v = arguments[0]; return v.readyState >= 3 && v.currentTime >= 39.5 && v.currentTime < 44;", video), 60)
    print("PASS: ?t=40 starts the MPEG-TS movie near 40 s")
    # --- a live channel, by its LL-HLS playlist: it plays past 3 s, close to the live edge, with the
    # browser's own HLS and with hls.js in its low-latency mode
    live = os.environ.get("VOD_LIVE_CHANNEL")
    if live:
        target = float(os.environ.get("VOD_LIVE_TARGET", "2"))
        for query, player in (("", "the browser's own HLS"), ("?player=hls.js", "hls.js")):
            driver.get(page_url("watch", live) + query)
            video = driver.find_element(By.ID, "player")
            driver.execute_script("window.vodErrors = []; arguments[0].addEventListener('error', () => window.vodErrors.push('error'));", video)
            driver.execute_script("arguments[0].muted = true; arguments[0].play().catch(e => window.vodErrors.push(String(e)));", video)
            wait_for(f"the live channel starts playing ({player})", lambda: driver.execute_script(
                "const v = arguments[0]; return v.readyState >= 3 && !v.paused && v.currentTime > 0;", video), 60)
            start = driver.execute_script("return arguments[0].currentTime", video)
            wait_for(f"the live channel plays 3 s ({player})", lambda: driver.execute_script("return arguments[0].currentTime", video) > start + 3.0, 60)
            if query:
                hlsjs_reaches_live_edge(video, target, "hls.js comes within 2 target durations of the live edge")
            state = driver.execute_script(
                "const v = arguments[0]; return {t: v.currentTime, edge: v.seekable.length ? v.seekable.end(v.seekable.length - 1) : null,"
                " buffered: v.buffered.length ? v.buffered.end(v.buffered.length - 1) : null, error: v.error && v.error.message,"
                " errors: window.vodErrors, src: v.currentSrc, hlsjs: v.vodHls ? v.vodHls.latency : null}", video)
            if state["error"] or state["errors"]:
                fail(f"the live channel played with errors ({player}): {state}")
            if query:
                if state["hlsjs"] is None:
                    fail(f"the live channel did not play through hls.js: {state}")
                behind = state["hlsjs"]  # hls.js's own estimate: the live edge (newest part's end) less the position
            else:
                if "/hls/live/" not in state["src"]:
                    fail(f"the live channel did not play from its LL-HLS playlist: {state['src']}")
                # Chromium's own HLS gives a live stream no seekable range; it fetches each newest segment
                # as it appears, so the end of what it holds is the newest segment's end, and that less
                # the newest EXTINF its start: the position must be within 2 target durations of it.
                edge = state["edge"] if state["edge"] is not None else state["buffered"]
                with urllib.request.urlopen(f"{base}/hls/live/{urllib.parse.quote(live, safe='')}/index.m3u8", timeout=20) as r:
                    newest = [float(l[8:].split(",")[0]) for l in r.read().decode().splitlines() if l.startswith("#EXTINF:")][-1]
                behind = edge - newest - state["t"] if edge is not None else None
            print(f"    live ({player}): position {state['t']:.2f} s, seekable end {state['edge']}, buffered to {state['buffered']}, behind {behind}")
            if behind is None or behind > 2 * target + 1e-6:
                fail(f"the live channel plays {behind} s behind the newest media, more than 2 target durations ({2 * target} s), with {player}: {state}")
            driver.save_screenshot(f"{artifacts}/watch-live{'-hlsjs' if query else ''}.png")
            print(f"PASS: the live channel played 3 s without an error with {player}, {behind:.2f} s behind the newest {'part' if query else 'segment'} "
                  f"(at most 2 target durations, {2 * target:.0f} s)")
            if query:  # a viewer left far behind (here by a seek back) returns to the live edge
                # The seek needs a window reaching 3 target durations behind the position (the
                # playlist keeps 6 segments once it has them; at first it holds fewer).
                wait_for("the live window reaches 3 target durations behind the position", lambda: driver.execute_script(
                    "const v = arguments[0]; return v.seekable.length && v.currentTime - v.seekable.start(0) > 3 * arguments[1];",
                    video, target), 30)
                to, edge, t0 = driver.execute_script(
                    "const v = arguments[0], to = v.currentTime - 3 * arguments[1]; v.currentTime = to;"
                    " return [to, v.seekable.end(v.seekable.length - 1), performance.now()];", video, target)
                seen = []

                def returned():
                    """hls.js is within 2 target durations of the live edge again, by a jump: its
                    position is ahead of where playing on from the seek at 1x would be by more than
                    a target duration (its latency reads stale while it seeks, so the jump itself
                    may come before any sample shows it behind)."""
                    seen.append(driver.execute_script(
                        "const v = arguments[0]; return [v.vodHls.latency, v.currentTime, v.seeking, performance.now()];", video))
                    latency, position, seeking, now = seen[-1]
                    return not seeking and 0 < latency <= 2 * target and position - to > (now - t0) / 1000 + target

                wait_for("hls.js, sought back 3 target durations, jumps to within 2 of the live edge", returned, 30,
                         lambda: f"sought to {to:.2f} (edge {edge:.2f}); [latency, position, seeking, ms]: {seen[::5] + seen[-1:]}")
                latency, position, _, now = seen[-1]
                print(f"    sought to {to:.2f} s, {edge - to:.1f} s behind the live edge; after {(now - t0) / 1000:.1f} s at {position:.2f} s,"
                      f" {latency:.2f} s behind")
                if driver.execute_script("return arguments[0].error || window.vodErrors.length", video):
                    fail("hls.js: an error after the seek back")
                print(f"PASS: hls.js sought back {edge - to:.1f} s behind the live edge jumps back within 2 target durations of it")
finally:
    session.close()
