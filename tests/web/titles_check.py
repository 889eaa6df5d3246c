#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# A title's pages in headless Chromium (Debian's chromium and chromium-driver, driven by Debian's
# python3-selenium), against a vod-proxy serving one title of three renditions, two audio languages
# (en, de) and two sidecar subtitles (en "Hello", sv "Hej", each shown 1-4 s of every 5 s):
#  - its folder's page shows it as a title card whose poster loads, linking to its watch page;
#  - hls.js (vendored, the full build) plays it past 3 s; the menus list its renditions, audio and
#    subtitles; choosing "de" fetches audio-1 and plays on; choosing subtitles shows a "Hello" cue;
#    unthrottled it reaches the top rendition;
#  - dash.js (vendored) plays its DASH manifest past 3 s, switches to the German audio, and shows a
#    "Hello" cue;
#  - with the network throttled (Chromium's own emulation, below the middle rendition's bandwidth),
#    hls.js settles on a lower rendition than the unthrottled run's and keeps playing; the page shows
#    the rendition playing.
# Screenshots go to the artifact directory.
#
# usage: titles_check.py BASE_URL ARTIFACT_DIR FOLDER TITLE_NAME
import sys
import time
import urllib.parse
import os

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from headless_chromium import Browser, fail, wait_for  # noqa: E402

base, artifacts, folder, title = sys.argv[1:5]
watch_url = f"{base}/watch/{urllib.parse.quote(title)}"

session = Browser()
driver = session.driver


def js(script, *args):
    return driver.execute_script(script, *args)


def cdp(command, params):
    """A DevTools command, through ChromeDriver (the session is a Remote one, attached to Chromium)."""
    # Selenium 4.8 (Debian 12) keeps a connection's commands in _commands; later ones have add_command.
    executor = driver.command_executor
    if hasattr(executor, "add_command"):
        executor.add_command("vodCdp", "POST", "/session/$sessionId/goog/cdp/execute")
    else:
        executor._commands["vodCdp"] = ("POST", "/session/$sessionId/goog/cdp/execute")
    return driver.execute("vodCdp", {"cmd": command, "params": params})


def open_and_play(query, what, before_play=None):
    """Opens the title's watch page, plays it muted, waits past 3 s; returns the <video>."""
    driver.get(watch_url + query)
    if before_play:
        before_play()
    video = driver.find_element(By.ID, "player")
    js("window.vodErrors = []; arguments[0].addEventListener('error', () => window.vodErrors.push('error'));", video)
    js("arguments[0].muted = true; arguments[0].play().catch(e => window.vodErrors.push(String(e)));", video)
    wait_for(f"{what} plays past 3 s", lambda: js("return arguments[0].currentTime", video) > 3.0, 60)
    state = js("return {error: arguments[0].error && arguments[0].error.message, errors: window.vodErrors,"
               " note: document.getElementById('cannot-play').hidden, src: arguments[0].currentSrc}", video)
    if state["error"] or state["errors"] or not state["note"] or not state["src"].startswith("blob:"):
        fail(f"{what} played with errors or not through Media Source Extensions: {state}")
    return video


def menu(name):
    return [o.text for o in Select(driver.find_element(By.ID, f"{name}-menu")).options]


def fetched(fragment, since):
    """Resource URLs fetched after `since` (performance.now() ms) that contain `fragment`."""
    return js("return performance.getEntriesByType('resource').filter(e => e.startTime > arguments[1] && e.name.includes(arguments[0]))"
              ".map(e => e.name)", fragment, since)


def switch_audio_and_subtitles(video, what):
    """Chooses the second audio track (de) and the first subtitles (en) in the page's menus: the
    German audio's segments are fetched and playback goes on; a "Hello" cue shows."""
    wait_for(f"{what}: the menus list 3 renditions, 2 audio and 2 subtitle tracks",
             lambda: len(menu("rendition")) == 4 and len(menu("audio")) == 2 and len(menu("subtitles")) == 3, 30)
    print(f"    {what} menus: renditions {menu('rendition')}, audio {menu('audio')}, subtitles {menu('subtitles')}")
    since = js("return performance.now()")
    at = js("return arguments[0].currentTime", video)
    Select(driver.find_element(By.ID, "audio-menu")).select_by_index(1)
    wait_for(f"{what}: the German audio's segments are fetched after the switch", lambda: fetched("audio-1/", since), 30)
    wait_for(f"{what}: playback goes on 2 s past the audio switch", lambda: js("return arguments[0].currentTime", video) > at + 2, 30)
    Select(driver.find_element(By.ID, "subtitles-menu")).select_by_index(1)
    cue = wait_for(f"{what}: a subtitle cue shows", lambda: js(
        "for (const t of arguments[0].textTracks) if (t.mode === 'showing' && t.activeCues && t.activeCues.length)"
        " return t.activeCues[0].text; return null;", video), 30)
    if cue != "Hello":
        fail(f"{what}: the English subtitles show {cue!r}")
    if js("return arguments[0].error || window.vodErrors.length", video):
        fail(f"{what}: an error after switching the audio and subtitles")
    print(f"PASS: {what}: German audio fetched ({fetched('audio-1/', since)[0].rsplit('/', 2)[-2]}/) and played on; cue {cue!r} shown")


def rendition_trace(video, seconds, what):
    """Plays `seconds` more and returns the renditions of the video fragments hls.js loaded meanwhile."""
    js("const h = arguments[0].vodHls; window.vodFrags = []; h.on(window.Hls.Events.FRAG_LOADED,"
       " (e, d) => { if (d.frag.type === 'main') window.vodFrags.push(h.levels[d.frag.level].height); });", video)
    at = js("return arguments[0].currentTime", video)
    wait_for(f"{what}: plays {seconds} s more", lambda: js("return arguments[0].currentTime", video) > at + seconds, 3 * seconds + 30)
    return js("return window.vodFrags")


try:
    # --- the folder's page: the title is one card, with its poster and watch page
    driver.get(f"{base}/browse/{urllib.parse.quote(folder)}/")
    cards = driver.find_elements(By.CSS_SELECTOR, "article.card.title")
    if len(cards) != 1:
        fail(f"{folder}/: {len(cards)} title cards")
    href = cards[0].find_element(By.TAG_NAME, "a").get_attribute("href")
    if urllib.parse.unquote(urllib.parse.urlparse(href).path) != f"/watch/{title}":
        fail(f"the title card links to {href}")
    wait_for("the title card's poster loads", lambda: js(
        "const i = document.querySelector('article.card.title img'); return i.complete && i.naturalWidth > 0"), 60)
    print(f"PASS: {folder}/ shows the title as a card ({cards[0].text.splitlines()[-1]}), its poster loaded")

    # --- hls.js, unthrottled: the menus, audio and subtitles; it reaches the top rendition
    video = open_and_play("", "the title through hls.js")
    if not js("return !!arguments[0].vodHls", video):
        fail("the title did not play through hls.js")
    top = js("return Math.max(...arguments[0].vodHls.levels.map(l => l.height))", video)
    switch_audio_and_subtitles(video, "hls.js")
    wait_for("hls.js reaches the top rendition unthrottled", lambda: js(
        "const h = arguments[0].vodHls; return h.currentLevel >= 0 && h.levels[h.currentLevel].height === arguments[1]", video, top), 30)
    driver.save_screenshot(f"{artifacts}/title-hlsjs.png")
    shown = driver.find_element(By.ID, "rendition").text
    if not shown.startswith("playing "):
        fail(f"the page does not show the rendition playing: {shown!r}")
    print(f"PASS: hls.js unthrottled plays the top rendition ({top} lines); the page says {shown!r}")

    # --- dash.js: the DASH manifest, the German audio, a cue
    video = open_and_play("?player=dash.js", "the title through dash.js")
    if not js("return !!arguments[0].vodDash", video):
        fail("the title did not play through dash.js")
    switch_audio_and_subtitles(video, "dash.js")
    driver.save_screenshot(f"{artifacts}/title-dashjs.png")

    # --- hls.js on a network throttled once the page has loaded (hls.js with it, and perhaps its
    # first fragments at full speed): it steps down, settles lower and plays on
    driver.get("about:blank")
    cdp("Network.enable", {})
    cdp("Network.setCacheDisabled", {"cacheDisabled": True})  # the unthrottled runs' segments are in the HTTP cache
    kbps = int(os.environ.get("VOD_THROTTLE_KBPS", "300"))
    video = open_and_play("", f"the title through hls.js at {kbps} kb/s", lambda: cdp(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 20, "downloadThroughput": kbps * 1000 / 8, "uploadThroughput": kbps * 1000 / 8}))
    heights = rendition_trace(video, 12, "throttled hls.js")
    print(f"    throttled to {kbps} kb/s: video fragments loaded at heights {heights}; the page says {driver.find_element(By.ID, 'rendition').text!r}")
    if len(heights) < 2 or max(heights[-2:]) >= top:
        fail(f"throttled to {kbps} kb/s, hls.js did not settle below the top rendition ({top} lines): {heights}")
    driver.save_screenshot(f"{artifacts}/title-hlsjs-throttled.png")
    if js("return arguments[0].error || window.vodErrors.length", video):
        fail("throttled hls.js: an error")
    print(f"PASS: throttled to {kbps} kb/s, hls.js settled at {heights[-1]} lines (unthrottled: {top}) and played on")
finally:
    session.close()
