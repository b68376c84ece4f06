"""``tools/journey.py --boot-from-volume`` as a user types it (a new root
login shell, from the repository): a bootable volume made from the
image, a server booted from it with the volume's LUN as vda, every
ledger after the spawn, the boot's hops phase by phase in the trace
``ministack-trace show`` prints, then the server deleted and the volume
kept, available with no attachment."""

import os
import re
import shutil

import pytest

from tests.support import hop_table
from tests.support import login_shell

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
JOURNEY = "/opt/stack/venv/bin/python tools/journey.py --boot-from-volume"
PHASES = r"reserve|cast|connect \+ spawn|complete"
# (phase, service, kind, name) of hops the boot's trace must hold.
HOPS = (
    ("reserve", "nova-api", "REST", "POST /v2.1/servers"),
    ("reserve", "nova-api", "REST", "POST /v3/{project}/attachments"),
    ("cast", "nova-api", "CAST", "build_and_run_instance"),
    ("connect + spawn", "nova-compute", "CAST", "build_and_run_instance"),
    ("connect + spawn", "nova-compute", "REST",
     "PUT /v3/{project}/attachments/{id}"),
    ("complete", "nova-compute", "REST",
     "POST /v3/{project}/attachments/{id}/action (os-complete)"),
)


def _run(command):
    return login_shell.checked(login_shell.script(command, REPO),
                               timeout=900)


@pytest.fixture(scope="module", autouse=True)
def lab():
    if os.geteuid() != 0:
        pytest.skip("the journey runs as root")
    if not os.path.exists("/etc/openstack/clouds.yaml") or \
            shutil.which("ministack-trace", path="/usr/local/bin") is None:
        pytest.skip("no deployed lab (./lab.sh)")


def test_journey_boot_from_volume_shows_every_ledger_and_hop():
    out = _run(JOURNEY)
    assert "journey complete in " in out
    volume_id = re.search(r"volume ([0-9a-f-]{36}) is available, "
                          r"bootable=true", out).group(1)
    booted = out.split("== Booted from the volume", 1)[1].split(
        "== Delete the server", 1)[0]
    # Cinder, nova's BDM, libvirt and the guest agree: vda is the LUN.
    assert "status=in-use" in booted, booted
    assert re.search(r"nova BDM:\s+BDM /dev/vda attachment_id=[0-9a-f]{8} "
                     r"connection_info=\d+ bytes", booted), booted
    assert re.search(r"\bvda\s+\S*volume-%s" % volume_id, booted), booted
    assert "vda %s" % volume_id[:20] in booted, booted
    # The spawn's hops, in the boot's own phases.
    trace_id = re.search(r"== The boot from volume, hop by hop \(osprofiler "
                         r"trace ([0-9a-f-]{36})\)", booted).group(1)
    printed = hop_table.rows(booted.split("$ ministack-trace show", 1)[1],
                             PHASES)
    shown = _run("ministack-trace show %s" % trace_id)
    assert shown.splitlines()[0].startswith(
        "trace %s  (boot, " % trace_id), shown
    rows = hop_table.rows(shown, PHASES)
    assert rows == printed, (rows, printed)
    for hop in HOPS:
        assert hop in rows, (hop, shown)
    # Deleted: the volume kept, available, with no attachment left.
    deleted = out.split("== Delete the server", 1)[1]
    assert "cinder volume:      status=available attachments=[]" in deleted
    assert "cinder attachments: none" in deleted
    assert "volume %s is gone" % volume_id in deleted
