"""The registered guest images (ministack's stand-in for Glance).

devstack (``lib/image``, ``tools/build-guest-image``) builds each image
into ``<root>/<image-id>/`` and registers it with an ``image.json``::

    {"id": "...", "name": "ministack-guest",
     "kernel": ".../vmlinuz", "initrd": ".../initrd.img",
     "disk": ".../disk.qcow2", "disk_format": "qcow2",
     "cmdline": "console=ttyS0 quiet panic=0",
     "min_disk": 1, "min_ram": 128, "virtual_size": 67108864,
     "created_at": "...", ...}

The image is a direct-kernel-boot guest: a compute host boots ``kernel``
+ ``initrd`` with ``cmdline`` and gives it ``disk`` (through a copy-on-write
overlay) as ``vda``. Paths are absolute; relative ones are resolved
against the image's directory.
"""

import json
import logging
import os

from ministack import exception

LOG = logging.getLogger(__name__)

DEFAULT_ROOT = "/var/lib/ministack/images"
_PATH_KEYS = ("kernel", "initrd", "disk")


class ImageNotFound(exception.NotFound):
    msg_fmt = "Image %(image_id)s could not be found."


def _load(image_dir):
    """The record in ``image_dir/image.json``, or None if it is unusable."""
    path = os.path.join(image_dir, "image.json")
    try:
        with open(path) as f:
            record = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        LOG.warning("Ignoring unreadable image record %s: %s", path, exc)
        return None
    for key in _PATH_KEYS:
        if record.get(key):
            record[key] = os.path.join(image_dir, record[key])
    return record


def list_images(root=DEFAULT_ROOT):
    """Every registered image, sorted by name then id.

    Directories without a readable ``image.json`` (e.g. a build in
    progress) are skipped. A missing ``root`` means no images.
    """
    try:
        entries = sorted(os.listdir(root))
    except FileNotFoundError:
        return []
    images = []
    for entry in entries:
        image_dir = os.path.join(root, entry)
        if entry.startswith(".") or not os.path.isdir(image_dir):
            continue
        record = _load(image_dir)
        if record is not None:
            images.append(record)
    return sorted(images, key=lambda r: (r.get("name", ""), r.get("id", "")))


def get_image(ref, root=DEFAULT_ROOT):
    """The image whose id, or else whose name, is ``ref``.

    :raises ImageNotFound: no image has that id or name.
    """
    images = list_images(root)
    for record in images:
        if record.get("id") == ref:
            return record
    for record in images:
        if record.get("name") == ref:
            return record
    raise ImageNotFound(image_id=ref)
