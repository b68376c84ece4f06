"""minicompute refuses to start, in one line, when a dependency is down."""

import subprocess

import pytest

from tests.support import daemons


def _run(tmp_path, sections):
    conf = tmp_path / "minicompute.conf"
    daemons.write_config(str(conf), sections)
    proc = subprocess.run(
        [daemons.binary_path("minicompute"), "--config-file", str(conf)],
        capture_output=True, text=True, timeout=120)
    lines = [line for line in proc.stderr.splitlines()
             if line.startswith("minicompute: ")]
    return proc.returncode, lines, proc.stderr


def _base(tmp_path, **default):
    return {"DEFAULT": dict({"host": "startup-probe",
                             "state_path": str(tmp_path),
                             "transport_url": daemons.RABBIT_URL},
                            **default),
            "database": {"connection": "sqlite:///%s"
                         % (tmp_path / "nova.sqlite")},
            "libvirt": {"virt_type": "qemu"}}


def test_unreachable_broker(tmp_path):
    port = daemons.free_port()
    code, lines, err = _run(tmp_path, _base(
        tmp_path, transport_url="rabbit://u:p@127.0.0.1:%d/x" % port))
    assert code == 1, err
    assert len(lines) == 1 and "message broker" in lines[0], err
    assert "Traceback" not in err


def test_unreachable_database(tmp_path):
    sections = _base(tmp_path)
    sections["database"]["connection"] = \
        "mysql+pymysql://u:p@127.0.0.1:%d/nova" % daemons.free_port()
    code, lines, err = _run(tmp_path, sections)
    assert code == 1, err
    assert len(lines) == 1 and "[database] connection" in lines[0], err


def test_unreachable_libvirt(tmp_path):
    """Needs the broker: the libvirt check runs after it."""
    code, lines, err = _run(tmp_path, dict(_base(tmp_path), libvirt={
        "virt_type": "qemu",
        "connection_uri": "qemu+unix:///system?socket=%s"
                          % (tmp_path / "no-libvirt-sock")}))
    if lines and "message broker" in lines[0]:
        pytest.skip("broker not up: %s" % lines[0])
    assert code == 1, err
    assert len(lines) == 1 and "connection_uri" in lines[0], err
