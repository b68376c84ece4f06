"""The seed's four failures on the deployed lab, armed as a user types it.

Each test arms one fault with the real command in a fresh root login
shell (``ministack-fault arm ...``, tests/support/login_shell.py), makes
the real attach or detach of the demo server with ``openstack`` as the
demo user, runs ``ministack-fault watch`` (which must find the seed's
end state) and then checks that end state itself, ledger by ledger, as
an operator would: the volume and its attachments, the BDM (``server
volume list``), ``virsh domblklist``, the server's event, and a clean
``ministack-audit``. Also: arming is logged by both daemons, a one-shot
fault is gone once it fired, and a restart of minicompute disarms
everything.

The page that teaches them, docs/learn-by-breaking-it.md, marks its four
fault blocks ``<!-- run-in: functional -->``: they run here, once, as
typed, and these tests check what the page's ``watch`` does not show
(the event's fault, the daemons' logs, the fault's host); its other
blocks run in tests/quickstart/test_doc_blocks.py.
"""

import configparser
import json
import os
import shutil

import pytest
import sqlalchemy

from tests.support import doc_blocks
from tests.support import waiting
from tests.support.login_shell import login_shell
from tests.support.login_shell import script

pytestmark = pytest.mark.slow

DEMO = "--os-cloud ministack"
ADMIN = "--os-cloud ministack-admin"
LOGS = "/opt/stack/logs"


@pytest.fixture(scope="module", autouse=True)
def lab():
    if not os.path.exists("/etc/openstack/clouds.yaml") or \
            shutil.which("ministack-fault", path="/usr/local/bin") is None:
        pytest.skip("no deployed lab with ministack-fault (./lab.sh)")


def sh(command, timeout=300, ok=True):
    done = login_shell(command, timeout=timeout)
    if ok:
        assert done.returncode == 0, "%s -> %s\n%s\n%s" % (
            command, done.returncode, done.stdout[-3000:],
            done.stderr[-3000:])
    return done


def _json(command, timeout=120):
    return json.loads(sh(command, timeout).stdout)


def _status():
    return _json("ministack-fault status --json")


@pytest.fixture(autouse=True)
def nothing_left_armed():
    assert _status()["faults"] == [], "a fault was armed before the test"
    yield
    left = _status()["faults"]
    sh("ministack-fault disarm")
    assert left == [], left


def _volume_status(vid):
    return sh("openstack %s volume show %s -f value -c status" % (
        DEMO, vid)).stdout.strip()


def _wait_status(vid, wanted, timeout=300):
    waiting.wait_for("volume %s %s" % (vid, wanted),
                     lambda: _volume_status(vid) == wanted, timeout=timeout,
                     interval=2)


@pytest.fixture
def volume(request):
    """A new available volume of the demo project, deleted at the end
    (detached first if a failed test left it attached)."""
    name = "lab-fault-%s" % request.node.name.split("[")[0][-20:]
    vid = sh("openstack %s volume create --size 1 %s -f value -c id" % (
        DEMO, name)).stdout.strip()
    _wait_status(vid, "available")
    yield vid
    if _volume_status(vid) != "available":
        sh("openstack %s server remove volume demo %s" % (DEMO, vid),
           ok=False)
        _wait_status(vid, "available")
    sh("openstack %s volume delete %s" % (DEMO, vid))


@pytest.fixture(scope="module")
def demo():
    """The demo server as the admin sees it: id, domain, host."""
    server = _json("openstack %s server list --all-projects --name '^demo$'"
                   " -f json -c ID" % ADMIN)
    assert len(server) == 1, server
    shown = _json("openstack %s server show %s -f json" % (
        ADMIN, server[0]["ID"]))
    return {"id": shown["id"],
            "domain": shown["OS-EXT-SRV-ATTR:instance_name"],
            "host": shown["OS-EXT-SRV-ATTR:host"]}


def _arm(line):
    done = sh(line)
    assert done.stdout.startswith("armed "), done.stdout
    return done.stdout


def _bdm_devices(vid):
    """The device of each live BDM row of ``vid``: the seed's SQL on
    block_device_mapping (the API hides a BDM without attachment_id from
    2.89 on, the very row path 3 must not leave)."""
    url = configparser.RawConfigParser()
    url.read("/etc/ministack/miniapi.conf")
    engine = sqlalchemy.create_engine(url.get("database", "connection"))
    try:
        with engine.connect() as conn:
            return [row[0] for row in conn.execute(sqlalchemy.text(
                "SELECT device_name FROM block_device_mapping WHERE "
                "volume_id=:v AND deleted=0"), {"v": vid})]
    finally:
        engine.dispose()


def _domblklist(demo):
    return sh("virsh domblklist %s" % demo["domain"]).stdout


def _event(demo, request_id):
    shown = _json("openstack %s --os-compute-api-version 2.84 server event "
                  "show %s %s -f json" % (ADMIN, demo["id"], request_id))
    return shown["events"]


def _audit_clean():
    done = sh("ministack-audit --json", ok=False)
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["found"] == [], report["found"]


PAGE = "docs/learn-by-breaking-it.md"


def _page_block(name):
    """The page's block ``name`` (marked ``<!-- run-in: functional -->``:
    this test is where it runs, once, as typed)."""
    [block] = [b for b in doc_blocks.blocks(PAGE) if b.name == name]
    assert block.run_in == "functional", block.id
    return block


def _run_page_block(name, path, timeout=900):
    """Run the page's block as a reader types it; its ``watch`` found the
    seed's recovery path ``path`` and its end state. :returns: (output,
    the one firing of the fault, whose volume the block made)."""
    block = _page_block(name)
    done = login_shell(script(block.text, doc_blocks.REPO), timeout=timeout)
    out = done.stdout + done.stderr
    assert done.returncode == 0, "%s exited %d:\n%s" % (
        block.id, done.returncode, out[-4000:])
    assert "armed %s" % name in out, out[-3000:]
    assert "the seed's recovery path %d," % path in out, out[-3000:]
    assert "clean: the seed's end state." in out, out[-3000:]
    state = _status()
    assert state["faults"] == [], state          # one shot: used up
    fired = [f for f in state["fired"] if f["name"] == name]
    assert fired, state
    return out, fired[-1]


def test_every_fault_block_of_the_page_runs_here():
    mine = {b.name for b in doc_blocks.blocks(PAGE)
            if b.run_in == "functional"}
    assert mine == {"driver-attach", "attachment-complete",
                    "reserve-timeout", "detach-refused"}


@pytest.mark.parametrize("name, path", [("driver-attach", 1),
                                        ("attachment-complete", 2)])
def test_attach_faults(demo, name, path):
    """Paths 1 and 2, as the page makes them: the attach is accepted,
    fails on the host, and everything is rolled back; the fault was one
    shot, fired on the demo server's host, and logged by both daemons."""
    out, fired = _run_page_block(name, path)
    assert "Injected fault at %s" % name in out
    assert fired["host"] == demo["host"]
    vid = fired["volume_id"]
    assert _bdm_devices(vid) == []
    assert vid not in _domblklist(demo)
    [event] = [e for e in _event(demo, fired["request_id"])
               if e["event"] == "compute_attach_volume"]
    assert event["result"] == "Error"
    assert "Injected fault at %s" % name in event["details"]
    for log in ("miniapi.log", "minicompute.log"):
        assert fired["id"] in open(os.path.join(LOGS, log)).read(), log
    _audit_clean()


def test_reserve_timeout(demo):
    """Path 3: the CALL really times out (409 after miniapi's
    rpc_call_timeout), no BDM and no reservation stay, no instance
    action was recorded."""
    out, fired = _run_page_block("reserve-timeout", 3)
    assert "refused after the timeout" in out and "409" in out
    assert _bdm_devices(fired["volume_id"]) == []
    actions = _json("openstack %s server event list %s -f json" % (
        ADMIN, demo["id"]))
    assert fired["request_id"] not in [a["Request ID"] for a in actions]
    _audit_clean()


def test_detach_refused(demo):
    """Path 4: the guest is paused for the detach, the retries run out,
    the volume is in-use again with its BDM and disk (watch checks
    those), the guest runs again, and the page's retry works."""
    out, fired = _run_page_block("detach-refused", 4)
    assert "Device detach failed" in out
    assert sh("virsh domstate %s" % demo["domain"]).stdout.strip() == \
        "running"
    [event] = [e for e in _event(demo, fired["request_id"])
               if e["event"] == "compute_detach_volume"]
    assert event["result"] == "Error"
    assert "Device detach failed" in event["details"]
    vid = fired["volume_id"]
    assert _bdm_devices(vid) == [] and vid not in _domblklist(demo)
    _audit_clean()


def _compute_services():
    """minicompute, and minicompute@HOST of each other compute host."""
    rows = sh("ministackctl status").stdout.split("\n\n")[0].splitlines()
    return [row.split()[0] for row in rows[1:]
            if row.split()[0].startswith("minicompute")]


def test_a_restart_of_minicompute_disarms_everything(volume):
    """Nothing armed survives the daemons (no flag left on): armed for a
    volume, the fault is on every compute host; each one's restart
    disarms its copy."""
    _arm("ministack-fault arm driver-attach --volume %s --for 3600"
         % volume)
    [armed] = _status()["faults"]
    services = _compute_services()
    assert len(armed["hosts"]) == len(services)
    restart = "ministackctl restart %s" % " ".join(services)
    sh(restart, timeout=300)
    waiting.wait_for("minicompute serving again", lambda: sh(
        "ministackctl status %s" % " ".join(services),
        ok=False).returncode == 0, timeout=120, interval=2)
    waiting.wait_for("the restarted host answers", lambda: all(
        h["state"] == "ok" for h in _status()["hosts"]), timeout=120,
        interval=2)
    assert _status()["faults"] == []
    # And the attach that would have failed works.
    sh("openstack %s server add volume demo %s" % (DEMO, volume))
    _wait_status(volume, "in-use")
    sh("openstack %s server remove volume demo %s" % (DEMO, volume))
    _wait_status(volume, "available")


def test_ministackctl_status_shows_what_is_armed(volume):
    _arm("ministack-fault arm attachment-complete --volume %s" % volume)
    done = sh("ministackctl status")
    faults = done.stdout.split("FAULTS (ministack-fault status)\n", 1)[1]
    assert faults.startswith("ARMED attachment-complete"), done.stdout
    assert "for volume %s" % volume in faults
    sh("ministack-fault disarm attachment-complete")
    assert "no fault armed" in sh("ministackctl status").stdout
