"""Growing a bound loop device in place: ``LOOP_SET_STATUS64``.

Without device-mapper a volume is a loop device over its LV's extent
range (``losetup -o OFFSET --sizelimit SIZE PV``, see
:mod:`minicinder.volume.drivers.lvm`). When the LV grows in place its range
only gets longer, and the loop device over it must follow while tgtd
holds it open and a guest writes through it. ``losetup`` cannot do that
(``--sizelimit`` is for a new device; ``-c`` only re-reads the backing
file's size, which the limit caps), but the kernel can: the same
``LOOP_SET_STATUS64`` ioctl ``losetup`` uses at set-up, with a larger
``lo_sizelimit``, changes the device's capacity live (Linux re-sizes it
in ``loop_set_status``; tried here on 6.18 under a running write).
It answers EAGAIN when pages were dirtied meanwhile; that is
retried.

This is the one ioctl minicinder makes itself; every other change goes
through :mod:`ministack.executor` as a command.
"""

import errno
import fcntl
import logging
import os
import struct
import time

from ministack.trace.profiler import span

LOG = logging.getLogger(__name__)

LOOP_SET_STATUS64 = 0x4C04
LOOP_GET_STATUS64 = 0x4C05
# struct loop_info64 (linux/loop.h): device, inode, rdevice, offset,
# sizelimit, number, encrypt_type, encrypt_key_size, flags,
# file_name[64], crypt_name[64], encrypt_key[32], init[2].
_LOOP_INFO64 = struct.Struct("=QQQQQIIII64s64s32sQQ")
_OFFSET, _SIZELIMIT = 3, 4
_RETRIES = 5


def set_sizelimit(path, size):
    """Make loop device ``path`` ``size`` bytes long (same offset).

    :returns: the previous size limit.
    :raises OSError: the ioctl failed (not a loop device, no permission,
        EAGAIN five times).
    """
    # A cinder-volume hop of a traced extend, as its commands are.
    with span("loop", "LIBRARY", "ioctl LOOP_SET_STATUS64", actor="cinder",
              details=lambda: {"device": path, "sizelimit": int(size)}):
        return _set_sizelimit(path, size)


def _set_sizelimit(path, size):
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        for attempt in range(1, _RETRIES + 1):
            buf = bytearray(_LOOP_INFO64.size)
            fcntl.ioctl(fd, LOOP_GET_STATUS64, buf)
            fields = list(_LOOP_INFO64.unpack(buf))
            previous = fields[_SIZELIMIT]
            fields[_SIZELIMIT] = int(size)
            try:
                fcntl.ioctl(fd, LOOP_SET_STATUS64,
                            _LOOP_INFO64.pack(*fields))
            except OSError as exc:
                if exc.errno != errno.EAGAIN or attempt == _RETRIES:
                    raise
                time.sleep(0.05 * attempt)
                continue
            LOG.info("Loop device %s: size limit %s -> %s bytes (offset "
                     "%s)", path, previous, size, fields[_OFFSET])
            return previous
    finally:
        os.close(fd)
