"""The journey's kernel-path ledgers: iSCSI sessions and the host device.

Where minicompute connects through open-iscsi the journey also prints
``iscsiadm -m session`` and the host block device the BDM's
connection_info names; here both read a real SQLite nova table and a
recorded iscsiadm answer.
"""

import json
import os
import sys

import sqlalchemy as sa

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "tools"))
import journey_lab as lab  # noqa: E402

IQN = "iqn.2010-10.org.openstack:volume-7d4c5a0e"


def _ledgers(tmp_path, device_path):
    url = "sqlite:///%s" % (tmp_path / "nova.sqlite")
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text(
            "CREATE TABLE block_device_mapping (instance_uuid TEXT, "
            "volume_id TEXT, deleted INTEGER, connection_info TEXT)"))
        info = {"data": {"target_iqn": IQN}}
        if device_path:
            info["data"]["device_path"] = device_path
        conn.execute(sa.text(
            "INSERT INTO block_device_mapping VALUES ('srv', 'vol', 0, :c)"),
            {"c": json.dumps(info)})
    return lab.Ledgers(url)


def test_host_device_names_the_link_and_the_disk(tmp_path):
    disk = tmp_path / "sdb"
    disk.write_text("")
    link = tmp_path / ("ip-192.0.2.10:3260-iscsi-%s-lun-1" % IQN)
    link.symlink_to(disk)
    ledgers = _ledgers(tmp_path, str(link))
    assert ledgers.host_device("srv", "vol") == "%s -> %s" % (link, disk)
    disk.unlink()
    assert ledgers.host_device("srv", "vol") == "%s (gone)" % link


def test_host_device_without_one(tmp_path):
    ledgers = _ledgers(tmp_path, None)
    assert ledgers.host_device("srv", "vol") is None
    assert ledgers.host_device("srv", "other") is None


def test_iscsi_sessions_of_one_target(tmp_path, monkeypatch):
    answer = ("tcp: [1] 192.0.2.10:3260,1 %s (non-flash)\n"
              "tcp: [2] 192.0.2.10:3260,1 %s-other (non-flash)\n"
              % (IQN, IQN))
    calls = []

    def execute(*cmd, **kwargs):
        calls.append((cmd, kwargs))
        return answer, ""

    monkeypatch.setattr(lab.executor, "execute", execute)
    ledgers = _ledgers(tmp_path, None)
    assert ledgers.iscsi_sessions(IQN) == [answer.splitlines()[0]]
    assert len(ledgers.iscsi_sessions()) == 2
    # exit 21 is iscsiadm's "no active sessions", not a failure
    assert calls[0] == (("iscsiadm", "-m", "session"),
                        {"check_exit_code": [0, 21]})
