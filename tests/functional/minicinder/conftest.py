"""Fixtures of a real minicinder daemon on real LVM and tgt.

The daemon (``tests/support/minicinder_daemon.py``) is the installed
``minicinder`` console script, started as a subprocess with a temporary
config, a temporary SQLite database and a free port. Storage is the lab's
volume group when ``devstack/stack.sh`` has made it; otherwise a private
volume group on a sparse loop file is created for this run (and removed
afterwards), so these tests never depend on, or touch, other engineers'
volumes. Every volume, target and loop device a test creates is removed
in finalizers, even when the test fails.
"""

import os

import pytest

from tests.support.minicinder_daemon import LAB_VG
from tests.support.minicinder_daemon import NO_DM
from tests.support.minicinder_daemon import Daemon
from tests.support.minicinder_daemon import Raw
from tests.support.minicinder_daemon import force_cleanup
from tests.support.minicinder_daemon import run
from tests.support.minicinder_daemon import vg_exists

pytestmark = pytest.mark.skipif(os.geteuid() != 0,
                                reason="needs root for LVM and tgt")


@pytest.fixture(scope="session")
def volume_group(tmp_path_factory):
    """The lab VG, or a private one on a loop file for this run."""
    if vg_exists(LAB_VG):
        yield LAB_VG
        return
    name = "minicinder-ftest-%d" % os.getpid()
    image = tmp_path_factory.mktemp("vg") / "pv.img"
    run("truncate", "-s", "4G", str(image))
    loop = run("losetup", "--show", "-f", str(image))[0].strip()
    try:
        run("pvcreate", *NO_DM, loop)
        run("vgcreate", *NO_DM, name, loop)
        yield name
    finally:
        run("vgremove", *NO_DM, "-f", name, check=False)
        run("pvremove", *NO_DM, "-f", loop, check=False)
        run("losetup", "-d", loop, check=False)
        image.unlink()


@pytest.fixture(scope="module")
def daemon(tmp_path_factory, volume_group):
    d = Daemon(tmp_path_factory.mktemp("minicinder"), volume_group)
    d.start()
    yield d
    d.stop()


@pytest.fixture
def raw(daemon):
    return Raw(daemon.url)


@pytest.fixture
def make_volume(raw, volume_group):
    """Create available volumes; delete them (and check) afterwards."""
    created = []

    def _make(size=1, volume_type=None):
        body = {"volume": {"size": size, "name": "ftest"}}
        if volume_type:
            body["volume"]["volume_type"] = volume_type
        resp = raw("POST", "/volumes", body)
        assert resp.status_code == 202, resp.text
        volume_id = resp.json()["volume"]["id"]
        created.append(volume_id)
        raw.wait_status(volume_id, "available")
        return volume_id

    yield _make
    for volume_id in created:
        force_cleanup(raw, volume_id)
