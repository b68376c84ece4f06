"""tools/lint_rpc_seam.py: RPC topics and method names only in rpcapi."""

import importlib.util
import os

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def lint():
    spec = importlib.util.spec_from_file_location(
        "lint_rpc_seam", os.path.join(TOP, "tools", "lint_rpc_seam.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BAD = '''\
import oslo_messaging as messaging

from ministack import rpc


def attach_behind_rpcapis_back(transport, ctxt, instance, bdm):
    target = messaging.Target(topic="compute", version="1.0")
    client = rpc.get_client(transport, target)
    cctxt = client.prepare(server=instance["host"])
    cctxt.cast(ctxt, "attach_volume", instance=instance, bdm=bdm)
    return client.prepare(topic="compute").call(
        ctxt, method="get_console_output")
'''

GOOD = '''\
from minicompute import rpcapi


def attach(transport, ctxt, instance, bdm, session):
    rpcapi.ComputeAPI(transport).attach_volume(ctxt, instance, bdm)
    # the same words elsewhere are not RPC: a log line, an HTTP call
    print("attach_volume", "compute")
    session.call("POST", "/servers/x/action")
    return {"topic": "compute"}
'''


def test_names_come_from_rpcapi(lint):
    with open(os.path.join(TOP, "minicompute", "rpcapi.py")) as f:
        names = lint.rpc_names(f.read())
    assert names["compute"] == "topic"
    for method in ("reserve_block_device_name", "attach_volume",
                   "detach_volume", "reboot_instance", "get_console_output"):
        assert names[method] == "method"


def test_a_bad_sample_is_caught(lint, tmp_path):
    bad = tmp_path / "bad_module.py"
    bad.write_text(BAD)
    found = lint.check([str(tmp_path)])
    assert [line.split(": ", 1)[0] for line in found] == [
        "%s:7:37" % bad, "%s:10:22" % bad, "%s:11:33" % bad,
        "%s:12:22" % bad]
    text = "\n".join(found)
    assert "RPC topic 'compute'" in text and "in Target()" in text
    assert "RPC method 'attach_volume'" in text and "in cast()" in text
    assert "in prepare()" in text
    assert "RPC method 'get_console_output'" in text and "in call()" in text
    assert lint.main([str(bad)]) == 1


def test_a_good_sample_passes(lint, tmp_path):
    good = tmp_path / "good_module.py"
    good.write_text(GOOD)
    assert lint.check([str(good)]) == []
    assert lint.main([str(good)]) == 0


def test_rpcapi_and_rpc_are_exempt_and_the_tree_is_clean(lint):
    assert lint.check([os.path.join(TOP, "minicompute", "rpcapi.py"),
                       os.path.join(TOP, "ministack", "rpc.py")]) == []
    assert lint.main([]) == 0
