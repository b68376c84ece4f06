"""Where each volume's block device is, remembered between requests.

Finding a volume's device through LVM means ``lvs`` (and ``pvs`` without
device-mapper), far too slow for the attachment handshake; so the device
is found once, when the volume is created, and remembered. An entry is
checked against sysfs (cheap file reads) before every use and looked up
through LVM again only when stale. API worker processes share their
entries as files in one directory: a volume created by one worker is
connected by any without a look-up.
"""

import json
import logging
import os
import threading

LOG = logging.getLogger(__name__)


class DeviceCache:
    """LV name -> block device path, checked against sysfs before use."""

    def __init__(self, lookup):
        """:param lookup: ``lookup(lv_name) -> path``, the slow way
            (:meth:`minicinder.volume.drivers.lvm.LVM.get_device_path`).
        """
        self._lookup = lookup
        self._entries = {}   # lv name -> (path, identity read from sysfs)
        self._shared = None  # share(): a directory

    def share(self, path):
        """Share entries with the other processes using directory
        ``path`` (created, owner only). Each shared entry is still
        checked against sysfs before use, as this process's own are."""
        os.makedirs(path, mode=0o700, exist_ok=True)
        self._shared = path

    def path(self, name):
        """The block device of LV ``name``: this process's entry when
        still valid, else the shared one, else looked up and recorded."""
        for cached in (self._entries.get(name), self._read_shared(name)):
            if cached and identity(cached[0]) == cached[1]:
                self._entries[name] = cached
                return cached[0]
        path = self._lookup(name)
        found = identity(path)
        if found:
            self._entries[name] = (path, found)
            self._write_shared(name, path, found)
        return path

    def forget(self, name):
        """Drop LV ``name``'s entry here and in the shared directory (its
        device is gone or about to change)."""
        self._entries.pop(name, None)
        if self._shared is not None:
            try:
                os.unlink(os.path.join(self._shared, name))
            except FileNotFoundError:
                pass

    def _read_shared(self, name):
        """``(path, identity)`` another process recorded for ``name``."""
        if self._shared is None:
            return None
        try:
            with open(os.path.join(self._shared, name)) as f:
                entry = json.load(f)
            found = entry["identity"]
            return (entry["path"], tuple(found)
                    if isinstance(found, list) else found)
        except (OSError, ValueError, KeyError, TypeError):
            # No entry (the usual case) or a damaged one: only a cache
            # miss, the device is looked up through LVM.
            return None

    def _write_shared(self, name, path, found):
        if self._shared is None:
            return
        target = os.path.join(self._shared, name)
        tmp = "%s.%d.%d.tmp" % (target, os.getpid(), threading.get_ident())
        try:
            with open(tmp, "w") as f:
                json.dump({"path": path, "identity": found}, f)
            os.replace(tmp, target)   # readers see all of it or none
        except OSError:
            LOG.warning("Could not share the device of %s", name,
                        exc_info=True)


def identity(path):
    """What a block device is, from sysfs: a loop's backing file, offset
    and size; for other devices just that the path exists (None when it
    does not)."""
    base = os.path.basename(path)
    loop_dir = "/sys/block/%s/loop" % base
    if base.startswith("loop") and os.path.isdir("/sys/block/%s" % base):
        try:
            return tuple(_read("%s/%s" % (loop_dir, field))
                         for field in ("backing_file", "offset",
                                       "sizelimit"))
        except OSError:
            return None
    return os.path.exists(path) or None


def _read(path):
    with open(path) as f:
        return f.read().strip()
