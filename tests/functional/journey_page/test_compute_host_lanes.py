"""The journey page says which compute host did the work (issue 27 §3),
in a real browser (headless chromium) over fixture traces: the compute
lane of an attach on ``compute2`` reads ``nova-compute (compute2)`` and
its hops are drawn in it; a trace that reached two compute hosts has one
compute lane per host, each host's hops in its own; a hop's details name
its host; the lanes still fit a 1400 px window, under the page's CSP.
(The real two-host lab test is tests/multinode's.)"""

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


def _css(node, selector):
    from selenium.webdriver.common.by import By
    return node.find_elements(By.CSS_SELECTOR, selector)


def _page(driver, url, ident):
    driver.set_window_size(browser.WIDTH, browser.HEIGHT)
    driver.get("%s/trace/%s" % (url, ident))


def _lanes(driver):
    """[(data-lane, data-host, the title's text, its x)] left to right."""
    return [(g.get_attribute("data-lane"), g.get_attribute("data-host"),
             _css(g, "text.lane-title")[0].get_attribute("textContent"),
             float(_css(g, "line.lane-line")[0].get_attribute("x1")))
            for g in _css(driver, "g.lane")]


def _arrow_ends(hop):
    """(x1, x2) of a hop's arrow (a loop back into its lane: x1 == x2)."""
    line = _css(hop, "line.arrow")
    if line:
        return (float(line[0].get_attribute("x1")),
                float(line[0].get_attribute("x2")))
    start = _css(hop, "path.arrow")[0].get_attribute("d")
    x = float(start[1:].split(",")[0])
    return x, x


def _assert_fits_1400(driver):
    fit = browser.lanes_fit(driver)
    assert fit["window"] == browser.WIDTH
    assert fit["lanes"][-1][0] == "guest"
    assert all(right <= fit["diagram_right"] for _, right in fit["lanes"])
    assert all(right <= fit["diagram_right"]
               for _, right in fit["labels"]), fit["labels"]
    assert fit["diagram_scroll"] <= fit["diagram_client"], fit
    assert fit["page"] <= fit["page_client"], fit
    # Each lane title, the host line too, stays inside its lane's head.
    heads = driver.execute_script("""
        return Array.prototype.map.call(
          document.querySelectorAll('g.lane'), function (g) {
            var r = g.querySelector('rect.lane-head').getBBox();
            var t = g.querySelector('text.lane-title').getBBox();
            return [r.x, r.x + r.width, t.x, t.x + t.width, r.y,
                    r.y + r.height, t.y, t.y + t.height]; });""")
    for rx1, rx2, tx1, tx2, ry1, ry2, ty1, ty2 in heads:
        assert rx1 <= tx1 and tx2 <= rx2, heads
        assert ry1 <= ty1 and ty2 <= ry2 + 1, heads


def test_the_compute_lane_names_its_host(driver, url):
    _page(driver, url, traces.COMPUTE2_TRACE_ID)
    lanes = _lanes(driver)
    assert [lane[0] for lane in lanes] == [
        actor for actor, _ in web.ACTORS]
    compute = [lane for lane in lanes if lane[0] == "nova-compute"]
    assert [lane[1:3] for lane in compute] == [
        ("compute2", "nova-compute (compute2)")]
    # The host is the title's second line, its full text the tooltip.
    g = _css(driver, 'g.lane[data-actor="nova-compute"]')[0]
    assert _css(g, "tspan.lane-host")[0].get_attribute("textContent") == \
        " (compute2)"
    assert _css(g, "title")[0].get_attribute("textContent") == \
        "nova-compute (compute2)"
    # Only the compute's lane has a host; the others read as before.
    assert [lane[2] for lane in lanes if lane[0] != "nova-compute"] == [
        "user", "nova-api", "RabbitMQ", "Cinder", "os-brick",
        "libvirt/QEMU", "guest"]
    # The cast arrives in that lane; its libvirt calls leave from it.
    x = {lane[0]: lane[3] for lane in lanes}
    hops = _css(driver, "g.hop")
    handler = [h for h in hops if h.get_attribute("data-name") ==
               "attach_volume" and h.get_attribute("data-actor") ==
               "nova-compute"][0]
    assert handler.get_attribute("data-host") == "compute2"
    assert _arrow_ends(handler)[1] == pytest.approx(x["nova-compute"] - 4)
    plug = [h for h in hops if h.get_attribute("data-name") ==
            "virDomainAttachDeviceFlags"][0]
    assert _arrow_ends(plug)[0] == pytest.approx(x["nova-compute"] + 4)
    # A click names the host that did the hop (and the server's).
    plug.click()
    fields = dict(zip(
        [dt.text for dt in _css(driver, "#hop-details dt")],
        [dd.text for dd in _css(driver, "#hop-details dd")], strict=True))
    assert fields["host"] == "compute2"
    put = [h for h in hops if h.get_attribute("data-name") ==
           "PUT /v3/{project}/attachments/{id}"][0]
    put.click()
    assert _css(driver, '#hop-details dd[data-field="host"]')[0].text == \
        "compute2"
    assert _css(driver, '#hop-details dd[data-field="server"]')[0].text \
        == "85.4 ms in cinder-api on vm, from +130.0 ms"
    # The table's host column.
    driver.find_element("css selector", "details.table-view summary").click()
    rows = [tr.text for tr in _css(driver, "#hop-table tbody tr")]
    assert "129.0 88.0 85.4 connect/attach nova-compute compute2 REST " \
        "PUT /v3/{project}/attachments/{id} 200" in rows
    _assert_fits_1400(driver)
    assert browser.console_errors(driver) == []
    browser.screenshot(driver, "trace-page-fixture-compute2")


def test_two_compute_hosts_get_a_lane_each(driver, url):
    _page(driver, url, traces.TWO_HOSTS_TRACE_ID)
    lanes = _lanes(driver)
    # Where the seed's compute lane is, one per host, first reached first.
    assert [lane[0] for lane in lanes] == [
        "user", "nova-api", "rabbitmq", "nova-compute@vm",
        "nova-compute@compute2", "cinder", "os-brick", "libvirt", "guest"]
    assert [lane[2] for lane in lanes[3:5]] == [
        "nova-compute (vm)", "nova-compute (compute2)"]
    assert [g.get_attribute("data-actor")
            for g in _css(driver, "g.lane")][3:5] == ["nova-compute"] * 2
    x = {lane[0]: lane[3] for lane in lanes}
    # Each host's hops in its own lane: the cast arrives at the host the
    # API sent it to; the compute's calls (libvirt, Cinder) leave from it.
    for host in (traces.FIRST_HOST, traces.COMPUTE2):
        lane = x["nova-compute@%s" % host]
        mine = [h for h in _css(driver, "g.hop")
                if h.get_attribute("data-host") == host]
        handler = [h for h in mine
                   if h.get_attribute("data-name") == "attach_volume"
                   and h.get_attribute("data-actor") == "nova-compute"]
        assert len(handler) == 1
        assert handler[0].get_attribute("data-lane") == \
            "nova-compute@%s" % host
        assert _arrow_ends(handler[0])[1] == pytest.approx(lane - 4)
        calls = [h for h in mine if h.get_attribute("data-name") in (
            "virDomainAttachDeviceFlags", "PUT /v3/{project}/attachments/{id}",
            "connect_volume (os-brick iSCSI)")]
        assert len(calls) == 3
        for hop in calls:
            assert hop.get_attribute("data-from-lane") == \
                "nova-compute@%s" % host
            assert _arrow_ends(hop)[0] == pytest.approx(lane + 4)
    # Nothing is drawn in a lane that is not there.
    keys = {lane[0] for lane in lanes}
    for hop in _css(driver, "g.hop"):
        assert hop.get_attribute("data-lane") in keys
        assert hop.get_attribute("data-from-lane") in keys
    _assert_fits_1400(driver)
    assert browser.console_errors(driver) == []
    browser.screenshot(driver, "trace-page-fixture-two-compute-hosts")


def test_a_trace_without_hosts_keeps_the_seeds_compute_lane(driver, url):
    """A trace whose hops recorded no host: one lane, titled as before."""
    _page(driver, url, traces.TRACE_ID)
    g = _css(driver, 'g.lane[data-actor="nova-compute"]')
    assert len(g) == 1
    assert g[0].get_attribute("data-host") is None
    assert g[0].text == "nova-compute"
    assert not _css(g[0], "tspan.lane-host")
