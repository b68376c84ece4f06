"""The labvm tier: the lab deployed inside the lab VM (tools/labvm).

The VM is Debian 12 with systemd as PID 1, device-mapper and the kernel's
iSCSI initiator: the paths a lab VM takes that the container path never
does (docs/labvm.md). Tests reach it only through ``tools/labvm``, as a
person does:

* ``lab_vm`` (session): ``./lab.sh --vm`` once, its transcript kept; the
  VM and its lab are up for every test that asks for it;
* ``vm_run(command)`` (tests/support/labvm.py): a shell line run as root
  in the VM through ``tools/labvm ssh --``, its CompletedProcess returned;
* ``labvm(*args)`` (the same module): ``tools/labvm ARGS`` on the host.

Tests marked ``labvm_last`` (a reboot) run after all others, and those
marked ``labvm_shutdown`` (the VM stopped) at the very end. The tier needs
root and QEMU; a first run builds the image (minutes). MINISTACK_LABVM_FRESH=1
(run_tests.sh sets it) starts from no VM; without it a running VM, and
the lab in it, are reused.
"""

import os

import pytest

from tests.support.labvm import assert_journey_ran
from tests.support.labvm import lab_sh_vm
from tests.support.labvm import labvm


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "labvm_last: runs after the tier's other tests (a reboot)")
    config.addinivalue_line(
        "markers",
        "labvm_shutdown: runs at the tier's very end (stops the VM)")


def _order(item):
    if item.get_closest_marker("labvm_shutdown"):
        return 2
    return 1 if item.get_closest_marker("labvm_last") else 0


def pytest_collection_modifyitems(items):
    items.sort(key=_order)


@pytest.fixture(scope="session")
def lab_vm():
    """The VM with the lab deployed in it: ``./lab.sh --vm``, once.

    With MINISTACK_LABVM_FRESH=1 the VM starts from nothing (its disk
    made again from the cached image; the image itself is rebuilt only
    when stale). The transcript is the fixture's value.
    """
    if os.geteuid() != 0:
        pytest.skip("the labvm tier runs as root")
    if os.environ.get("MINISTACK_LABVM_FRESH") == "1":
        labvm("destroy", "--keep-image", check=True, timeout=300)
    done = lab_sh_vm()
    assert_journey_ran(done)
    return done
