"""initiator.setup_os_brick: privsep in-process, os-brick's lock_path set.

Without a lock_path os-brick's ISCSIConnector refuses every
connect_volume (its external lock needs a directory); without privsep's
client mode off a root daemon would try to sudo a privsep-helper.
"""

import os

from os_brick.initiator.connectors import base as brick_base
import os_brick.privileged
from oslo_config import cfg
import pytest

from minicompute.virt.libvirt import initiator


@pytest.fixture
def restore():
    mode = os_brick.privileged.default.client_mode
    yield
    os_brick.privileged.default.set_client_mode(mode)
    cfg.CONF.clear_default("lock_path", group="os_brick")


def test_setup_runs_privsep_in_process_and_sets_lock_path(tmp_path,
                                                          restore):
    path = initiator.setup_os_brick(str(tmp_path))
    assert path == str(tmp_path / "lock" / "os-brick")
    assert os.path.isdir(path)
    assert cfg.CONF.os_brick.lock_path == path
    assert os_brick.privileged.default.client_mode is False


def test_os_bricks_external_lock_works_after_setup(tmp_path, restore):
    initiator.setup_os_brick(str(tmp_path))
    ran = []

    @brick_base.synchronized("connect_volume", external=True)
    def connect():
        ran.append(True)

    connect()
    assert ran == [True]
    assert os.listdir(tmp_path / "lock" / "os-brick")
