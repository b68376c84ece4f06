"""Debian's chromium, headless, driven by Selenium through Debian's
chromedriver (never Selenium Manager: nothing is downloaded), and the
journey page served in-process for the fixture tests."""

import contextlib
import os
import threading

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
#: The window the page is made for (issue 26: its lanes fit at 1400 px).
WIDTH, HEIGHT = 1400, 1000
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
                "--disable-dev-shm-usage",
                "--window-size=%d,%d" % (WIDTH, HEIGHT),
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
    """The whole page as ARTIFACTS/<name>.png, WIDTH wide (as an operator
    sees it: the lanes fit), tall enough for every hop; returns the
    path."""
    os.makedirs(ARTIFACTS, exist_ok=True)
    driver.set_window_size(WIDTH, HEIGHT)
    height = driver.execute_script(
        "return document.documentElement.scrollHeight")
    driver.set_window_size(WIDTH, height + 140)
    driver.execute_script(
        "var d = document.getElementById('diagram');"
        "if (d) { d.scrollLeft = 0; } window.scrollTo(0, 0);")
    path = os.path.join(ARTIFACTS, "%s.png" % name)
    assert driver.save_screenshot(path)
    print("screenshot: %s" % path)
    return path


#: What lanes_fit measures, in the page (CSS pixels).
_FIT = """
var diagram = document.getElementById('diagram');
var svg = document.getElementById('journey-svg');
var box = diagram.getBoundingClientRect();
function right(node) { return node.getBoundingClientRect().right; }
return {
  window: window.innerWidth,
  page: document.documentElement.scrollWidth,
  page_client: document.documentElement.clientWidth,
  diagram_right: box.right, diagram_left: box.left,
  diagram_scroll: diagram.scrollWidth, diagram_client: diagram.clientWidth,
  svg_right: right(svg),
  lanes: Array.prototype.map.call(
    document.querySelectorAll('g.lane'), function (g) {
      return [g.getAttribute('data-actor'),
              right(g.querySelector('rect.lane-head'))]; }),
  labels: Array.prototype.map.call(
    document.querySelectorAll('.label, .error-label'), function (t) {
      return [t.textContent, right(t)]; })
};
"""


def lanes_fit(driver):
    """Where the lanes, the labels and the diagram end, in the window:
    a dict of the page's measures (see _FIT)."""
    return driver.execute_script(_FIT)


def console_errors(driver):
    """The page's console errors (a CSP violation or a script error)."""
    return [entry for entry in driver.get_log("browser")
            if entry["level"] == "SEVERE"]
