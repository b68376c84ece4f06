"""The report after a fault (ministack_audit/fault_report.py): each fact
of the seed's end state is checked from the ledgers, a state that is not
the seed's is called so, and ``watch`` waits for the firing and the
recovery before it prints."""

import pytest

from minicompute.faults import catalog
from ministack.ledgers import snapshot
from ministack_audit import fault_report

VOL = "11111111-1111-1111-1111-111111111111"
SRV = "33333333-3333-3333-3333-333333333333"
DOMAIN = "instance-00000001"


def _fired(name, request_id="req-1"):
    return {"id": "f-1", "name": name, "host": "lab1", "volume_id": VOL,
            "server_id": SRV, "fired_at": "T", "request_id": request_id,
            "armed_by": {"user_id": "admin"}}


def _snap(bdm=False, disk=False, live=True):
    snap = snapshot.Snapshot()
    snap.instances = {SRV: {"uuid": SRV, "host": "lab1", "domain": DOMAIN,
                            "deleted": False}}
    snap.bdms = [{"id": 1, "instance_uuid": SRV, "volume_id": VOL,
                  "attachment_id": "a-1", "device_name": "/dev/vdb",
                  "connection_info": {"driver_volume_type": "iscsi"},
                  "updated_at": None}] if bdm else []
    disks = {"vdb": {"serial": VOL, "live": live, "config": True,
                     "xml": ""}} if disk else {}
    snap.hosts = {"lab1": {"domains": {DOMAIN: {"instance_uuid": SRV,
                                                "disks": disks}}}}
    return snap


def _events(operation, result="Error", request_id="req-1"):
    return [({"action": "%s_volume" % operation, "request_id": request_id},
             [{"event": "compute_%s_volume" % operation, "result": result,
               "finish_time": "T", "details": "volume %s: boom" % VOL}])]


def _observed(name, status, attachment=False, bdm=False, disk=False,
              events=(), divergences=(), power=1, live=True):
    server = {"id": SRV, "OS-EXT-SRV-ATTR:instance_name": DOMAIN,
              "OS-EXT-SRV-ATTR:host": "lab1", "OS-EXT-STS:power_state": power}
    volume = {"id": VOL, "status": status, "attachments": []}
    attachments = [{"id": "a-1", "instance": SRV, "status": "attached"}] \
        if attachment else []
    return fault_report.Observed(
        _fired(name), server, volume, attachments, list(events),
        _snap(bdm, disk, live), list(divergences), "qemu:///system",
        "mysql+pymysql://u:p@h/nova")


@pytest.mark.parametrize("name", [catalog.DRIVER_ATTACH,
                                  catalog.ATTACHMENT_COMPLETE])
def test_attach_faults_clean_end_state(name):
    obs = _observed(name, "available", events=_events("attach"))
    assert obs.clean(), obs.checks()


@pytest.mark.parametrize("broken", [
    {"status": "reserved"}, {"attachment": True}, {"bdm": True},
    {"disk": True}, {"events": _events("attach", result="Success")},
    {"events": _events("attach", request_id="req-other")},
    {"divergences": [snapshot.Divergence(
        "orphan_attachment", "attachment a-1", "volume %s" % VOL, "fix")]},
])
def test_each_fact_of_the_attach_end_state_is_checked(broken):
    kwargs = dict({"status": "available", "events": _events("attach")},
                  **broken)
    obs = _observed(catalog.DRIVER_ATTACH, **kwargs)
    assert not obs.clean()
    assert sum(1 for ok, _ in obs.checks() if not ok) == 1, obs.checks()


def test_reserve_timeout_has_no_instance_action():
    assert _observed(catalog.RESERVE_TIMEOUT, "available").clean()
    assert not _observed(catalog.RESERVE_TIMEOUT, "available",
                         events=_events("attach")).clean()


def test_detach_refused_keeps_everything_and_the_guest_runs():
    good = dict(status="in-use", attachment=True, bdm=True, disk=True,
                events=_events("detach"))
    assert _observed(catalog.DETACH_REFUSED, **good).clean()
    for broken in ({"status": "detaching"}, {"disk": False},
                   {"live": False}, {"power": 3}, {"bdm": False}):
        obs = _observed(catalog.DETACH_REFUSED, **dict(good, **broken))
        assert not obs.clean(), broken


def test_divergences_elsewhere_do_not_count_but_are_said():
    other = snapshot.Divergence("orphan_attachment", "attachment zzz",
                                "volume 4444", "fix")
    obs = _observed(catalog.DRIVER_ATTACH, "available",
                    events=_events("attach"), divergences=[other])
    assert obs.clean() and obs.elsewhere == 1


def test_render_names_the_path_the_ledgers_and_the_verdict(monkeypatch):
    monkeypatch.setattr(fault_report.executor, "execute",
                        lambda *argv, **kw: (" Target   Source\n vda  /x\n",
                                             ""))
    lines = []
    fault_report.render(_observed(catalog.DRIVER_ATTACH, "available",
                                  events=_events("attach")), lines.append)
    text = "\n".join(lines)
    assert "the seed's recovery path 1, \"Driver attach fails after " \
           "Cinder mapped the volume\"" in text
    for command in ("openstack volume show %s" % VOL,
                    "openstack --os-volume-api-version 3.44 volume attachment"
                    " list --volume-id %s" % VOL,
                    "mysql -e \"SELECT device_name",
                    "virsh domblklist %s" % DOMAIN,
                    "openstack server event list %s" % SRV,
                    "ministack-audit"):
        assert "$ " + command in text, command
    assert "nova BDM:           no BDM row" in text
    assert "[ok] volume available" in text
    assert text.endswith("clean: the seed's end state.")


def test_sql_command_per_database():
    assert fault_report.sql_command("sqlite:////var/x.sqlite", VOL) \
        .startswith("sqlite3 /var/x.sqlite \"SELECT")
    assert fault_report.sql_command("postgresql://h/nova", VOL) \
        .startswith("psql nova -c")


def test_latest_fired_filters():
    state = {"fired": [dict(_fired("driver-attach"), volume_id="other"),
                       _fired("driver-attach", "req-2"),
                       dict(_fired("detach-refused"), server_id="s2",
                            volume_id="v3")]}
    assert fault_report.latest_fired(state, VOL)["request_id"] == "req-2"
    assert fault_report.latest_fired(state, None, "s2")["name"] == \
        "detach-refused"
    assert fault_report.latest_fired(state, "none") is None


class _Clock:
    def __init__(self):
        self.now = 0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def test_watch_waits_for_the_firing_then_for_a_clean_state(monkeypatch):
    clock = _Clock()
    states = iter([{"fired": []}] * 2 + [{"fired": [_fired(
        "driver-attach")]}] * 10)
    seen = iter([_observed(catalog.DRIVER_ATTACH, "attaching"),
                 _observed(catalog.DRIVER_ATTACH, "available",
                           events=_events("attach"))])

    class Client:
        def status(self):
            return next(states)

    monkeypatch.setattr(fault_report, "observe",
                        lambda client, settings, fired: next(seen))
    rendered = []
    monkeypatch.setattr(fault_report, "render",
                        lambda obs, out: rendered.append(obs))
    code = fault_report.watch(Client(), None, volume_id=VOL, timeout=60,
                              sleep=clock.sleep, clock=clock, out=print)
    assert code == 0 and clock.now == 6
    assert rendered[0].volume["status"] == "available"


def test_watch_gives_up_when_nothing_fires(monkeypatch):
    clock = _Clock()

    class Client:
        def status(self):
            return {"fired": []}

    lines = []
    code = fault_report.watch(Client(), None, volume_id=VOL, timeout=10,
                              sleep=clock.sleep, clock=clock,
                              out=lines.append)
    assert code == 1 and "no fault fired for volume %s" % VOL in lines[-1]


def test_watch_reports_a_state_that_never_gets_clean(monkeypatch):
    clock = _Clock()

    class Client:
        def status(self):
            return {"fired": [_fired("driver-attach")]}

    monkeypatch.setattr(fault_report, "observe",
                        lambda client, settings, fired: _observed(
                            catalog.DRIVER_ATTACH, "reserved"))
    monkeypatch.setattr(fault_report.executor, "execute",
                        lambda *argv, **kw: ("", ""))
    lines = []
    code = fault_report.watch(Client(), None, timeout=4, sleep=clock.sleep,
                              clock=clock, out=lines.append)
    assert code == 1 and lines[-1] == "   NOT clean: see the facts above."
