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
    # The lab's own state (DATA_DIR's remembered COMPUTE_HOSTS, CONF_DIR's
    # passwords) stays out: each test has its own directories.
    env = {"PATH": os.environ["PATH"], "TOP_DIR": str(tmp_path),
           "HOME": str(tmp_path), "DATA_DIR": str(tmp_path / "data"),
           "CONF_DIR": str(tmp_path / "conf")}
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
    # n-cpu brings its hypervisor and the guest image, as in DevStack.
    assert done.stdout.strip() == \
        "rabbit,keystone,miniapi,minicompute,libvirt,image"


@pytest.mark.parametrize("line", ["disable_service horizon",
                                  "enable_service n-api q-svc"])
def test_unknown_service_is_an_error_that_names_it(tmp_path, line):
    done = _stackrc(tmp_path, "[[local|localrc]]\n%s\n" % line)
    assert done.returncode != 0
    unknown = line.split()[-1]
    assert "unknown service(s)" in done.stderr
    assert unknown in done.stderr.split("ministack has:")[0]


ADDRESSES = ("$HOST_IP $SERVICE_HOST $DATABASE_HOST $RABBIT_HOST $TGT_HOST "
             "$COMPUTE_HOSTS")


@pytest.mark.parametrize("hosts, address", [("1", "127.0.0.1"),
                                            ("2", "10.42.0.1")])
def test_more_compute_hosts_move_the_lab_to_its_link(tmp_path, hosts,
                                                     address):
    """With COMPUTE_HOSTS > 1 every service's address is the controller's
    on the lab's link (the other hosts reach it); one host keeps
    loopback."""
    done = _stackrc(tmp_path, "COMPUTE_HOSTS=%s\n" % hosts, show=ADDRESSES)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [address] * 5 + [hosts]


def test_the_number_of_hosts_is_remembered(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "compute_hosts").write_text("3\n")
    done = _stackrc(tmp_path, "", show=ADDRESSES)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-2:] == ["10.42.0.1", "3"]
    done = _stackrc(tmp_path, "COMPUTE_HOSTS=1\n", show=ADDRESSES)
    assert done.stdout.split()[-2:] == ["127.0.0.1", "1"]


@pytest.mark.parametrize("value", ["two", "0", "100", "-1"])
def test_compute_hosts_is_a_number_of_hosts(tmp_path, value):
    done = _stackrc(tmp_path, "COMPUTE_HOSTS=%s\n" % value)
    assert done.returncode != 0
    assert "COMPUTE_HOSTS=%s is not a number of hosts" % value in done.stderr


def _subnode_local_conf():
    """The subnode's local.conf of docs/multinode.md, as printed there."""
    path = os.path.join(DEVSTACK, "..", "docs", "multinode.md")
    with open(path) as handle:
        text = handle.read()
    block = text.split("```ini\n[[local|localrc]]\n", 1)[1].split("```", 1)[0]
    return "[[local|localrc]]\n" + block


SUBNODE = ("$(is_subnode && echo subnode) $SERVICE_HOST $HOST_IP "
           "$DATABASE_HOST $RABBIT_HOST $ENABLED_SERVICES "
           "$(check_subnode_settings && echo complete)")


def test_the_docs_subnode_local_conf_is_a_complete_subnode(tmp_path):
    done = _stackrc(tmp_path, _subnode_local_conf(), show=SUBNODE)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        "subnode", "192.0.2.10", "192.0.2.11", "192.0.2.10", "192.0.2.10",
        "minicompute,libvirt,image", "complete"]


def test_an_incomplete_subnode_names_what_is_missing(tmp_path):
    done = _stackrc(tmp_path, "[[local|localrc]]\nENABLED_SERVICES=n-cpu\n"
                    "SERVICE_HOST=192.0.2.10\n", show=SUBNODE)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] == "subnode"
    assert "complete" not in done.stdout
    for missing in ("HOST_IP=", "RABBIT_PASSWORD=", "DATABASE_PASSWORD=",
                    "SERVICE_PASSWORD=", "OSPROFILER_HMAC_KEY="):
        assert missing in done.stderr, done.stderr


def test_the_all_in_one_lab_is_not_a_subnode(tmp_path):
    done = _stackrc(tmp_path, "HOST_IP=192.0.2.5\n", show=SUBNODE)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] == "192.0.2.5"
