"""A real failed attach, traced, stepped through on the journey page and
asked about on its quiz.

The seed's first failure armed with ``ministack-fault`` (the driver
fails right after Cinder mapped the volume), the attach made and traced
as a user does it (``openstack --os-profile KEY server add volume``),
the recovery waited for with ``ministack-fault watch``; then, in
headless chromium, the trace's page shows the failed hop in red and the
undo steps labelled as the recovery, stepping to the failure names the
seed's recovery path, and the quiz says a recovery put the volume back
to ``available``. Screenshots: ``trace-page-lab-failed-attach.png``,
``trace-quiz-lab-failed-attach.png``.
"""

import json
import os
import re
import shutil

import pytest

from tests.functional.journey_page import browser
from tests.support import waiting
from tests.support.login_shell import checked
from tests.support.login_shell import login_shell

pytestmark = pytest.mark.slow

PAGE_URL = "http://127.0.0.1:8780/trace/%s"


sh = checked


def _hop_names(trace_id):
    done = login_shell("ministack-trace show %s --json" % trace_id)
    if done.returncode != 0:
        return []
    return [hop["name"] for hop in json.loads(done.stdout)["hops"]]


@pytest.fixture(scope="module")
def failed_trace():
    if not os.path.exists("/etc/openstack/clouds.yaml") or \
            shutil.which("ministack-fault", path="/usr/local/bin") is None:
        pytest.skip("no deployed lab with ministack-fault (./lab.sh)")
    vid = sh("openstack --os-cloud ministack volume create --size 1 "
             "traced-failed-attach -f value -c id").strip()
    try:
        waiting.wait_for("volume available", lambda: sh(
            "openstack --os-cloud ministack volume show %s -f value -c "
            "status" % vid).strip() == "available", timeout=120, interval=1)
        sh("ministack-fault arm driver-attach --volume %s" % vid)
        out = sh("KEY=$(sed -n 's/^OSPROFILER_HMAC_KEY=//p' "
                 "/etc/ministack/passwords)\n"
                 "openstack --os-cloud ministack --os-profile \"$KEY\" "
                 "server add volume demo %s 2>&1" % vid)
        trace_id = re.search(r"^Trace ID: (\S+)$", out, re.M).group(1)
        report = sh("ministack-fault watch --volume %s" % vid, timeout=600)
        assert "clean: the seed's end state." in report, report[-3000:]
        # The host's recovery spans reach the store a moment later.
        waiting.wait_for("the recovery in trace %s" % trace_id,
                         lambda: _hop_names(trace_id),
                         lambda names: "DELETE /v3/{project}/attachments/"
                                       "{id}" in names,
                         timeout=60, interval=1)
        yield trace_id
    finally:
        login_shell("ministack-fault disarm")
        login_shell("openstack --os-cloud ministack volume delete %s" % vid)


@pytest.fixture(scope="module")
def driver():
    made = browser.chromium()
    yield made
    made.quit()


def test_the_page_steps_to_the_failure_then_the_recovery(failed_trace,
                                                         driver):
    driver.set_window_size(browser.WIDTH, browser.HEIGHT)
    driver.get(PAGE_URL % failed_trace)
    assert browser.console_errors(driver) == []
    failed = driver.find_elements("css selector", "g.hop.failed")
    assert failed, "no failed hop drawn"
    recovery = [g.get_attribute("data-recovery") for g in
                driver.find_elements("css selector", "g.hop.recovery")]
    assert "attachment_delete" in recovery, recovery
    bands = [g.get_attribute("data-phase") for g in
             driver.find_elements("css selector", "g.phase")]
    assert bands[-1] == "recovery", bands
    # Step to the failure (the arrow keys, as a learner): the seed's
    # recovery path is named.
    from selenium.webdriver.common.keys import Keys
    target = failed[0].get_attribute("data-hop-id")
    ids = [g.get_attribute("data-hop-id")
           for g in driver.find_elements("css selector", "g.hop")]
    body = driver.find_element("css selector", "body")
    for _ in range(ids.index(target) + 1):
        body.send_keys(Keys.ARROW_RIGHT)
    panel = driver.find_element("id", "step-panel")
    assert panel.get_attribute("data-hop-id") == target
    box = driver.find_element("id", "recovery-path")
    assert box.find_element("css selector", "h3").text == (
        "When it goes wrong: Driver attach fails after Cinder mapped the "
        "volume")
    items = [li.text for li in box.find_elements("css selector", "li")]
    assert any("attachment_delete" in item for item in items), items
    browser.screenshot(driver, "trace-page-lab-failed-attach")


def test_the_quiz_says_a_recovery_released_the_volume(failed_trace,
                                                     driver):
    driver.set_window_size(browser.WIDTH, browser.HEIGHT)
    driver.get(PAGE_URL % failed_trace + "/quiz")
    assert browser.console_errors(driver) == []
    questions = driver.execute_script(
        "return JSON.parse(document.getElementById('quiz-data')"
        ".textContent)")
    by_id = {q["id"]: q for q in questions}
    assert by_id["q-available"]["answer"] == "recovery", by_id["q-available"]
    section = driver.find_element("id", "q-available")
    [radio] = [r for r in section.find_elements("css selector",
                                                "input[type=radio]")
               if r.get_attribute("value") == "recovery"]
    radio.click()
    section.find_element("css selector", "button.check").click()
    assert section.get_attribute("data-result") == "right"
    browser.screenshot(driver, "trace-quiz-lab-failed-attach")
