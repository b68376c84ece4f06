"""The journey of compute2, traced, on the page and in ministack-trace.

``tools/journey.py --host compute2`` (what ``COMPUTE_HOSTS=2 ./lab.sh``
runs for the second host) traces its attach and detach; the page of each
names compute2 in the compute lane, every hop the compute did carries
compute2, and ``ministack-trace show`` has compute2 in its host column.
Screenshots: ``trace-page-lab-compute2-{attach,detach}.png``.
"""

import os
import re
import subprocess

import pytest

from tests.functional.journey_page import browser
from tests.multinode import conftest as mn

VENV_PYTHON = "/opt/stack/venv/bin/python"


@pytest.fixture(scope="module")
def pages(two_host_lab):
    done = subprocess.run([VENV_PYTHON, os.path.join(mn.REPO, "tools",
                                                     "journey.py"),
                           "--host", "compute2"], cwd="/root",
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "on compute host compute2" in done.stdout
    found = re.findall(r"the journey page: (http://\S+/trace/[0-9a-f-]+)$",
                       done.stdout, re.M)
    assert len(found) == 2, done.stdout[-3000:]
    return found


@pytest.fixture(scope="module")
def driver():
    made = browser.chromium()
    yield made
    made.quit()


@pytest.mark.parametrize("which", ["attach", "detach"])
def test_the_compute_lane_is_compute2s(pages, driver, which):
    url = pages[0 if which == "attach" else 1]
    driver.set_window_size(browser.WIDTH, browser.HEIGHT)
    driver.get(url)
    assert browser.console_errors(driver) == []
    titles = [g.find_element("css selector", "title").get_attribute(
        "textContent") for g in driver.find_elements(
            "css selector", 'g.lane[data-actor="nova-compute"]')]
    assert titles == ["nova-compute (compute2)"], titles
    compute_hops = [g for g in driver.find_elements("css selector", "g.hop")
                    if g.get_attribute("data-actor") == "nova-compute"]
    assert compute_hops
    assert {g.get_attribute("data-host") for g in compute_hops} == \
        {"compute2"}
    fit = browser.lanes_fit(driver)
    assert fit["window"] == browser.WIDTH
    assert all(right <= fit["diagram_right"] for _, right in fit["lanes"])
    assert fit["page"] <= fit["page_client"]
    browser.screenshot(driver, "trace-page-lab-compute2-%s" % which)


def test_ministack_trace_show_names_compute2(pages):
    trace_id = pages[0].rsplit("/", 1)[1]
    shown = subprocess.run(["/opt/stack/venv/bin/ministack-trace", "show",
                            trace_id], capture_output=True, text=True,
                           timeout=60)
    assert shown.returncode == 0, shown.stderr
    header, rows = shown.stdout.splitlines()[1], shown.stdout.splitlines()
    assert " host " in header
    compute = [row for row in rows if " nova-compute " in row]
    assert compute and all(" compute2 " in row for row in compute), rows
