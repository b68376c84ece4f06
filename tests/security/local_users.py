"""Act as another local user of the lab machine, and where the lab keeps
its files.

The security tier runs as root; an attack by an unprivileged local user
is a real process started with that user's uid and gids (``setpriv``)
that tries what the attacker would try. The process is the system
``python3`` with an argv list: no shell, no string built from paths.
"""

import grp
import json
import os
import pwd
import stat
import subprocess

DATA_DIR = os.environ.get("MINISTACK_DATA_DIR", "/var/lib/ministack")
CONF_DIR = os.environ.get("MINISTACK_CONF_DIR", "/etc/ministack")
DEST = os.environ.get("MINISTACK_DEST", "/opt/stack")
LOG_DIR = os.path.join(DEST, "logs")
STATUS_DIR = os.path.join(DEST, "status")
CLOUDS_YAML = "/etc/openstack/clouds.yaml"
PASSWORDS_FILE = os.path.join(CONF_DIR, "passwords")
QEMU_USER = "libvirt-qemu"

# Runs as the other user: try each path (read one byte of a file, list a
# directory) and report what happened, one word per path.
_PROBE = r"""
import json, os, sys
out = {}
for path in json.load(sys.stdin):
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            with open(path, "rb") as handle:
                handle.read(1)
        out[path] = "read"
    except PermissionError:
        out[path] = "denied"
    except FileNotFoundError:
        out[path] = "missing"
    except OSError as exc:
        out[path] = "error: %s" % exc
json.dump(out, sys.stdout)
"""


def as_user(argv, user="nobody", group="nogroup", own_groups=False,
            stdin=None):
    """Run ``argv`` as ``user``: as that user's gid and supplementary
    groups (``own_groups``, what a daemon started as that user has) or as
    ``group`` with no supplementary group at all."""
    ids = ["--reuid=%s" % user]
    if own_groups:
        ids += ["--regid=%d" % pwd.getpwnam(user).pw_gid, "--init-groups"]
    else:
        ids += ["--regid=%s" % group, "--clear-groups"]
    return subprocess.run(["setpriv"] + ids + ["--"] + list(argv),
                          input=stdin, capture_output=True, text=True,
                          cwd="/", timeout=120, check=False)


def try_read(paths, user="nobody", group="nogroup", own_groups=False):
    """``{path: "read" | "denied" | "missing" | "error: ..."}`` for each
    path, as ``user`` sees it."""
    proc = as_user(["/usr/bin/python3", "-c", _PROBE], user, group,
                   own_groups, stdin=json.dumps(list(paths)))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def not_denied(outcomes):
    """The paths whose outcome is not a refusal, with what happened."""
    return {path: what for path, what in outcomes.items()
            if what != "denied"}


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def owner(path):
    st = os.stat(path)
    return pwd.getpwuid(st.st_uid).pw_name, grp.getgrgid(st.st_gid).gr_name


def ini(path, section, option, fallback=None):
    """One option of an oslo.config-style INI file (``DEFAULT`` included)."""
    import configparser
    parser = configparser.RawConfigParser()
    parser.read(path)
    return parser.get(section, option, fallback=fallback)
