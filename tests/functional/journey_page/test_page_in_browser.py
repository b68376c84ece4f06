"""The journey page in a real browser (headless chromium), over the
fixture traces of tests/support/journey_traces.py served
in-process: the script draws the lanes, phases and hops, a click shows a
hop's details, a failed hop is red with its error, the hostile text in
the trace stays text, and the page runs under its CSP without a console
error. Screenshots are kept in ``browser.ARTIFACTS``."""

import pytest

from ministack.trace import web
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


def test_attach_drawn_as_the_seed(driver, url):
    driver.get("%s/trace/%s" % (url, traces.TRACE_ID))
    lanes = _css(driver, "g.lane")
    assert [g.get_attribute("data-actor") for g in lanes] == [
        actor for actor, _ in web.ACTORS]
    assert [g.text for g in lanes] == [
        "user", "nova-api", "RabbitMQ", "nova-compute", "Cinder",
        "os-brick", "libvirt/QEMU", "guest"]
    assert [g.get_attribute("data-phase") for g in _css(driver, "g.phase")
            ] == ["reserve", "cast", "connect/attach", "complete"]
    hops = _css(driver, "g.hop")
    expected = traces.attach_trace()["hops"]
    assert [g.get_attribute("data-name") for g in hops] == [
        h["name"] for h in expected]
    assert [g.get_attribute("data-kind") for g in hops] == [
        h["kind"] for h in expected]
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


def test_click_a_hop_shows_its_details(driver, url):
    driver.get("%s/trace/%s" % (url, traces.TRACE_ID))
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
    args = panel.find_element("css selector", "pre.hop-args").text
    assert '"auth_password": "***"' in args
    assert traces.ATTACHMENT in args
    assert "selected" in hop.get_attribute("class")
    for secret in traces.SECRETS:
        assert secret not in driver.page_source
    browser.screenshot(driver, "trace-page-fixture-attach")


def test_failed_detach_is_red_and_shows_roll_detaching(driver, url):
    from selenium.common.exceptions import NoAlertPresentException
    driver.get("%s/trace/%s" % (url, traces.DETACH_REQUEST))
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
    assert len(_css(driver, "g.hop")) == len(traces.attach_trace()["hops"])
