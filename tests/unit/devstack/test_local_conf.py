"""devstack/stackrc reads a DevStack-style local.conf.

Run in a bash subprocess, as stack.sh sources it, with TOP_DIR pointing
at a directory that holds only the local.conf under test (stackrc reads
nothing else from there). No root, no lab.
"""

import os
import subprocess

import pytest

DEVSTACK = os.path.join(os.path.dirname(__file__), "..", "..", "..",
                        "devstack")
DEFAULT = ("rabbit,tgt,libvirt,lvm,image,keystone,minicinder,miniapi,"
           "minicompute,tempest")


def _stackrc(tmp_path, local_conf, show="$ENABLED_SERVICES"):
    (tmp_path / "local.conf").write_text(local_conf)
    env = {"PATH": os.environ["PATH"], "TOP_DIR": str(tmp_path),
           "HOME": str(tmp_path)}
    script = ('cd "%s" && source ./functions && source ./stackrc && '
              'echo "%s"' % (os.path.abspath(DEVSTACK), show))
    return subprocess.run(["bash", "-c", script], env=env,
                          capture_output=True, text=True, timeout=60)


def test_without_local_conf_lines_every_service_is_enabled(tmp_path):
    done = _stackrc(tmp_path, "")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == DEFAULT


def test_devstack_meta_section_and_service_verbs(tmp_path):
    done = _stackrc(tmp_path, "\n".join([
        "[[local|localrc]]",
        "ADMIN_PASSWORD=from-local-conf",
        "HOST_IP=127.0.0.1",
        "disable_service tempest",
        "disable_service c-vol",     # DevStack's name for minicinder
        "enable_service key",        # already on: no duplicate
        "[[post-config|$NOVA_CONF]]",
        "[DEFAULT]",
        "debug = True",
        ""]), show="$ENABLED_SERVICES $ADMIN_PASSWORD $HOST_IP")
    assert done.returncode == 0, done.stderr
    services, password, host_ip = done.stdout.split()
    assert services.split(",") == [
        s for s in DEFAULT.split(",") if s not in ("tempest", "minicinder")]
    assert (password, host_ip) == ("from-local-conf", "127.0.0.1")


def test_enable_after_disable_and_plain_file(tmp_path):
    done = _stackrc(tmp_path, "ENABLED_SERVICES=rabbit,keystone\n"
                              "enable_service n-api n-cpu\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "rabbit,keystone,miniapi,minicompute"


@pytest.mark.parametrize("line", ["disable_service horizon",
                                  "enable_service n-api q-svc"])
def test_unknown_service_is_an_error_that_names_it(tmp_path, line):
    done = _stackrc(tmp_path, "[[local|localrc]]\n%s\n" % line)
    assert done.returncode != 0
    unknown = line.split()[-1]
    assert "unknown service(s)" in done.stderr
    assert unknown in done.stderr.split("ministack has:")[0]
