"""Volumes made from images: which image, whether it fits, what the
volume records of it.

The images are the lab's registered guest images (``ministack.images``,
the stand-in for Glance that miniapi's image API lists and the compute
hosts boot from), read from ``<state_path>/images`` on this host. The
checks and messages are upstream's (``_check_image_metadata``): the
image must be active, and its size, ``min_disk`` and virtual size must
fit the volume.
"""

import os

from minicinder import exception
from ministack import images

GIB = 1024 ** 3


def root(conf):
    return os.path.join(conf.state_path, "images")


def get(conf, ctx, ref):
    """The image record for ``imageRef`` (id or name), among the images
    the caller ``ctx`` may see (another project's private snapshot is
    not found, as Glance answers Cinder for it).

    :raises ImageNotFound: (404).
    """
    return images.get_image(ref, root=root(conf), context=ctx)


def _gib(size_bytes):
    return -(-int(size_bytes or 0) // GIB)


def check_fits(image, size):
    """:raises InvalidInput: the image cannot become a ``size`` GiB
    volume (400)."""
    image_id = image.get("id")
    if image.get("status", "active") != "active":
        raise exception.InvalidInput(
            reason="Image %s is not active." % image_id)
    disk_size = _disk_size(image)
    if _gib(disk_size) > size:
        raise exception.InvalidInput(
            reason="Size of specified image %sGB is larger than volume "
                   "size %sGB." % (_gib(disk_size), size))
    min_disk = int(image.get("min_disk") or 0)
    if min_disk > size:
        raise exception.InvalidInput(
            reason="Volume size %sGB cannot be smaller than the image "
                   "minDisk size %sGB." % (size, min_disk))
    if _gib(image.get("virtual_size")) > size:
        raise exception.InvalidInput(
            reason="Image virtual size is %dGB and doesn't fit in a volume "
                   "of size %dGB." % (_gib(image.get("virtual_size")),
                                      size))


def _disk_size(image):
    try:
        return os.path.getsize(image["disk"])
    except (KeyError, OSError):
        return int(image.get("size") or 0)


def glance_metadata(image):
    """What the volume records of its image (upstream's keys; values are
    strings, as upstream stores them)."""
    values = {
        "image_id": image.get("id"),
        "image_name": image.get("name"),
        "checksum": image.get("checksum"),
        "container_format": image.get("container_format", "bare"),
        "disk_format": image.get("disk_format", "qcow2"),
        "min_disk": image.get("min_disk", 0),
        "min_ram": image.get("min_ram", 0),
        "size": _disk_size(image),
    }
    return {key: str(value) for key, value in values.items()
            if value is not None}
