"""``ministack-fault`` on two compute hosts: a fault armed for a volume
is armed on every host (its next attach may go to either), fires on the
host that runs the attach, here the second one, and the other host
drops its copy: one shot means once, on the whole lab. ``watch`` reads
the second host's libvirtd.

The demo user attaches to ``demo-compute2`` (the server the multinode
bring-up walks the journey on), as a user types it in a root login
shell.
"""

import json

from tests.support import waiting
from tests.support.login_shell import checked

DEMO = "--os-cloud ministack"


sh = checked


def _volume_status(vid):
    return sh("openstack %s volume show %s -f value -c status" % (
        DEMO, vid)).strip()


def test_a_one_shot_fault_fires_once_on_the_host_that_attaches(hosts,
                                                               cleanup):
    second = list(hosts)[1]
    vid = sh("openstack %s volume create --size 1 fault-two-hosts -f value "
             "-c id" % DEMO).strip()
    cleanup.add(sh, "openstack %s volume delete %s" % (DEMO, vid))
    waiting.wait_for("volume available",
                     lambda: _volume_status(vid) == "available",
                     timeout=120, interval=2)
    cleanup.add(sh, "ministack-fault disarm")
    armed = sh("ministack-fault arm attachment-complete --volume %s" % vid)
    assert "on compute host(s) %s:" % ", ".join(hosts) in armed, armed
    sh("openstack %s server add volume demo-compute2 %s" % (DEMO, vid))
    report = sh("ministack-fault watch --volume %s" % vid, timeout=600)
    assert "fired on compute host %s" % second in report
    assert "virsh -c '%s' domblklist" % hosts[second].libvirt_uri in report
    assert report.rstrip().endswith("clean: the seed's end state.")
    state = json.loads(sh("ministack-fault status --json"))
    assert state["faults"] == [], state       # the first host dropped it
    fired = [f for f in state["fired"] if f["volume_id"] == vid]
    assert [f["host"] for f in fired] == [second]
    assert _volume_status(vid) == "available"
