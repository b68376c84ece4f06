"""The lab's state, configs, secrets and logs are closed to local users.

The attack: any local account (here ``nobody``) reads what the lab keeps
on disk. The SQLite databases hold CHAP secrets, password hashes and
connection_info; the LVM backing file holds every volume's data; the
instance overlays hold the guests' disks; the configs, the Fernet key,
the passwords file and the client files hold credentials. Every one of
them must refuse that user, and their modes must say so, so that a file
created later (a new overlay, a new database) cannot silently reopen the
hole: the daemons also run with umask 077.
"""

import glob
import os
import stat

import pytest

from tests.security import local_users as lu


def _files():
    """``{path: most permissive mode allowed}`` for every sensitive file
    the deployed lab has, found on disk rather than listed from memory."""
    found = {}

    def add(pattern, allowed):
        for path in glob.glob(pattern):
            if os.path.isfile(path):
                found[path] = allowed

    add(os.path.join(lu.DATA_DIR, "*.sqlite*"), 0o600)
    add(os.path.join(lu.DATA_DIR, "*-backing-file"), 0o600)
    add(os.path.join(lu.DATA_DIR, "initiatorname.iscsi"), 0o600)
    # Owned by libvirt-qemu while the guest runs (dynamic ownership).
    add(os.path.join(lu.DATA_DIR, "instances", "*", "disk"), 0o600)
    add(os.path.join(lu.DATA_DIR, "instances", "*", "console.log"), 0o600)
    # QEMU reads the image through its group.
    add(os.path.join(lu.DATA_DIR, "images", "*", "*"), 0o640)
    add(os.path.join(lu.CONF_DIR, "*"), 0o600)
    # Keystone's config and key repositories (lib/keystone).
    add(os.path.join(lu.CONF_DIR, "keystone", "*"), 0o600)
    add(os.path.join(lu.CONF_DIR, "keystone", "fernet-keys", "*"), 0o600)
    add(os.path.join(lu.CONF_DIR, "keystone", "credential-keys", "*"),
        0o600)
    add(lu.CLOUDS_YAML, 0o600)
    add(os.path.join(lu.DEST, "openrc*"), 0o600)
    add(os.path.join(lu.LOG_DIR, "*.log"), 0o600)
    return found


def _dirs():
    """``{directory: most permissive mode allowed}``."""
    dirs = {lu.DATA_DIR: 0o750, lu.CONF_DIR: 0o700, lu.LOG_DIR: 0o700}
    for name in ("", "fernet-keys", "credential-keys"):
        dirs[os.path.join(lu.CONF_DIR, "keystone", name).rstrip("/")] = \
            0o700
    for path in [os.path.join(lu.DATA_DIR, "instances"),
                 os.path.join(lu.DATA_DIR, "images"),
                 os.path.join(lu.DATA_DIR, "tmp")]:
        dirs[path] = 0o2750
    for path in glob.glob(os.path.join(lu.DATA_DIR, "instances", "*/")) + \
            glob.glob(os.path.join(lu.DATA_DIR, "images", "*/")):
        dirs[path.rstrip("/")] = 0o2750
    cache = os.path.join(lu.DATA_DIR, "cache")
    dirs[cache] = 0o700
    # The SQL server's data, when the lab runs one.
    dirs.update({path: 0o700 for path in _database_dirs()})
    return {path: allowed for path, allowed in dirs.items()
            if os.path.isdir(path)}


def _database_dirs():
    try:
        with open(os.path.join(lu.DATA_DIR, "database_type")) as handle:
            kind = handle.read().strip()
    except OSError:
        return []
    if kind in ("mysql", "mariadb"):
        return ["/var/lib/mysql"]
    if kind == "postgresql":
        return glob.glob("/var/lib/postgresql/*/*/")
    return []


@pytest.fixture(scope="module")
def files():
    found = _files()
    names = {os.path.basename(p) for p in found}
    # The lab must actually have what this test protects; an empty or
    # half-deployed lab proves nothing.
    expected = {"miniapi.conf", "minicinder.conf", "minicompute.conf",
                "tempest.conf", "passwords", "clouds.yaml", "openrc.admin",
                "openrc.demo", "0", "disk", "vmlinuz", "miniapi.log",
                "keystone.conf", "keystone.log", "accounts.yaml"}
    if os.path.exists(os.path.join(lu.DATA_DIR, "nova.sqlite")):
        expected |= {"nova.sqlite", "cinder.sqlite", "keystone.sqlite"}
    missing = expected - names
    assert not missing, "lab files not found: %s" % sorted(missing)
    assert any(p.endswith("-backing-file") for p in found)
    return found


def test_no_local_user_reads_the_lab_state(files):
    """nobody cannot open any of them, nor list the lab's directories."""
    paths = sorted(files) + sorted(_dirs())
    outcomes = lu.try_read(paths)
    assert lu.not_denied(outcomes) == {}


def test_file_modes_and_owners(files):
    wrong = {}
    for path, allowed in files.items():
        st = os.stat(path)
        extra = stat.S_IMODE(st.st_mode) & ~allowed
        user, group = lu.owner(path)
        owners = {"root", lu.QEMU_USER}
        if extra or user not in owners or (stat.S_IMODE(st.st_mode) & 0o070
                                           and group not in owners):
            wrong[path] = "%o %s:%s" % (stat.S_IMODE(st.st_mode), user,
                                        group)
    assert wrong == {}


def test_directory_modes(files):
    wrong = {}
    for path, allowed in _dirs().items():
        st = os.stat(path)
        user, group = lu.owner(path)
        if stat.S_IMODE(st.st_mode) & ~allowed or (
                stat.S_IMODE(st.st_mode) & 0o070 and group not in (
                    "root", lu.QEMU_USER, "mysql", "postgres")):
            wrong[path] = "%o %s:%s" % (stat.S_IMODE(st.st_mode), user,
                                        group)
    assert wrong == {}


def test_state_dir_lets_only_qemu_through():
    """QEMU (group libvirt-qemu) must reach the image and the overlays
    under the state directory; no one else may even list it."""
    user, group = lu.owner(lu.DATA_DIR)
    assert (user, group) == ("root", lu.QEMU_USER)
    assert lu.mode(lu.DATA_DIR) == 0o750


@pytest.mark.parametrize("daemon", ["miniapi", "minicinder", "minicompute"])
def test_daemons_create_private_files(daemon):
    """A database, overlay or log a daemon creates later comes out
    owner-only: the supervised daemon runs with umask 077."""
    pid_file = os.path.join(lu.STATUS_DIR, "%s.child.pid" % daemon)
    with open(pid_file) as handle:
        pid = int(handle.read().split()[0])
    with open("/proc/%d/status" % pid) as handle:
        fields = dict(line.split(":", 1) for line in handle)
    assert fields["Umask"].strip() == "0077"
