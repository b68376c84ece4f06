"""The deployed lab's journey page, in headless chromium, for a real
traced attach and detach.

tools/journey.py (the operator's journey, what ./lab.sh runs) attaches a
new volume to the demo server and detaches it, each request carrying
osprofiler's signed trace headers; it prints each trace's hop table and
the page's URL. This test runs it, opens both URLs in chromium (a 1400
px window) and checks that the page draws every hop the seed names, from
all three daemons plus os-brick and libvirt, under the seed's lanes and
the phases of each journey (the attach's, the detach's), one arrow per
REST call (nova's client and cinder-api's entry of one request) and
every lane inside the window; and that ``ministack-trace show`` prints
the same page's URL. The pages are kept as screenshots
(``browser.ARTIFACTS``/trace-page.png, trace-page-detach.png). Then it
steps through both pages (each hop, the packet on it, the state after
the handshake calls) and answers each quiz from its trace.
"""

import os
import re
import subprocess

import pytest

from ministack.trace import phases
from ministack_course import web
from tests.functional.journey_page import browser

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..",
                                    ".."))
VENV_PYTHON = "/opt/stack/venv/bin/python"

#: (kind, what the hop's name and label say, lane) of every hop the seed
#: names. os-brick: this lab's iSCSI initiator is QEMU's libiscsi, so
#: os-brick gives the host's connector (get_connector_properties) and
#: QEMU connects; any os-brick call is the os-brick hop.
ATTACH_HOPS = [
    ("REST", r"^POST /v2\.1/servers/\{id\}/os-volume_attachments ",
     "nova-api"),
    ("CALL", r"^reserve_block_device_name ", "rabbitmq"),
    ("CALL", r"^reserve_block_device_name ", "nova-compute"),
    ("REST", r"^POST /v3/\{project\}/attachments ", "cinder"),
    ("CAST", r"^attach_volume ", "rabbitmq"),
    ("CAST", r"^attach_volume ", "nova-compute"),
    ("LIBRARY", r"^os_brick ", "os-brick"),
    ("REST", r"^PUT /v3/\{project\}/attachments/\{id\} ", "cinder"),
    ("LIBRARY", r"^virDomainAttachDeviceFlags ", "libvirt"),
    ("REST", r"attachments/\{id\}/action .*os-complete", "cinder"),
]
DETACH_HOPS = [
    ("REST", r"^DELETE /v2\.1/servers/\{id\}/os-volume_attachments/\{id\} ",
     "nova-api"),
    ("REST", r"volumes/\{id\}/action .*os-begin_detaching", "cinder"),
    ("CAST", r"^detach_volume ", "rabbitmq"),
    ("CAST", r"^detach_volume ", "nova-compute"),
    ("LIBRARY", r"^virDomainDetachDeviceFlags ", "libvirt"),
    ("LIBRARY", r"^os_brick ", "os-brick"),
    ("REST", r"^DELETE /v3/\{project\}/attachments/\{id\} ", "cinder"),
]


@pytest.fixture(scope="module")
def journey_output():
    if not os.path.exists("/etc/openstack/clouds.yaml"):
        pytest.skip("no deployed lab (devstack/stack.sh)")
    done = subprocess.run([VENV_PYTHON, os.path.join(REPO, "tools",
                                                     "journey.py")],
                          cwd="/root", capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def driver():
    driver = browser.chromium()
    yield driver
    driver.quit()


def _pages(out):
    return re.findall(r"the journey page: (http://\S+/trace/[0-9a-f-]+)$",
                      out, re.M)


def _drawn(driver, url):
    """The hops the page drew: [(kind, name + label, lane, failed)]."""
    driver.set_window_size(browser.WIDTH, browser.HEIGHT)
    driver.get(url)
    lanes = [g.get_attribute("data-actor")
             for g in driver.find_elements("css selector", "g.lane")]
    assert lanes[:8] == [actor for actor, _ in web.ACTORS]
    assert browser.console_errors(driver) == []
    return [(g.get_attribute("data-kind"),
             g.get_attribute("data-name") + " " +
             g.find_element("css selector", ".label").text,
             g.get_attribute("data-actor"),
             "failed" in g.get_attribute("class"))
            for g in driver.find_elements("css selector", "g.hop")]


def _assert_every_hop(drawn, expected):
    missing = [(kind, pattern, lane) for kind, pattern, lane in expected
               if not any(k == kind and a == lane and re.search(pattern, n)
                          for k, n, a, _ in drawn)]
    assert not missing, "missing hops %s in %s" % (missing, drawn)
    assert not [hop for hop in drawn if hop[3]], "failed hops: %s" % drawn


def test_journey_prints_the_hops_and_the_pages(journey_output):
    out = journey_output
    assert "The attach, hop by hop (osprofiler trace " in out
    assert "The detach, hop by hop (osprofiler trace " in out
    assert "no trace" not in out and "no span stored" not in out
    assert "reserve_block_device_name" in out      # the hop table
    assert len(_pages(out)) == 2


def test_ministack_trace_show_prints_the_page(journey_output):
    """The CLI's table of each journey, its phases, one row per REST call,
    then the page's URL (miniapi's [trace] listen_port)."""
    for url, journey in zip(_pages(journey_output), ("attach", "detach"),
                            strict=True):
        trace_id = url.rsplit("/", 1)[1]
        shown = subprocess.run(
            ["/opt/stack/venv/bin/ministack-trace", "show", trace_id],
            capture_output=True, text=True, timeout=60, check=False)
        assert shown.returncode == 0, shown.stderr
        lines = shown.stdout.splitlines()
        assert lines[0].startswith("trace %s  (%s, " % (trace_id, journey))
        assert "server ms" in lines[1]
        assert lines[-1] == "the journey page: %s" % url
        table = "\n".join(lines[2:-1])
        for phase in phases.PHASES[journey]:
            assert " %s " % phase in table, (phase, table)
        assert " cinder-api " not in table      # one row per REST call


def test_the_page_draws_the_traced_attach(journey_output, driver):
    attach, _ = _pages(journey_output)
    drawn = _drawn(driver, attach)
    _assert_every_hop(drawn, ATTACH_HOPS)
    bands = [g.get_attribute("data-phase")
             for g in driver.find_elements("css selector", "g.phase")]
    assert bands == list(phases.ATTACH_PHASES)
    _assert_one_arrow_per_rest_call(driver)
    _assert_lanes_fit(driver)
    # A click shows the hop's request id and status.
    hop = [g for g in driver.find_elements("css selector", "g.hop")
           if g.get_attribute("data-name") ==
           "POST /v3/{project}/attachments"][0]
    hop.click()
    panel = driver.find_element("css selector", "#hop-details")
    assert re.search(r"request id\s+req-[0-9a-f-]{36}", panel.text)
    assert re.search(r"status\s+200", panel.text)
    # No secret: every password-like value masked, no keystone token.
    page = driver.page_source
    assert not re.search(r'password\\?": ?\\?"(?!\*\*\*)', page)
    assert "gAAAA" not in page
    browser.screenshot(driver, "trace-page")


def test_the_page_draws_the_traced_detach(journey_output, driver):
    _, detach = _pages(journey_output)
    _assert_every_hop(_drawn(driver, detach), DETACH_HOPS)
    bands = [g.get_attribute("data-phase")
             for g in driver.find_elements("css selector", "g.phase")]
    assert bands == list(phases.DETACH_PHASES)
    assert driver.find_element("css selector", "#journey-kind").text == \
        "detach"
    by_phase = {}
    for g in driver.find_elements("css selector", "g.hop"):
        by_phase.setdefault(g.get_attribute("data-phase"), []).append(
            g.get_attribute("data-name"))
    assert "DELETE /v3/{project}/attachments/{id}" in \
        by_phase["attachment_delete"]
    assert "virDomainDetachDeviceFlags" in by_phase["unplug + disconnect"]
    assert any(name.endswith("(os-begin_detaching)")
               for name in by_phase["begin_detaching"])
    _assert_one_arrow_per_rest_call(driver)
    _assert_lanes_fit(driver)
    browser.screenshot(driver, "trace-page-detach")


def _assert_one_arrow_per_rest_call(driver):
    """Every Cinder call is one arrow from nova's lane (nova-api or
    nova-compute) to Cinder's, with the server's time in its label; no
    arrow of cinder-api's own entry span."""
    rest = [g for g in driver.find_elements("css selector", "g.hop")
            if g.get_attribute("data-kind") == "REST"
            and g.get_attribute("data-actor") == "cinder"]
    assert rest
    for g in rest:
        assert g.get_attribute("data-from") in ("nova-api", "nova-compute")
        assert g.get_attribute("data-server-id"), g.get_attribute(
            "data-name")
        assert " \u00b7 server " in g.find_element(
            "css selector", ".label").text
    drawn = {g.get_attribute("data-hop-id")
             for g in driver.find_elements("css selector", "g.hop")}
    assert not drawn & {g.get_attribute("data-server-id") for g in rest}


def _assert_lanes_fit(driver):
    fit = browser.lanes_fit(driver)
    assert fit["window"] == browser.WIDTH
    assert fit["lanes"][-1][0] == "guest"
    assert all(right <= fit["diagram_right"] for _, right in fit["lanes"])
    assert all(right <= fit["diagram_right"]
               for _, right in fit["labels"]), fit["labels"]
    assert fit["page"] <= fit["page_client"]


# --- the step-through and the quiz of the real traces --------------------

_STEP = """
var panel = document.getElementById('step-panel');
var state = {};
Array.prototype.forEach.call(document.querySelectorAll('#step-state tr'),
  function (tr) {
    state[tr.getAttribute('data-field')] =
      tr.querySelector('.value').textContent; });
var dot = document.getElementById('packet');
return {hop: panel.getAttribute('data-hop-id'),
        kind: document.getElementById('step-kind').textContent,
        name: document.getElementById('step-name').textContent.trim(),
        says: document.getElementById('step-says').textContent,
        packet: dot && dot.getAttribute('data-hop-id'),
        recovery: !!document.getElementById('step-recovery'),
        state: state};
"""


def _walk(driver, url):
    """Every step of the page's step-through, by the right arrow key:
    [{hop, kind, name, says, packet, recovery, state}]."""
    from selenium.webdriver.common.keys import Keys
    driver.set_window_size(browser.WIDTH, browser.HEIGHT)
    driver.get(url)
    body = driver.find_element("css selector", "body")
    steps = []
    for _ in driver.find_elements("css selector", "g.hop"):
        body.send_keys(Keys.ARROW_RIGHT)
        steps.append(driver.execute_script(_STEP))
    assert browser.console_errors(driver) == []
    from selenium.webdriver.support.ui import WebDriverWait
    WebDriverWait(driver, 10).until(lambda d: d.execute_script(
        "var dot = document.getElementById('packet');"
        "return dot && dot.getAttribute('data-arrived') === 'true';"))
    return steps


def _after(steps, pattern):
    """The state after the first step whose name matches ``pattern``."""
    return [s for s in steps if re.search(pattern, s["name"])][0]["state"]


def test_the_real_attach_steps_through(journey_output, driver):
    attach, _ = _pages(journey_output)
    steps = _walk(driver, attach)
    assert all(s["kind"] in web.KINDS and s["says"] for s in steps)
    assert all(s["packet"] == s["hop"] for s in steps)
    assert not [s for s in steps if s["recovery"]]
    created = _after(steps, r"^POST /v3/\{project\}/attachments$")
    assert (created["volume"], created["attachment"]) == (
        "reserved", "reserved (no connector)")
    put = _after(steps, r"^PUT /v3/\{project\}/attachments/\{id\}$")
    assert put["volume"] == "attaching"
    assert put["connection_info"] == "returned by attachment_update"
    end = steps[-1]["state"]
    assert steps[-1]["name"].endswith("(os-complete)")
    assert (end["volume"], end["attachment"]) == ("in-use", "attached")
    # The lab traces no SQL by default: the save is unknown, not guessed.
    assert end["bdm"] in ("created (connection_info saved: unknown)",
                          "created (connection_info saved)")
    browser.screenshot(driver, "trace-page-step-through-lab-attach")


def test_the_real_detach_steps_through(journey_output, driver):
    _, detach = _pages(journey_output)
    steps = _walk(driver, detach)
    assert all(s["packet"] == s["hop"] for s in steps)
    begin = _after(steps, r"\(os-begin_detaching\)$")
    assert (begin["volume"], begin["attachment"]) == ("detaching",
                                                      "attached")
    released = _after(steps, r"^DELETE /v3/\{project\}/attachments/\{id\}$")
    assert (released["volume"], released["attachment"]) == ("available",
                                                            "deleted")
    assert not [s for s in steps if s["recovery"]]
    browser.screenshot(driver, "trace-page-step-through-lab-detach")


@pytest.mark.parametrize("journey", ["attach", "detach"])
def test_the_real_quiz_answered_from_the_trace(journey_output, driver,
                                               journey):
    from selenium.webdriver.support.ui import Select
    url = dict(zip(("attach", "detach"), _pages(journey_output),
                   strict=True))[journey]
    driver.set_window_size(browser.WIDTH, browser.HEIGHT)
    driver.get(url + "/quiz")
    questions = driver.execute_script(
        "return JSON.parse(document.getElementById('quiz-data')"
        ".textContent)")
    by_id = {q["id"]: q for q in questions}
    if journey == "attach":
        info = by_id["q-connection-info"]
        [put] = [o["label"] for o in info["options"]
                 if o["value"] == info["answer"]]
        assert put.startswith("attachment_update: REST PUT ")
        assert by_id["q-available"]["answer"] == "nothing"
    else:
        assert by_id["q-connection-info"]["answer"] == "bdm"
        assert by_id["q-available"]["answer"] == "detach"
    for q in questions:
        section = driver.find_element("id", q["id"])
        if q["kind"] == "choice":
            [radio] = [r for r in section.find_elements(
                "css selector", "input[type=radio]")
                if r.get_attribute("value") == q["answer"]]
            radio.click()
        else:
            for item in q["items"]:
                [select] = [s for s in section.find_elements(
                    "css selector", "select")
                    if s.get_attribute("data-item") == item["id"]]
                Select(select).select_by_value(item["answer"])
        section.find_element("css selector", "button.check").click()
        assert section.get_attribute("data-result") == "right", q["id"]
    assert driver.find_element("id", "score").text == "%d of %d right" % (
        len(questions), len(questions))
    assert browser.console_errors(driver) == []
    browser.screenshot(driver, "trace-quiz-lab-%s" % journey)
