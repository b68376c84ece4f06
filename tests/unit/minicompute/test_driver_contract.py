"""ComputeDriver declares what its callers use; both drivers implement it.

The contract is read from the callers' source: every ``self.driver.<m>``
of the manager, reconciler, resource tracker and service and every
``virt_driver.<m>`` of the attach flow must be a documented method of
ComputeDriver, and the fake and libvirt drivers must each define every
abstract one.
"""

import inspect
import pathlib
import re

import pytest

from minicompute.virt import driver
from minicompute.virt import fake

ROOT = pathlib.Path(__file__).resolve().parents[3] / "minicompute"
CALLERS = {"manager.py": r"self\.driver\.(\w+)\(",
           "reconcile.py": r"self\.driver\.(\w+)\(",
           "resource_tracker.py": r"self\.driver\.(\w+)\(",
           "service.py": r"(?<![\w.])(?:self\.)?driver\.(\w+)\(",
           "virt/block_device.py": r"virt_driver\.(\w+)\(",
           # the detach-refused fault point (pause, resume, replug)
           "faults/points.py": r"self\.driver\.(\w+)\(",
           # pause, unpause (passed as callables), suspend, resume
           "pause_suspend.py": r"self\.driver\.(\w+)\b"}


def _abstract():
    out = set()
    for name, func in vars(driver.ComputeDriver).items():
        if callable(func) and not name.startswith("_") and \
                "NotImplementedError" in inspect.getsource(func):
            out.add(name)
    return out


def _called():
    found = set()
    for path, pattern in CALLERS.items():
        found |= set(re.findall(pattern, (ROOT / path).read_text()))
    return found


def test_every_called_method_is_declared_with_a_docstring():
    called = _called()
    assert {"attach_volume", "list_volume_disks", "unplug_disk",
            "replug_volume", "check_host", "get_available_resource",
            "get_host_uptime", "pause", "power_on"} <= called
    for name in sorted(called):
        method = getattr(driver.ComputeDriver, name, None)
        assert method is not None, "ComputeDriver lacks %s" % name
        assert (method.__doc__ or "").strip(), "%s has no docstring" % name


@pytest.mark.parametrize("impl", ["fake", "libvirt"])
def test_drivers_implement_every_abstract_method(impl):
    if impl == "fake":
        cls = fake.FakeDriver
    else:
        libvirt_driver = pytest.importorskip(
            "minicompute.virt.libvirt.driver")
        cls = libvirt_driver.LibvirtDriver
    missing = [name for name in sorted(_abstract())
               if getattr(cls, name) is getattr(driver.ComputeDriver, name)]
    assert missing == []


def test_reconciler_calls_only_public_manager_methods():
    source = (ROOT / "reconcile.py").read_text()
    assert re.findall(r"self\.manager\._\w+", source) == []
