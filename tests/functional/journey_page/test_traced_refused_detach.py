"""A real traced failure path on the journey page: the guest refuses the
detach, and the picture shows the red hop and roll_detaching.

A private stack (tests/support/private_stack.py) runs its three
daemons with osprofiler on (traces in an SQLite file of its own, its own
HMAC key), the detach retries shortened as in the recovery tier (2 x 4 s)
and its journey page on a free port. A volume is attached to a guest,
the guest is paused (``virsh suspend``: it cannot answer the unplug) and
the detach is sent with osprofiler's signed trace headers. The compute's
retries run out, DeviceDetachFailed makes it roll Cinder back
(``os-roll_detaching``); the page, in headless chromium, draws the
guest's refusals and the compute's ``detach_volume`` hop red with their
errors, then the roll back, under the detach's phases: begin_detaching,
cast, then unplug + disconnect, where driver_detach rolls back, and no
attachment_delete (the volume was never released).
"""

import secrets

import pytest
import requests

from ministack import executor
from tests.functional.journey_page import browser
from tests.support import journey
from tests.support import private_stack
from tests.support import waiting

pytestmark = pytest.mark.slow

VIRSH = ("virsh", "-c", "qemu:///system")


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    private_stack.skip_unless_lab()
    tmp = tmp_path_factory.mktemp("traced")
    ps = private_stack.PrivateStack(tmp, "tp")
    key = secrets.token_hex(16)
    store = "sqlite:///%s" % (tmp / "osprofiler.sqlite")
    traced = {"profiler": {"enabled": "true", "hmac_keys": key,
                           "connection_string": store}}
    try:
        cinder = ps.start_cinder(traced)
        api = ps.start_api(cinder, traced)
        page = ps.start_page(traced).port
        ps.start_compute(ps.endpoint(cinder), private_stack.merge(
            traced, {"libvirt": {"device_detach_attempts": 2,
                                 "device_detach_timeout": 4}}))
        yield {"key": key, "store": store, "ps": ps,
               "page": "http://127.0.0.1:%d" % page,
               "nova": journey.Nova(api.url),
               "cinder": journey.Cinder(cinder.url),
               "probe": journey.Probe(ps.nova_db, ps.name_template)}
    finally:
        ps.cleanup()


def _trace_headers(key):
    """A new osprofiler trace: its id and the signed headers, as
    ``openstack --os-profile KEY`` sends them."""
    from osprofiler import profiler
    from osprofiler import web as profiler_web
    profiler.init(key)
    try:
        return (profiler.get().get_base_id(),
                profiler_web.get_trace_id_headers())
    finally:
        profiler.clean()


def _settled(store, trace_id):
    """The trace once the compute's detach_volume span has stopped."""
    from ministack.trace import hops

    def done():
        try:
            trace = hops.load(store, trace_id)
        except hops.TraceNotFound:
            return None
        handler = [h for h in trace["hops"] if h["actor"] == "nova-compute"
                   and h["name"] == "detach_volume"]
        return trace if handler and handler[0]["duration_ms"] is not None \
            else None
    return waiting.wait_for("the detach's spans", done, timeout=60)


def test_refused_detach_drawn_red_with_roll_detaching(stack):
    nova, cinder, probe = stack["nova"], stack["cinder"], stack["probe"]
    ps = stack["ps"]
    with private_stack.servers(nova, ps.image["id"], ps.tag, 1) as [guest], \
            private_stack.volume_factory(cinder) as volumes:
        vid = volumes("refuse")
        resp = nova.attach(guest, vid)
        assert resp.status_code == 200, resp.text
        cinder.wait_status(vid, "in-use")
        dom = probe.domain_name(guest)
        waiting.wait_for("volume in guest",
                         lambda: probe.guest_dev_for(dom, vid), timeout=90)
        executor.execute(*VIRSH, "suspend", dom)
        try:
            trace_id, headers = _trace_headers(stack["key"])
            resp = requests.delete(
                "%s/servers/%s/os-volume_attachments/%s" % (
                    nova.base, guest, vid),
                headers=dict(nova.headers, **headers), timeout=60)
            assert resp.status_code == 202, resp.text
            cinder.wait_status(vid, "detaching", timeout=10)
            # 2 attempts x 4 s, then roll_detaching.
            cinder.wait_status(vid, "in-use", timeout=40)
            trace = _settled(stack["store"], trace_id)
        finally:
            executor.execute(*VIRSH, "resume", dom)
    failed = [(h["actor"], h["kind"], h["name"]) for h in trace["hops"]
              if h["error"]]
    # The guest's refusals (each retry) and the cast's handler failed.
    assert failed == [("nova-compute", "CAST", "detach_volume"),
                      ("guest", "LIBRARY", "guest releases vdb"),
                      ("guest", "LIBRARY", "guest releases vdb")], failed
    # A detach, labelled with the detach's phases: the roll back is in
    # the unplug (driver_detach's), and no hop releases the volume.
    assert trace["journey"] == "detach"
    by_phase = {}
    for hop in trace["hops"]:
        by_phase.setdefault(hop["phase"], []).append(hop["name"])
    assert list(by_phase) == ["begin_detaching", "cast",
                              "unplug + disconnect"], by_phase
    assert any(name.endswith("(os-roll_detaching)")
               for name in by_phase["unplug + disconnect"])
    assert any(name.endswith("(os-begin_detaching)")
               for name in by_phase["begin_detaching"])

    driver = browser.chromium()
    try:
        driver.get("%s/trace/%s" % (stack["page"], trace_id))
        red = [g for g in driver.find_elements("css selector", "g.hop.failed")
               if g.get_attribute("data-name") == "detach_volume"]
        assert red, driver.page_source[-2000:]
        assert red[0].get_attribute("data-actor") == "nova-compute"
        arrow = red[0].find_element("css selector", ".arrow")
        assert arrow.value_of_css_property("stroke") == "rgb(209, 31, 47)"
        assert red[0].find_element("css selector", ".error-label").text
        refusals = [g for g in driver.find_elements("css selector",
                                                    "g.hop.failed")
                    if g.get_attribute("data-actor") == "guest"]
        assert len(refusals) == 2
        assert "did not release vdb" in refusals[0].find_element(
            "css selector", ".error-label").text
        bands = [g.get_attribute("data-phase") for g in
                 driver.find_elements("css selector", "g.phase")]
        assert bands == ["begin_detaching", "cast", "unplug + disconnect"]
        rolls = [g for g in driver.find_elements("css selector", "g.hop")
                 if "os-roll_detaching" in g.text]
        # One arrow, nova-compute to Cinder, with the server's time.
        assert len(rolls) == 1, [g.text for g in rolls]
        assert rolls[0].get_attribute("data-kind") == "REST"
        assert rolls[0].get_attribute("data-actor") == "cinder"
        assert rolls[0].get_attribute("data-from") == "nova-compute"
        assert rolls[0].get_attribute("data-phase") == "unplug + disconnect"
        assert " \u00b7 server " in rolls[0].text
        refusals[0].click()
        panel = driver.find_element("css selector", "#hop-details")
        assert "did not release vdb" in panel.find_element(
            "css selector", ".error-message").text
        assert browser.console_errors(driver) == []
        browser.screenshot(driver, "trace-page-refused-detach")
    finally:
        driver.quit()
