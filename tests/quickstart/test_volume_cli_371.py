"""Every volume command the journey and the docs use, at
``--os-volume-api-version 3.71`` (minicinder's ceiling, issue 29), typed
as a user types it in a new root login shell
(``tests/support/login_shell.py``): nothing of the test's environment
reaches the command.

The demo user (``--os-cloud ministack``) creates, lists, shows,
reserves and frees through the attachments API, extends (in-use on a
server of its own, as the journey does on ``demo``, then available),
offers the volume for transfer; the alt_demo user (``--os-cloud
ministack-alt``) accepts it and deletes it. Each answer is checked for
what 3.71 shows (3.63 ``volume_type_id``, 3.65 ``consumes_quota``, 3.69
``shared_targets``). The server is the test's own (booted with
``openstack server create --wait``): the lab's ``demo`` is where other
tiers break attaches on purpose.
"""

import json
import os
import shutil
import uuid

import pytest

from tests.support import login_shell
from tests.support import waiting

V = "--os-volume-api-version 3.71"
DEMO = "openstack --os-cloud ministack %s" % V
ALT = "openstack --os-cloud ministack-alt %s" % V


@pytest.fixture(scope="module", autouse=True)
def lab():
    if os.geteuid() != 0:
        pytest.skip("the docs' commands run as root")
    if not os.path.exists("/etc/openstack/clouds.yaml") or \
            shutil.which("openstack", path="/usr/local/bin") is None:
        pytest.skip("no deployed lab (./lab.sh)")


def sh(command, ok=True, timeout=180):
    done = login_shell.login_shell(command, timeout=timeout)
    if ok:
        assert done.returncode == 0, (command, done.stdout[-2000:],
                                      done.stderr[-2000:])
    return done.stdout


def js(command):
    return json.loads(sh(command + " -f json"))


def _shown(cli, vid):
    return js("%s volume show %s" % (cli, vid))


def _wait(cli, vid, **wanted):
    return waiting.wait_for(
        "volume %s %s" % (vid, wanted), lambda: _shown(cli, vid),
        lambda v: all(v[k] == w for k, w in wanted.items()),
        lambda v: v["status"].startswith("error"), timeout=300, interval=2)


@pytest.fixture(scope="module")
def server():
    name = "cli-371-%s" % uuid.uuid4().hex[:6]
    server_id = sh("openstack --os-cloud ministack server create --image "
                   "ministack-guest --flavor 42 --nic none --wait %s -f "
                   "value -c id" % name, timeout=600).strip()
    yield server_id
    sh("openstack --os-cloud ministack server delete --wait %s" % server_id,
       timeout=600)


@pytest.fixture
def volume(server):
    """The demo's new volume; whoever holds it at the end deletes it
    (detached first if a failed test left it attached)."""
    name = "cli-371-%s" % uuid.uuid4().hex[:6]
    vid = sh("%s volume create --size 1 %s -f value -c id" % (
        DEMO, name)).strip()
    yield vid
    for cli in (DEMO, ALT):
        if sh("%s volume show %s -f value -c status" % (cli, vid),
              ok=False).strip() in ("", "deleting"):
            continue
        sh("%s server remove volume %s %s" % (cli, server, vid), ok=False)
        for att in json.loads(sh("%s volume attachment list --volume-id %s "
                                 "-f json" % (cli, vid), ok=False) or "[]"):
            sh("%s volume attachment delete %s" % (cli, att["ID"]),
               ok=False)
        sh("%s volume transfer request list -f value -c ID -c Volume | "
           "awk '$2 == \"%s\" {print $1}' | xargs -r %s volume transfer "
           "request delete" % (cli, vid, cli), ok=False)
        _wait(cli, vid, status="available")
        sh("%s volume delete %s" % (cli, vid))


def test_every_volume_command_at_3_71(server, volume):
    vid = volume
    shown = _wait(DEMO, vid, status="available")
    assert shown["size"] == 1
    # what 3.63, 3.65 and 3.69 add to a volume
    assert shown["volume_type_id"] and shown["consumes_quota"] is True
    assert shown["shared_targets"] in (True, False, None)
    assert vid in [v["ID"] for v in js("%s volume list" % DEMO)]
    assert vid in [v["ID"] for v in js("%s volume list --long" % DEMO)]

    # the attachments API: a reservation without a connector, freed
    att = js("%s volume attachment create %s --server %s" % (
        DEMO, vid, server))
    assert (att["Volume ID"], att["Status"]) == (vid, "reserved"), att
    listed = js("%s volume attachment list --volume-id %s" % (DEMO, vid))
    assert [(a["ID"], a["Status"]) for a in listed] == [
        (att["ID"], "reserved")], listed
    assert js("%s volume attachment show %s" % (DEMO, att["ID"]))[
        "Instance ID"] == server
    assert _shown(DEMO, vid)["status"] == "reserved"
    sh("%s volume attachment delete %s" % (DEMO, att["ID"]))
    assert js("%s volume attachment list --volume-id %s" % (DEMO, vid)) \
        == []
    _wait(DEMO, vid, status="available")

    # in-use: extended live (3.42), as the journey does it; the new LV
    # has its own size of room after it
    sh("openstack --os-cloud ministack server add volume %s %s" % (
        server, vid))
    _wait(DEMO, vid, status="in-use")
    sh("%s volume set --size 2 %s" % (DEMO, vid))
    _wait(DEMO, vid, status="in-use", size=2)
    sh("openstack --os-cloud ministack server remove volume %s %s" % (
        server, vid))
    _wait(DEMO, vid, status="available")
    # available: extended (its data moved to a new LV if it must)
    sh("%s volume set --size 3 %s" % (DEMO, vid))
    _wait(DEMO, vid, status="available", size=3)

    # a transfer to the alt_demo project (3.55+ volume-transfers API)
    offer = js("%s volume transfer request create %s" % (DEMO, vid))
    assert offer["volume_id"] == vid and offer["auth_key"], offer
    assert offer["id"] in [t["ID"] for t in js(
        "%s volume transfer request list" % DEMO)]
    detail = js("%s volume transfer request show %s" % (DEMO, offer["id"]))
    assert detail["volume_id"] == vid
    assert _shown(DEMO, vid)["status"] == "awaiting-transfer"
    accepted = js("%s volume transfer request accept --auth-key %s %s" % (
        ALT, offer["auth_key"], offer["id"]))
    assert accepted["volume_id"] == vid, accepted
    assert offer["id"] not in [t["ID"] for t in js(
        "%s volume transfer request list" % DEMO)]
    moved = _wait(ALT, vid, status="available")
    assert moved["size"] == 3
    # demo no longer sees it; alt_demo deletes it
    assert sh("%s volume show %s" % (DEMO, vid), ok=False).strip() == ""
    sh("%s volume delete %s" % (ALT, vid))
    waiting.wait_for("volume %s deleted" % vid, lambda: sh(
        "%s volume show %s -f value -c status" % (ALT, vid),
        ok=False).strip(), lambda status: status == "", timeout=120,
        interval=2)
