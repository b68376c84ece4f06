"""The iSCSI initiator of this compute host: its name, which one, os-brick.

Cinder's target ACL admits exactly the ``initiator`` of the connector
compute sends, so the name in the connector and the name the host really
logs in with must be the same. With open-iscsi that is the name in
/etc/iscsi/initiatorname.iscsi; without it (QEMU's own initiator) we make
one up once and keep it under ``state_path``, so it survives restarts and
an ACL granted before a restart still matches.

os-brick runs its privileged commands (iscsiadm, the SCSI device scans)
through oslo.privsep and serialises logins with file locks:
:func:`setup_os_brick` makes both work in a root daemon without sudo.
"""

import os
import shutil
import uuid

from ministack import exception
from ministack import executor

OPEN_ISCSI_FILE = "/etc/iscsi/initiatorname.iscsi"


def _read(path):
    try:
        with open(path) as handle:
            for line in handle:
                line = line.strip()
                if line.startswith("InitiatorName="):
                    return line.split("=", 1)[1].strip() or None
    except OSError:
        return None
    return None


def get_initiator_iqn(state_path, open_iscsi_file=OPEN_ISCSI_FILE):
    """open-iscsi's name if configured, else ours (created on first use)."""
    iqn = _read(open_iscsi_file)
    if iqn:
        return iqn
    path = os.path.join(state_path, "initiatorname.iscsi")
    iqn = _read(path)
    if iqn:
        return iqn
    iqn = "iqn.2004-10.org.ministack:%s" % uuid.uuid4().hex[:12]
    os.makedirs(state_path, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as handle:
        handle.write("InitiatorName=%s\n" % iqn)
    os.replace(tmp, path)  # atomic: two daemons never see half a file
    return _read(path)


def kernel_available():
    """open-iscsi usable: iscsiadm installed and iscsi_tcp loadable."""
    if shutil.which("iscsiadm") is None:
        return False
    if os.path.isdir("/sys/module/iscsi_tcp"):
        return True
    try:
        executor.execute("modprobe", "iscsi_tcp", timeout=20)
    except exception.ProcessExecutionError:   # logged by the executor
        return False
    return os.path.isdir("/sys/module/iscsi_tcp")


def setup_os_brick(state_path):
    """Ready os-brick for the kernel path in this root daemon.

    Its privileged calls run in this process (privsep's client mode off)
    instead of through a sudo'ed privsep-helper, and its external locks
    (one iSCSI login at a time per portal, one connect_volume at a time)
    live under ``state_path``: os-brick refuses to connect without a
    lock_path (``[os_brick] lock_path`` of the global config, which
    ``os_brick.setup`` would take from oslo.concurrency's).
    """
    import os_brick.privileged
    from oslo_config import cfg

    os_brick.privileged.default.set_client_mode(False)
    lock_path = os.path.join(state_path, "lock", "os-brick")
    os.makedirs(lock_path, exist_ok=True)
    cfg.CONF.set_default("lock_path", lock_path, group="os_brick")
    return lock_path
