"""Debian's chromium, headless, driven by Selenium through Debian's
chromedriver (never Selenium Manager: nothing is downloaded), and the
journey page served in-process for the fixture tests."""

import contextlib
import os
import threading

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
#: Where the screenshots are kept (a test artifact, next to the logs).
ARTIFACTS = os.environ.get("MINISTACK_ARTIFACTS_DIR",
                           "/opt/stack/logs/artifacts")


def chromium():
    """A headless chromium WebDriver, or a skip naming what is missing
    (devstack/lib/packages installs chromium and chromium-driver)."""
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            pytest.skip("%s is not installed (devstack/lib/packages)"
                        % path)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu",
                "--disable-dev-shm-usage", "--window-size=1500,1000",
                "--disable-extensions", "--no-first-run"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER),
                            options=options)


@contextlib.contextmanager
def served(app):
    """``app`` on an ephemeral 127.0.0.1 port; yields its base URL."""
    from werkzeug.serving import make_server
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield "http://127.0.0.1:%d" % server.server_port
    finally:
        server.shutdown()
        thread.join()


def screenshot(driver, name):
    """The whole page as ARTIFACTS/<name>.png; returns the path."""
    os.makedirs(ARTIFACTS, exist_ok=True)
    # Wide enough for the diagram and the details side by side, tall
    # enough for every hop, scrolled to the first lane.
    width = driver.execute_script(
        "var svg = document.getElementById('journey-svg');"
        "return Math.max(document.documentElement.scrollWidth,"
        " svg ? svg.width.baseVal.value + 420 : 0)")
    driver.set_window_size(width + 40, 1000)
    height = driver.execute_script(
        "return document.documentElement.scrollHeight")
    driver.set_window_size(width + 40, height + 140)
    driver.execute_script(
        "var d = document.getElementById('diagram');"
        "if (d) { d.scrollLeft = 0; } window.scrollTo(0, 0);")
    path = os.path.join(ARTIFACTS, "%s.png" % name)
    assert driver.save_screenshot(path)
    print("screenshot: %s" % path)
    return path


def console_errors(driver):
    """The page's console errors (a CSP violation or a script error)."""
    return [entry for entry in driver.get_log("browser")
            if entry["level"] == "SEVERE"]
