"""The journey page in a real browser (headless chromium), over the
fixture traces of tests/support/journey_traces.py served
in-process: the script draws the lanes, the phases of the trace's
journey (an attach's, a detach's) and one arrow per hop (a REST call's
client and server sides are one arrow with both times), a click shows a
hop's details, a failed hop is red with its error, the lanes fit a 1400
px window, the hostile text in the trace stays text, and the page runs
under its CSP without a console error. Screenshots are kept in
``browser.ARTIFACTS``."""

import pytest

from ministack_course import web
from tests.functional.journey_page import browser
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


def _css(driver, selector):
    from selenium.webdriver.common.by import By
    return driver.find_elements(By.CSS_SELECTOR, selector)


def _hop(driver, name, nth=0):
    return [g for g in _css(driver, "g.hop")
            if g.get_attribute("data-name") == name][nth]


def _details(driver):
    panel = _css(driver, "#hop-details")[0]
    fields = {dt.text: dd.text for dt, dd in zip(
        panel.find_elements("css selector", "dt"),
        panel.find_elements("css selector", "dd"), strict=True)}
    return panel, fields


def _page(driver, url, ident, width=browser.WIDTH):
    driver.set_window_size(width, browser.HEIGHT)
    driver.get("%s/trace/%s" % (url, ident))


def test_attach_drawn_as_the_seed(driver, url):
    _page(driver, url, traces.TRACE_ID)
    lanes = _css(driver, "g.lane")
    assert [g.get_attribute("data-actor") for g in lanes] == [
        actor for actor, _ in web.ACTORS]
    assert [g.text for g in lanes] == [
        "user", "nova-api", "RabbitMQ", "nova-compute", "Cinder",
        "os-brick", "libvirt/QEMU", "guest"]
    assert [g.get_attribute("data-phase") for g in _css(driver, "g.phase")
            ] == ["reserve", "cast", "connect/attach", "complete"]
    assert [g.find_element("css selector", ".phase-label").text
            for g in _css(driver, "g.phase")] == [
        "1 reserve", "2 cast", "3 connect/attach", "4 complete"]
    hops = _css(driver, "g.hop")
    expected = traces.drawn(traces.attach_trace())
    assert [g.get_attribute("data-name") for g in hops] == [
        h["name"] for h in expected]
    assert [g.get_attribute("data-kind") for g in hops] == [
        h["kind"] for h in expected]
    assert [g.get_attribute("data-phase") for g in hops] == [
        h["phase"] for h in expected]
    # Each arrow is labelled with its kind and its time.
    call = _hop(driver, "reserve_block_device_name", 1)
    assert call.find_element("css selector", ".label").text.startswith(
        "CALL reserve_block_device_name 42.0 ms")
    assert _hop(driver, "attach_volume").find_element(
        "css selector", ".label").text.startswith("CAST attach_volume")
    complete = hops[-1].find_element("css selector", ".label").text
    assert "(os-complete)" in complete and complete.endswith("204")
    assert not _css(driver, "g.hop.failed")
    assert browser.console_errors(driver) == []


def test_one_arrow_per_rest_call_with_both_times(driver, url):
    """nova's client call and cinder-api's entry of the same request are
    one arrow, from the caller's lane to Cinder's, labelled with the
    client's time and the server's."""
    _page(driver, url, traces.TRACE_ID)
    trace = traces.attach_trace()
    servers = [h for h in trace["hops"] if h["client_id"]]
    assert len(servers) == 4
    drawn_ids = [g.get_attribute("data-hop-id") for g in _css(driver,
                                                              "g.hop")]
    assert not set(drawn_ids) & {h["id"] for h in servers}
    rest = [g for g in _css(driver, "g.hop")
            if g.get_attribute("data-actor") == "cinder"
            and g.get_attribute("data-kind") == "REST"]
    assert [(g.get_attribute("data-name"), g.get_attribute("data-from"),
             g.get_attribute("data-server-id")) for g in rest] == [
        ("GET /v3/{project}/volumes/{id}", "nova-api", "hop-02-srv"),
        ("POST /v3/{project}/attachments", "nova-api", "hop-06-srv"),
        ("PUT /v3/{project}/attachments/{id}", "nova-compute",
         "hop-10-srv"),
        ("POST /v3/{project}/attachments/{id}/action", "nova-compute",
         "hop-17-srv")]
    put = rest[2].find_element("css selector", ".label").text
    assert put == "REST PUT /v3/{project}/attachments/{id} 88.0 ms " \
        "\u00b7 server 85.4 ms \u00b7 200"
    # The arrow runs from the caller's lane to Cinder's.
    lanes = {g.get_attribute("data-actor"): g.find_element(
        "css selector", "line.lane-line").get_attribute("x1")
        for g in _css(driver, "g.lane")}
    arrow = rest[2].find_element("css selector", "line.arrow")
    assert float(arrow.get_attribute("x1")) == pytest.approx(
        float(lanes["nova-compute"]) + 4)
    assert float(arrow.get_attribute("x2")) == pytest.approx(
        float(lanes["cinder"]) - 4)
    # The table lists it once, with the server's time.
    driver.find_element("css selector", "details.table-view summary").click()
    rows = [tr.text for tr in _css(driver, "#hop-table tbody tr")]
    assert len(rows) == len(traces.drawn(trace))
    assert [r for r in rows if "PUT /v3/" in r] == [
        "129.0 88.0 85.4 connect/attach nova-compute REST "
        "PUT /v3/{project}/attachments/{id} 200"]


def test_click_a_hop_shows_its_details(driver, url):
    _page(driver, url, traces.TRACE_ID)
    hop = _hop(driver, "PUT /v3/{project}/attachments/{id}")
    hop.click()
    panel, fields = _details(driver)
    assert panel.get_attribute("data-hop-id") == "hop-10"
    assert panel.find_element("css selector", "h2").text == \
        "REST PUT /v3/{project}/attachments/{id}"
    assert fields["request id"] == traces.ATTACH_REQUEST
    assert fields["status"] == "200"
    assert fields["phase"] == "connect/attach"
    assert fields["from"].startswith("nova-compute")
    # Both sides of the REST call: the client's time and the server's.
    assert fields["duration"] == "88.0 ms (nova-compute's client)"
    assert fields["server"] == "85.4 ms in cinder-api, from +130.0 ms"
    assert fields["server request id"] == "req-cinder-0003"
    assert fields["server hop id"] == "hop-10-srv"
    assert "server status" not in fields
    args = panel.find_element("css selector", "pre.hop-args").text
    assert '"auth_password": "***"' in args
    assert traces.ATTACHMENT in args
    served = panel.find_element("css selector", "pre.server-args").text
    assert '"global_request_id": "%s"' % traces.ATTACH_REQUEST in served
    assert "selected" in hop.get_attribute("class")
    for secret in traces.SECRETS:
        assert secret not in driver.page_source
    browser.screenshot(driver, "trace-page-fixture-attach")


def test_failed_detach_is_red_and_shows_roll_detaching(driver, url):
    from selenium.common.exceptions import NoAlertPresentException
    _page(driver, url, traces.DETACH_REQUEST)
    # The detach's phases; a refused one ends in the unplug (no
    # attachment_delete: the volume was rolled back, not released).
    assert _css(driver, "#journey-kind")[0].text == "detach"
    assert [g.find_element("css selector", ".phase-label").text
            for g in _css(driver, "g.phase")] == [
        "1 begin_detaching", "2 cast", "3 unplug + disconnect"]
    failed = _css(driver, "g.hop.failed")
    assert [g.get_attribute("data-name") for g in failed] == [
        "detach_volume", "virDomainDetachDeviceFlags"]
    arrow = failed[0].find_element("css selector", ".arrow")
    assert arrow.value_of_css_property("stroke") == "rgb(209, 31, 47)"
    ok_arrow = _hop(driver, "virDomainDetachDeviceFlags").find_element(
        "css selector", ".arrow")
    assert ok_arrow.value_of_css_property("stroke") != "rgb(209, 31, 47)"
    error = failed[0].find_element("css selector", ".error-label").text
    assert error.startswith("\u2716 DeviceDetachFailed: Device detach "
                            "failed for vdb: <img src=x")
    roll = _css(driver, "g.hop")[-1]
    # Named with its action (hops.py), shown once, never cut off.
    assert roll.find_element("css selector", ".label").text.count(
        "(os-roll_detaching)") == 1
    assert roll.get_attribute("data-kind") == "REST"
    assert roll.get_attribute("data-phase") == "unplug + disconnect"
    assert roll.get_attribute("data-from") == "nova-compute"
    failed[0].click()
    panel, fields = _details(driver)
    message = panel.find_element("css selector", ".error-message").text
    assert message.startswith("DeviceDetachFailed")
    assert fields["request id"] == traces.DETACH_REQUEST
    # The markup in the errors stayed text: no element, no alert.
    assert not _css(driver, "img")
    assert not [s for s in _css(driver, "script")
                if "alert" in (s.get_attribute("innerHTML") or "")
                and s.get_attribute("type") != "application/json"]
    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.accept()
    assert browser.console_errors(driver) == []
    browser.screenshot(driver, "trace-page-fixture-failed-detach")


def test_listing_links_to_the_pages(driver, url):
    driver.get("%s/trace/" % url)
    links = _css(driver, "#traces a")
    assert [a.text for a in links] == [traces.FAILED_TRACE_ID,
                                       traces.TRACE_ID]
    links[1].click()
    assert driver.current_url.endswith("/trace/%s" % traces.TRACE_ID)
    assert len(_css(driver, "g.hop")) == len(
        traces.drawn(traces.attach_trace()))


def _assert_fits(fit):
    """Every lane, the last one (guest) too, and every label end inside
    the diagram, which ends inside the window: nothing cut, no scroll."""
    assert [actor for actor, _ in fit["lanes"]][-1] == "guest"
    inside = fit["diagram_right"]
    assert fit["diagram_right"] <= fit["page_client"]
    assert all(right <= inside for _, right in fit["lanes"]), fit
    assert all(right <= inside for _, right in fit["labels"]), \
        [label for label in fit["labels"] if label[1] > inside]
    assert fit["diagram_scroll"] <= fit["diagram_client"], fit
    assert fit["page"] <= fit["page_client"], fit


@pytest.mark.parametrize("ident", [traces.TRACE_ID, traces.FAILED_TRACE_ID])
def test_the_lanes_fit_a_1400_px_window(driver, url, ident):
    _page(driver, url, ident, width=1400)
    assert driver.execute_script("return window.innerWidth") == 1400
    fit = browser.lanes_fit(driver)
    _assert_fits(fit)
    # libvirt's lane and the guest's, next to the details panel.
    panel = _css(driver, "#hop-details")[0].rect
    assert fit["lanes"][-1][1] < panel["x"]
    assert browser.console_errors(driver) == []
    browser.screenshot(driver, "trace-page-fixture-1400-%s" % ident[:8])


def test_a_narrow_window_scrolls_the_diagram_not_the_page(driver, url):
    """Under the narrowest lanes, the diagram scrolls in its box (the
    page does not); widened again, the lanes are laid out to fit."""
    _page(driver, url, traces.TRACE_ID, width=760)
    fit = browser.lanes_fit(driver)
    assert fit["diagram_scroll"] > fit["diagram_client"]
    assert fit["page"] <= fit["page_client"], fit
    driver.set_window_size(1400, browser.HEIGHT)
    from selenium.webdriver.support.ui import WebDriverWait
    WebDriverWait(driver, 5).until(
        lambda d: browser.lanes_fit(d)["diagram_scroll"] <=
        browser.lanes_fit(d)["diagram_client"])
    _assert_fits(browser.lanes_fit(driver))
    assert len(_css(driver, "g.hop")) == len(
        traces.drawn(traces.attach_trace()))
