"""``tools/journey.py --shelve`` as a user types it (a new root login
shell, from the repository): a server with a volume attached is shelved
and offloaded, a second volume attached while it has no host, and it is
unshelved with both; every ledger after each phase says what the phase
did, the parked attachment above all (``reserved``, no connector, no
export)."""

import os
import re

import pytest

from tests.support import login_shell

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
JOURNEY = "/opt/stack/venv/bin/python tools/journey.py --shelve"


def _run(command):
    return login_shell.checked(login_shell.script(command, REPO),
                               timeout=900)


@pytest.fixture(scope="module", autouse=True)
def lab():
    if os.geteuid() != 0:
        pytest.skip("the journey runs as root")
    if not os.path.exists("/etc/openstack/clouds.yaml"):
        pytest.skip("no deployed lab (./lab.sh)")


def _phase(out, start, end):
    return out.split("== " + start, 1)[1].split("== " + end, 1)[0]


def _volume(phase, volume_id):
    """The ledger lines of one volume in a phase."""
    return phase.split("volume %s:" % volume_id[:8], 1)[1].split(
        "   volume ", 1)[0].split("   virsh", 1)[0]


def test_journey_shelve_shows_the_parked_attachment():
    out = _run(JOURNEY)
    assert "journey complete in " in out
    first, late = re.findall(r"volume \S+ \(([0-9a-f-]{36})\) is available",
                             out)
    attached = _phase(out, "Attached:", "Shelve:")
    ledger = _volume(attached, first)
    assert "cinder volume:     status=in-use" in ledger, ledger
    assert re.search(r"status=attached instance=\S+ connector=yes", ledger)
    assert re.search(r"nova BDM:\s+BDM /dev/vdb attachment_id=[0-9a-f]{8} "
                     r"connection_info=\d+ bytes", ledger), ledger
    assert re.search(r"tgt export:\s+ACL \S", ledger), ledger

    shelved = _phase(out, "Shelve:", "Offloaded:")
    assert re.search(r'snapshot image:\s+\{"id": "[0-9a-f-]{36}", '
                     r'"name": "journey-shelve-shelved", "status": '
                     r'"ACTIVE"', shelved), shelved
    assert '"image_type": "snapshot"' in shelved, shelved

    offloaded = _phase(out, "Offloaded:", "Attach while offloaded")
    assert "status=SHELVED_OFFLOADED host=None" in offloaded, offloaded
    assert "is not defined" in offloaded, offloaded
    ledger = _volume(offloaded, first)
    assert "cinder volume:     status=reserved" in ledger, ledger
    assert re.search(r"status=reserved instance=\S+ connector=none",
                     ledger), ledger
    assert "connection_info: None" in ledger, ledger
    assert re.search(r"nova BDM:\s+BDM /dev/vdb attachment_id=[0-9a-f]{8} "
                     r"connection_info=NULL", ledger), ledger
    assert "tgt export:        ACL empty (exported to no one)" in ledger or \
        "tgt export:        no target" in ledger, ledger

    while_offloaded = _phase(out, "Attach while offloaded", "Unshelve:")
    ledger = _volume(while_offloaded, late)
    assert "cinder volume:     status=in-use" in ledger, ledger
    assert re.search(r"status=attached instance=\S+ connector=none",
                     ledger), ledger
    assert re.search(r"nova BDM:\s+BDM None attachment_id=[0-9a-f]{8} "
                     r"connection_info=NULL", ledger), ledger

    back = _phase(out, "Unshelved:", "Instance actions")
    assert "status=ACTIVE host=" in back and "host=None" not in back, back
    for volume_id, device in ((first, "vdb"), (late, "vdc")):
        ledger = _volume(back, volume_id)
        assert "cinder volume:     status=in-use" in ledger, ledger
        assert re.search(r"nova BDM:\s+BDM /dev/%s attachment_id=[0-9a-f]{8}"
                         r" connection_info=\d+ bytes" % device, ledger), \
            ledger
        assert re.search(r"\b%s\s+\S*volume-%s" % (device, volume_id), back)
    assert "snapshot image:     deleted" in back, back
    cleaned = out.split("== Clean up", 1)[1]
    for volume_id in (first, late):
        assert "volume %s is gone" % volume_id in cleaned, cleaned
