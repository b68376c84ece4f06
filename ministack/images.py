"""The registered guest images (ministack's stand-in for Glance).

devstack (``lib/image``, ``tools/build-guest-image``) builds each image
into ``<root>/<image-id>/`` and registers it with an ``image.json``::

    {"id": "...", "name": "ministack-guest",
     "kernel": ".../vmlinuz", "initrd": ".../initrd.img",
     "disk": ".../disk.qcow2", "disk_format": "qcow2",
     "cmdline": "console=ttyS0 quiet panic=0",
     "min_disk": 1, "min_ram": 128, "virtual_size": 67108864,
     "created_at": "...", ...}

A shelve makes a *snapshot* of a server here (``image_type``
``snapshot``, with ``instance_uuid`` and ``owner``), as nova creates one
in Glance, through :mod:`ministack.image_store` (created ``queued``,
uploaded ``active``), as the image API's clients make theirs;
:func:`register_snapshot` registers one whole (tests),
:func:`find_snapshot` finds a server's, :func:`delete_snapshot` removes
it (never an image devstack built).

The image is a direct-kernel-boot guest: a compute host boots ``kernel``
+ ``initrd`` with ``cmdline`` and gives it ``disk`` (through a copy-on-write
overlay) as ``vda``. Paths are absolute; relative ones are resolved
against the image's directory.
"""

import json
import logging
import os
import shutil
import uuid

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
    return sorted(images, key=lambda r: (r.get("name") or "",
                                         r.get("id") or ""))


def visible_to(record, project_id, is_admin=False):
    """Whether a caller of ``project_id`` may see and use ``record``, as
    Glance decides: a public image, or a private one (a server's shelve
    snapshot) of the caller's own project; an admin sees every image."""
    return (is_admin or record.get("visibility", "public") == "public" or
            (project_id is not None and record.get("owner") == project_id))


def get_image(ref, root=DEFAULT_ROOT, context=None):
    """The image whose id, or else whose name, is ``ref``.

    :param context: the caller's request context; an image it may not
        see (:func:`visible_to`) is not found. None: the service itself
        (a compute host booting a server it was given).
    :raises ImageNotFound: no image it may see has that id or name.
    """
    images = [r for r in list_images(root) if context is None or
              visible_to(r, context.project_id, context.is_admin)]
    for record in images:
        if record.get("id") == ref:
            return record
    for record in images:
        if record.get("name") == ref:
            return record
    raise ImageNotFound(image_id=ref)


#: ``image_type`` of an image made from a server (upstream's property).
SNAPSHOT = "snapshot"


def register_snapshot(record, files, root=DEFAULT_ROOT):
    """Register ``record`` (with ``id``) as a new snapshot image whose
    ``kernel``, ``initrd`` and ``disk`` are copies of ``files`` (absolute
    paths). The files are copied into a hidden directory that is renamed
    into place last, so a half-written snapshot is never listed.

    :returns: the record as :func:`get_image` reads it back.
    """
    final = os.path.join(root, record["id"])
    work = os.path.join(root, ".%s.%s" % (record["id"], uuid.uuid4().hex))
    os.makedirs(work, mode=0o755)
    try:
        record = dict(record, image_type=SNAPSHOT)
        for key, path in files.items():
            name = os.path.basename(path)
            shutil.copyfile(path, os.path.join(work, name))
            record[key] = name
        record["size"] = os.path.getsize(os.path.join(work, record["disk"]))
        with open(os.path.join(work, "image.json"), "w") as f:
            json.dump(record, f, indent=1, sort_keys=True)
        os.rename(work, final)
    except Exception:
        shutil.rmtree(work, ignore_errors=True)
        raise
    LOG.info("Registered snapshot image %s (%s) of instance %s",
             record["id"], record.get("name"), record.get("instance_uuid"))
    return _load(final)


def find_snapshot(image_id, root=DEFAULT_ROOT):
    """The snapshot image ``image_id``, or None (gone, or not a
    snapshot)."""
    if not image_id or os.sep in image_id or image_id.startswith("."):
        return None
    record = _load(os.path.join(root, image_id))
    if record is None or record.get("image_type") != SNAPSHOT:
        return None
    return record


def snapshots_of(instance_uuid, root=DEFAULT_ROOT):
    """The snapshot images made from server ``instance_uuid``."""
    return [r for r in list_images(root)
            if r.get("image_type") == SNAPSHOT and
            r.get("instance_uuid") == instance_uuid]


def delete_snapshot(image_id, root=DEFAULT_ROOT):
    """Remove snapshot image ``image_id``; True if it was there. An image
    that is not a snapshot is left alone (False)."""
    if find_snapshot(image_id, root) is None:
        return False
    shutil.rmtree(os.path.join(root, image_id))
    LOG.info("Deleted snapshot image %s", image_id)
    return True
