"""The locks that serialise changes to one volume's export, and to tgtd's
target ids.

In one process they are in-process locks (oslo.concurrency's named
semaphores). When several processes serve (minicinder's API workers and
their parent, ``osapi_volume_workers`` > 1) :func:`use_lock_files` makes
each one a file lock as well, in ``[oslo_concurrency] lock_path``, as
upstream's coordination file locks serialise cinder services. The file
lock blocks in ``flock`` (no polling), taken once per process: the
in-process lock goes first, so only one thread of a process waits on it.
"""

import contextlib
import fcntl
import os

from oslo_concurrency import lockutils

# Set by use_lock_files(); None: in-process locks only.
_lock_path = None


def use_lock_files(path):
    """Make every :func:`lock` a file lock in ``path`` too (created
    root-only when missing)."""
    global _lock_path
    os.makedirs(path, mode=0o700, exist_ok=True)
    _lock_path = path


def lock_files():
    """The directory of the lock files, or None (in-process only)."""
    return _lock_path


@contextlib.contextmanager
def lock(name):
    """Hold lock ``name`` (in this process, and across processes once
    :func:`use_lock_files` was called)."""
    with lockutils.lock(name, do_log=False):
        if _lock_path is None:
            yield
            return
        fd = os.open(_file(name), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC,
                     0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)   # releases the flock


def remove(name):
    """Remove lock ``name``'s file (a deleted volume's); no-op without
    lock files."""
    if _lock_path is None:
        return
    try:
        os.unlink(_file(name))
    except FileNotFoundError:
        pass


def _file(name):
    return os.path.join(_lock_path, name.replace(os.sep, "_"))
