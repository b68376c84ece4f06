"""``tools/journey.py --extend`` as a user types it (a new root login
shell, from the repository): after the attach the volume grows by 1 GiB
while attached, every ledger shows the new size, and the extend's hops
are in the trace ``ministack-trace show`` prints, phase by phase.

It walks on the demo server of each host the lab runs: ``demo`` on the
first host, ``demo-compute2`` (``--host compute2``) on a two-host lab.
"""

import os
import re
import shutil

import pytest

from tests.support import hop_table
from tests.support import lab_hosts
from tests.support import login_shell

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
JOURNEY = "/opt/stack/venv/bin/python tools/journey.py --extend"
HOSTS = lab_hosts.running_hosts() or [None]
GIB2 = str(2 * 1024 ** 3)

# Each ledger after the extend, as the journey prints it.
LEDGERS = (
    "== Extended: every ledger shows 2 GiB",
    "cinder volume:      size=2 GiB status=in-use",
    "LV:                 %s bytes (2 GiB)" % GIB2,
    "Size: 2147 MB",
    "Capacity %s bytes" % GIB2,
    "nova BDM:           volume_size=2",
    "extend_volume  req-",
    "events: compute_extend_volume=Success",
)
# The extend's hops: (phase, service, kind, name).
HOPS = (
    ("extend", "cinder-api", "REST",
     "POST /v3/{project}/volumes/{id}/action (os-extend)"),
    ("extend", "cinder-volume", "LIBRARY", "extend_volume"),
    ("extend", "cinder-volume", "COMMAND", "lvextend"),
    ("extend", "cinder-volume", "LIBRARY", "ioctl LOOP_SET_STATUS64"),
    ("extend", "cinder-volume", "COMMAND", "tgtadm logicalunit update"),
    ("volume-extended", "cinder-volume", "REST",
     "POST /v2.1/os-server-external-events"),
    ("cast", "nova-api", "CAST", "external_instance_event"),
    ("resize", "nova-compute", "CAST", "external_instance_event"),
    ("resize", "nova-compute", "REST", "GET /v3/{project}/volumes/{id}"),
    ("resize", "nova-compute", "LIBRARY", "virDomainBlockResize"),
)


def _run(command):
    return login_shell.checked(login_shell.script(command, REPO),
                               timeout=900)


@pytest.fixture(scope="module", autouse=True)
def lab():
    if os.geteuid() != 0:
        pytest.skip("the journey runs as root")
    if not os.path.exists("/etc/openstack/clouds.yaml") or \
            shutil.which("ministack-trace", path="/usr/local/bin") is None \
            or HOSTS == [None]:
        pytest.skip("no deployed lab (./lab.sh)")


@pytest.mark.parametrize("host", HOSTS)
def test_journey_extend_shows_every_ledger_and_hop(host):
    first = host == HOSTS[0]
    out = _run(JOURNEY if first else "%s --host %s" % (JOURNEY, host))
    assert "journey complete in " in out
    if not first:
        assert "on compute host %s" % host in out
    extend = out.split("== Extend while attached", 1)[1].split(
        "== Detach:", 1)[0]
    for line in LEDGERS:
        assert line in extend, (line, extend[-3000:])
    assert re.search(r"in the guest:       /dev/vd[a-z]+ %s bytes" % GIB2,
                     extend), extend
    assert re.search(r"\+ *[\d.]+s  volume extending  size=1 GiB", extend)
    trace_id = re.search(r"== The extend, hop by hop \(osprofiler trace "
                         r"([0-9a-f-]{36})\)", extend).group(1)
    printed = hop_table.rows(extend.split("$ ministack-trace show", 1)[1])
    # ministack-trace show, as the journey says to type it: the same hops
    shown = _run("ministack-trace show %s" % trace_id)
    assert shown.splitlines()[0].startswith(
        "trace %s  (extend, " % trace_id), shown
    rows = hop_table.rows(shown)
    assert rows == printed, (rows, printed)
    for hop in HOPS:
        assert hop in rows, (hop, shown)
    assert [r for r in rows if r[3] == "virDomainBlockResize"] == [
        HOPS[-1]], shown
