# SPDX-License-Identifier: LGPL-2.1-or-later
# Debian's chromium and chromium-driver, driven by Debian's python3-selenium, for the browser test
# (browser_check.py) and the browser benchmark (bench/browser-first-frame.py). Chromium and
# ChromeDriver are started here and reached at 127.0.0.1 only: left to themselves, Selenium and
# ChromeDriver connect to "localhost", which a minimal root (no /etc/hosts) cannot resolve. Chromium
# runs headless as root, with nothing that reaches out to the network (the machine has none), and
# autoplay allowed so that no click is needed.
import socket
import subprocess
import sys
import tempfile
import time

from selenium import webdriver


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def wait_for(what, condition, seconds, seen=None):
    """Polls condition() until it is truthy; bounded in time. seen(): what to print on failure."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    fail(f"{what} (waited {seconds} s){': ' + seen() if seen else ''}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port, process, name):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        if process.poll() is not None:
            fail(f"{name} exited with status {process.returncode}")
        return False


class Browser:
    """Headless Chromium and a WebDriver session on it; close() ends both."""

    def __init__(self):
        profile = tempfile.mkdtemp(prefix="vod-chromium-")
        devtools_port, driver_port = free_port(), free_port()
        self.browser = subprocess.Popen(
            ["/usr/bin/chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--autoplay-policy=no-user-gesture-required", "--window-size=1280,900", f"--user-data-dir={profile}",
             "--remote-debugging-address=127.0.0.1", f"--remote-debugging-port={devtools_port}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.chromedriver = subprocess.Popen(["/usr/bin/chromedriver", f"--port={driver_port}", "--allowed-ips=127.0.0.1"],
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for("Chromium's DevTools port opens", lambda: listening(devtools_port, self.browser, "chromium"), 60)
            wait_for("chromedriver listens", lambda: listening(driver_port, self.chromedriver, "chromedriver"), 30)
            options = webdriver.ChromeOptions()
            options.debugger_address = f"127.0.0.1:{devtools_port}"
            self.driver = webdriver.Remote(command_executor=f"http://127.0.0.1:{driver_port}", options=options)
        except BaseException:
            self.chromedriver.kill()
            self.browser.kill()
            raise
        self.driver.set_page_load_timeout(60)

    def close(self):
        try:
            self.driver.quit()
        finally:
            self.chromedriver.kill()
            self.browser.kill()
