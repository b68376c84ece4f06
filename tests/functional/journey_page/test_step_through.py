"""The journey page's "Next step" mode in headless chromium, over the
fixture traces (tests/support/journey_traces.py) served in-process:
next and previous by button and by the arrow keys, play and pause, the
packet landing on the stepped hop's arrow, the step panel's kind, seed
explanation and state of the volume, attachment, connection_info and
BDM, a failed attach's failure then its recovery steps (and a refused
detach's os-roll_detaching) labelled as the recovery, and each lane's
role on a click or the keyboard. Screenshots in ``browser.ARTIFACTS``."""

import time

import pytest

from ministack_course import course
from ministack_course import web
from tests.functional.journey_page import browser
from tests.functional.journey_page import test_page_in_browser as page
from tests.support import journey_traces as traces


@pytest.fixture(scope="module")
def driver():
    driver = browser.chromium()
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def url():
    with browser.served(web.create_app(traces.load, traces.recent)) as base:
        yield base


def _open(driver, url, ident):
    driver.set_window_size(browser.WIDTH, browser.HEIGHT)
    driver.get("%s/trace/%s" % (url, ident))


def _css(driver, selector):
    return driver.find_elements("css selector", selector)


def _one(driver, selector):
    return driver.find_element("css selector", selector)


def _key(driver, key, times=1):
    from selenium.webdriver.common.keys import Keys
    body = _one(driver, "body")
    for _ in range(times):
        body.send_keys(getattr(Keys, key))


def _wait(driver, what, timeout=10):
    from selenium.webdriver.support.ui import WebDriverWait
    return WebDriverWait(driver, timeout).until(what)


def _at(driver):
    """The step shown (0: the whole picture) and its hop id.

    Read in one script: while the page plays, the panel is redrawn
    between two WebDriver calls, and an element found by one is stale
    by the next."""
    shown = driver.execute_script(
        "var panel = document.getElementById('step-panel');"
        "if (!panel || panel.hidden) return null;"
        "return [document.getElementById('step-title').textContent,"
        "        panel.getAttribute('data-hop-id')];")
    if shown is None:
        return 0, None
    title, hop_id = shown                       # "Step 3 of 13"
    return int(title.split()[1]), hop_id


def _arrived(driver):
    """The packet once it landed: (hop id, cx, cy)."""
    def landed(d):
        dots = _css(d, "#packet")
        if dots and dots[0].get_attribute("data-arrived") == "true":
            return (dots[0].get_attribute("data-hop-id"),
                    float(dots[0].get_attribute("cx")),
                    float(dots[0].get_attribute("cy")))
        return False
    return _wait(driver, landed)


def _state(driver):
    rows = _css(driver, "#step-state tr")
    return {tr.get_attribute("data-field"): (
        tr.find_element("css selector", ".value").text,
        tr.get_attribute("class").split())
        for tr in rows}


def _step_to(driver, hop_id):
    """The arrow keys, right or left, until the step is ``hop_id``'s."""
    ids = [g.get_attribute("data-hop-id") for g in _css(driver, "g.hop")]
    moves = ids.index(hop_id) + 1 - _at(driver)[0]
    _key(driver, "ARROW_RIGHT" if moves > 0 else "ARROW_LEFT", abs(moves))
    assert _at(driver)[1] == hop_id


def test_next_and_previous_by_button_and_keyboard(driver, url):
    _open(driver, url, traces.TRACE_ID)
    drawn = traces.drawn(traces.attach_trace())
    assert _at(driver) == (0, None)
    assert _one(driver, "#step-prev").get_attribute("disabled")
    assert "Next step" in _one(driver, "#step-count").text
    assert not _css(driver, "#packet")
    _one(driver, "#step-next").click()
    assert _at(driver) == (1, "hop-01")
    assert _one(driver, "#step-count").text == (
        "Step 1 of %d: REST POST /v2.1/servers/{id}/os-volume_attachments"
        % len(drawn))
    _key(driver, "ARROW_RIGHT", 2)
    assert _at(driver) == (3, drawn[2]["id"])
    _key(driver, "ARROW_LEFT")
    assert _at(driver) == (2, drawn[1]["id"])
    _one(driver, "#step-prev").click()
    assert _at(driver) == (1, "hop-01")
    # The hops after the current one are dimmed, the ones before it past.
    _key(driver, "ARROW_RIGHT", 2)
    classes = [g.get_attribute("class").split()
               for g in _css(driver, "g.hop")]
    assert ["past" in c for c in classes[:2]] == [True, True]
    assert "current" in classes[2]
    assert all("future" in c for c in classes[3:])
    assert "stepping" in _one(driver, "#journey-svg").get_attribute("class")
    # The stepped hop is the selected one, its details shown.
    assert _one(driver, "#hop-details").get_attribute("data-hop-id") == \
        drawn[2]["id"]
    # The last step, then Next is disabled; Escape: the whole picture.
    _key(driver, "ARROW_RIGHT", len(drawn) + 2)
    assert _at(driver) == (len(drawn), drawn[-1]["id"])
    assert _one(driver, "#step-next").get_attribute("disabled")
    _key(driver, "ESCAPE")
    assert _at(driver) == (0, None)
    assert not _css(driver, "#packet")
    assert browser.console_errors(driver) == []


def test_the_packet_lands_on_the_stepped_hops_arrow(driver, url):
    _open(driver, url, traces.TRACE_ID)
    _step_to(driver, "hop-10")      # PUT /attachments/{id}
    hop, cx, cy = _arrived(driver)
    assert hop == "hop-10"
    g = [g for g in _css(driver, "g.hop")
         if g.get_attribute("data-hop-id") == "hop-10"][0]
    arrow = g.find_element("css selector", "line.arrow")
    assert cx == pytest.approx(float(arrow.get_attribute("x2")), abs=0.5)
    assert cy == pytest.approx(float(arrow.get_attribute("y2")), abs=0.5)
    assert "packet kind-rest" in _one(driver, "#packet").get_attribute(
        "class")
    assert _one(driver, "#step-kind").text == "REST"
    assert _one(driver, "#step-route").text.startswith(
        "nova-compute \u2192 Cinder \u00b7 +129.0 ms")
    assert _one(driver, "#step-says").text == course.says(
        "attachment_update", "REST", "attach")
    # Another hop: the packet lands on its arrow (the cast's, nova-api
    # to the broker's lane).
    _key(driver, "ARROW_LEFT", 3)
    assert _at(driver)[1] == "hop-07"
    hop, cx, _ = _arrived(driver)
    lanes = {g.get_attribute("data-actor"): float(g.find_element(
        "css selector", "line.lane-line").get_attribute("x1"))
        for g in _css(driver, "g.lane")}
    assert hop == "hop-07"
    assert cx == pytest.approx(lanes["rabbitmq"] - 4, abs=0.5)
    assert _one(driver, "#step-kind").text == "CAST"


def test_the_state_panel_follows_the_handshake(driver, url):
    _open(driver, url, traces.TRACE_ID)
    _step_to(driver, "hop-01")
    assert _state(driver)["volume"] == ("unknown", ["unknown"])
    _step_to(driver, "hop-06")      # POST /attachments: 200
    state = _state(driver)
    assert state["volume"] == ("reserved", ["changed"])
    assert state["attachment"] == ("reserved (no connector)", ["changed"])
    assert state["bdm"][0] == "created (no connection_info)"
    assert "changed" not in state["bdm"][1]
    _step_to(driver, "hop-10")      # PUT with the connector
    state = _state(driver)
    assert state["volume"][0] == "attaching"
    assert state["connection_info"][0] == "returned by attachment_update"
    _step_to(driver, "hop-14")      # the driver attach: nothing changes
    assert _one(driver, "#step-unchanged").text == \
        "This step changed none of them."
    _step_to(driver, "hop-16")      # bdm.save
    assert _state(driver)["bdm"] == ("created (connection_info saved)",
                                     ["changed"])
    _step_to(driver, "hop-17")      # os-complete: 204
    state = _state(driver)
    assert state["volume"] == ("in-use", ["changed"])
    assert state["attachment"] == ("attached", ["changed"])
    why = _one(driver, "#step-state tr[data-field=volume] .why").text
    assert why.endswith("answered 204")
    _arrived(driver)
    browser.screenshot(driver, "trace-page-step-through-attach")
    # A lab-like detach (no SQL traced): the BDM's end is unknown.
    _open(driver, url, traces.DETACH_TRACE_ID)
    _step_to(driver, "hop-12")
    state = _state(driver)
    assert state["volume"] == ("available", ["changed"])
    assert state["bdm"] == ("unknown", ["changed", "unknown"])


def test_play_and_pause(driver, url):
    _open(driver, url, traces.TRACE_ID)
    play = _one(driver, "#step-play")
    play.click()
    assert play.get_attribute("aria-pressed") == "true"
    assert _at(driver)[0] == 1
    _wait(driver, lambda d: _at(d)[0] >= 3)
    play.click()
    assert play.get_attribute("aria-pressed") == "false"
    paused = _at(driver)
    time.sleep(2.2)
    assert _at(driver) == paused
    # Play again goes on from there; Next pauses it.
    play.click()
    _wait(driver, lambda d: _at(d)[0] > paused[0])
    _one(driver, "#step-next").click()
    assert play.get_attribute("aria-pressed") == "false"
    assert browser.console_errors(driver) == []


def test_a_failed_attach_shows_the_failure_then_its_recovery(driver, url):
    _open(driver, url, traces.FAILED_ATTACH_TRACE_ID)
    # Drawn: the undo steps are labelled as the recovery.
    recovery = [(g.get_attribute("data-hop-id"),
                 g.get_attribute("data-recovery"))
                for g in _css(driver, "g.hop.recovery")]
    assert recovery == [("hop-16", "disconnect"), ("hop-17", "secret removed"),
                        ("hop-18", "attachment_delete"),
                        ("hop-19", "attachment_delete"),
                        ("hop-20", "bdm.destroy")]
    labels = [t.text for t in _css(driver, ".recovery-label")]
    assert "\u21ba recovery: attachment_delete" in labels
    # ... and they are a band of their own after the attach's phases.
    assert [g.find_element("css selector", ".phase-label").text
            for g in _css(driver, "g.phase")] == [
        "1 reserve", "2 cast", "3 connect/attach", "\u21ba recovery"]
    _step_to(driver, "hop-15")
    failed = [g for g in _css(driver, "g.hop")
              if g.get_attribute("data-hop-id") == "hop-15"][0]
    assert failed.find_element("css selector", ".arrow").value_of_css_property(
        "stroke") == "rgb(209, 31, 47)"
    assert "packet" in _one(driver, "#packet").get_attribute("class")
    assert "failed" in _one(driver, "#packet").get_attribute("class")
    assert _one(driver, "#step-error").text.startswith(
        "\u2716 failed: libvirtError: internal error")
    box = _one(driver, "#recovery-path")
    assert box.find_element("css selector", "h3").text == (
        "When it goes wrong: Driver attach fails after Cinder mapped the "
        "volume")
    items = [li.text for li in box.find_elements("css selector", "li")]
    assert items[0] == "\u2716 virDomainAttachDeviceFlags failed"
    assert [item.split(":")[0] for item in items[1:]] == [
        "\u21ba disconnect", "\u21ba secret removed",
        "\u21ba attachment_delete", "\u21ba bdm.destroy"]
    assert _one(driver, "#step-unchanged").text == \
        "It failed: it changed none of them."
    # The next step is the first undo step, labelled as the recovery.
    _key(driver, "ARROW_RIGHT")
    assert _at(driver)[1] == "hop-16"
    assert _one(driver, "#step-recovery").text == \
        "\u21ba The recovery: disconnect"
    # A recovery step of the list goes to it: the volume available.
    [go] = [b for b in _css(driver, "#recovery-path li button")
            if b.text.startswith("\u21ba attachment_delete")]
    go.click()
    assert _at(driver)[1] == "hop-18"
    assert _state(driver)["volume"] == ("available", ["changed"])
    assert _state(driver)["attachment"] == ("deleted", ["changed"])
    current = _one(driver, "#recovery-path li.current").text
    assert current.startswith("\u21ba attachment_delete")
    _step_to(driver, "hop-20")
    assert _state(driver)["bdm"] == ("destroyed", ["changed"])
    assert browser.console_errors(driver) == []
    _step_to(driver, "hop-18")
    _arrived(driver)
    browser.screenshot(driver, "trace-page-step-through-failed-attach")


def test_a_refused_detach_is_rolled_back_as_the_recovery(driver, url):
    _open(driver, url, traces.FAILED_TRACE_ID)
    _step_to(driver, "hop-07")
    assert _one(driver, "#step-recovery").text == \
        "\u21ba The recovery: os-roll_detaching"
    assert _one(driver, "#recovery-path h3").text == (
        "When it goes wrong: Guest refuses to release the disk on detach")
    state = _state(driver)
    assert state["volume"] == ("in-use", ["changed"])
    assert state["bdm"] == ("kept", ["changed"])
    # The markup in the errors stayed text.
    _step_to(driver, "hop-06")
    assert "<script>" in _one(driver, "#step-error").text
    assert not _css(driver, "img")
    _arrived(driver)
    browser.screenshot(driver, "trace-page-step-through-refused-detach")


def test_each_lane_shows_its_role(driver, url):
    from selenium.webdriver.common.keys import Keys
    _open(driver, url, traces.TRACE_ID)
    assert not _one(driver, "#lane-role").is_displayed()
    for g in _css(driver, "g.lane"):
        actor = g.get_attribute("data-actor")
        g.find_element("css selector", "text.lane-title").click()
        panel = _one(driver, "#lane-role")
        assert panel.get_attribute("data-lane") == actor
        assert panel.find_element("css selector", "p.role").text == \
            course.ROLES[actor]
        assert "chosen" in g.get_attribute("class")
    # The keyboard: Tab to a lane's title, Enter.
    lane = [g for g in _css(driver, "g.lane")
            if g.get_attribute("data-actor") == "os-brick"][0]
    assert lane.get_attribute("tabindex") == "0"
    driver.execute_script("arguments[0].focus()", lane)
    lane.send_keys(Keys.ENTER)
    assert _one(driver, "#lane-role h2").text == "os-brick"
    # A compute lane per host: its role, titled with its host.
    _open(driver, url, traces.TWO_HOSTS_TRACE_ID)
    [compute2] = [g for g in _css(driver, "g.lane")
                  if g.get_attribute("data-host") == traces.COMPUTE2]
    compute2.find_element("css selector", "text.lane-title").click()
    assert _one(driver, "#lane-role h2").text == "nova-compute (compute2)"
    assert browser.console_errors(driver) == []


def test_stepping_keeps_the_page_in_1400_px(driver, url):
    _open(driver, url, traces.FAILED_ATTACH_TRACE_ID)
    _step_to(driver, "hop-15")
    page._assert_fits(browser.lanes_fit(driver))
    side = _one(driver, ".side").rect
    assert side["x"] + side["width"] <= browser.WIDTH
    # A resize redraws: the step and the packet stay.
    driver.set_window_size(1200, browser.HEIGHT)
    _wait(driver, lambda d: _css(d, "#packet") and
          _arrived(d)[0] == "hop-15")
    driver.set_window_size(browser.WIDTH, browser.HEIGHT)
    assert _at(driver)[1] == "hop-15"
    assert browser.console_errors(driver) == []


def test_a_boot_from_volume_steps_through_its_own_phases(driver, url):
    _open(driver, url, traces.BOOT_TRACE_ID)
    assert _one(driver, "#journey-kind").text == "boot"
    assert [g.find_element("css selector", ".phase-label").text
            for g in _css(driver, "g.phase")] == [
        "1 reserve", "2 cast", "3 connect + spawn", "4 complete"]
    drawn = traces.drawn(traces.boot_trace())
    _one(driver, "#step-next").click()
    assert _at(driver) == (1, "hop-01")
    state = _state(driver)
    assert state["bdm"][0] == "not created yet"
    # nova-api's reservation, before the cast: the volume reserved.
    _step_to(driver, "hop-03")
    assert _state(driver)["volume"] == ("reserved", ["changed"])
    _step_to(driver, "hop-07")
    assert _state(driver)["volume"][0] == "attaching"
    _step_to(driver, drawn[-1]["id"])
    state = _state(driver)
    assert state["volume"] == ("in-use", ["changed"])
    assert state["attachment"][0] == "attached"
    assert browser.console_errors(driver) == []
