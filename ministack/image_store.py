"""Writing the image registry as Glance v2 writes its images.

An image is first a record with no data (``queued``), then its data is
uploaded into it (``saving``, then ``active`` with ``size``, ``checksum``
(MD5) and ``os_hash_value`` (SHA-512) set), and it is deleted as a
whole. The image API's ``POST /v2/images``, ``PUT .../file`` and
``DELETE`` do this for a client; a shelve does the same for a server's
snapshot: the compute API creates the ``<name>-shelved`` record, the
compute host uploads the guest's disk, kernel and ramdisk into it, and an
unshelve or the server's delete deletes it.

The records are read back by :mod:`ministack.images`. Every change of an
image is made under a lock on its directory, and ``image.json`` is
replaced whole, so a reader never sees half a record; an image's
directory is renamed away before it is removed, so a deleted image is
never listed half-gone.
"""

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import shutil
import uuid

from ministack import exception
from ministack import images

LOG = logging.getLogger(__name__)

QUEUED = "queued"
SAVING = "saving"
ACTIVE = "active"

#: The name of an uploaded image's data in its directory.
DATA_FILE = "disk"
_CHUNK = 1024 * 1024


class ImageExists(exception.Conflict):
    msg_fmt = "Image with identifier %(image_id)s already exists!"


class InvalidImageStatusTransition(exception.Conflict):
    msg_fmt = ("Image status transition from %(cur_status)s to "
               "%(new_status)s is not allowed")


def _dir(image_id, root):
    if not image_id or os.sep in image_id or image_id.startswith("."):
        raise images.ImageNotFound(image_id=image_id)
    return os.path.join(root, image_id)


def _write_record(image_dir, record):
    """Replace ``image_dir/image.json`` with ``record`` in one rename."""
    tmp = os.path.join(image_dir, ".image.json.%s" % uuid.uuid4().hex)
    with open(tmp, "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
    os.replace(tmp, os.path.join(image_dir, "image.json"))


def _read_record(image_dir, image_id):
    try:
        with open(os.path.join(image_dir, "image.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        raise images.ImageNotFound(image_id=image_id) from None


@contextlib.contextmanager
def _locked(image_dir, image_id):
    try:
        fd = os.open(os.path.join(image_dir, ".lock"),
                     os.O_CREAT | os.O_RDWR, 0o600)
    except FileNotFoundError:
        raise images.ImageNotFound(image_id=image_id) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def now():
    import datetime
    return datetime.datetime.now(datetime.UTC).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def create(record, root=images.DEFAULT_ROOT):
    """Register ``record`` (with ``id``) as a new ``queued`` image with no
    data; its directory appears whole (built hidden, renamed last).

    :raises ImageExists: an image with that id is registered (409).
    :returns: the record as stored.
    """
    final = _dir(record["id"], root)
    if os.path.exists(final):
        raise ImageExists(image_id=record["id"])
    stamp = now()
    record = dict(record, status=QUEUED, size=None, checksum=None,
                  os_hash_algo=None, os_hash_value=None,
                  created_at=record.get("created_at") or stamp,
                  updated_at=stamp)
    os.makedirs(root, mode=0o755, exist_ok=True)
    work = os.path.join(root, ".%s.%s" % (record["id"], uuid.uuid4().hex))
    os.makedirs(work, mode=0o755)
    try:
        _write_record(work, record)
        try:
            os.rename(work, final)
        except OSError:   # another create of the same id won the race
            raise ImageExists(image_id=record["id"]) from None
    except Exception:
        shutil.rmtree(work, ignore_errors=True)
        raise
    LOG.info("Created image %s (%s), queued", record["id"],
             record.get("name"))
    return record


def _copy_hashed(source, target):
    """Copy the file object ``source`` into path ``target``: (size, md5,
    sha512) of what was written."""
    md5 = hashlib.md5(usedforsecurity=False)
    sha512 = hashlib.sha512()
    size = 0
    with open(target, "wb") as out:
        while True:
            chunk = source.read(_CHUNK)
            if not chunk:
                break
            out.write(chunk)
            md5.update(chunk)
            sha512.update(chunk)
            size += len(chunk)
    return size, md5.hexdigest(), sha512.hexdigest()


def upload(image_id, data, root=images.DEFAULT_ROOT, extra_files=None):
    """Upload ``data`` (a file object) as image ``image_id``'s data and
    make it ``active``, as Glance's ``PUT /v2/images/{id}/file``.

    :param extra_files: ``{key: path}`` of further files copied in with
        it (a snapshot's ``kernel`` and ``initrd``, which a guest of this
        registry boots with).
    :raises ImageNotFound: no such image.
    :raises InvalidImageStatusTransition: it is not ``queued`` (409).
    :returns: the active record. On any failure the image is ``queued``
        again with no data.
    """
    image_dir = _dir(image_id, root)
    with _locked(image_dir, image_id):
        record = _read_record(image_dir, image_id)
        if record.get("status", ACTIVE) != QUEUED:
            raise InvalidImageStatusTransition(
                cur_status=record.get("status", ACTIVE), new_status=SAVING)
        _write_record(image_dir, dict(record, status=SAVING))
        written = []
        active = dict(record)
        try:
            for key, path in sorted((extra_files or {}).items()):
                name = os.path.basename(path)
                shutil.copyfile(path, os.path.join(image_dir, name))
                written.append(name)
                active[key] = name
            written.append(DATA_FILE)
            size, md5, sha512 = _copy_hashed(
                data, os.path.join(image_dir, DATA_FILE))
        except BaseException:
            for name in written:
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(image_dir, name))
            _write_record(image_dir, dict(record, status=QUEUED))
            raise
        active.update(disk=DATA_FILE, status=ACTIVE, size=size,
                      checksum=md5, os_hash_algo="sha512",
                      os_hash_value=sha512, updated_at=now())
        _write_record(image_dir, active)
    LOG.info("Uploaded %d bytes into image %s, active", size, image_id)
    return active


def upload_files(image_id, files, root=images.DEFAULT_ROOT):
    """Upload the file ``files['disk']`` (with the other ``files`` beside
    it) into image ``image_id`` (:func:`upload`)."""
    files = dict(files)
    with open(files.pop("disk"), "rb") as data:
        return upload(image_id, data, root, extra_files=files)


def delete(image_id, root=images.DEFAULT_ROOT):
    """Remove image ``image_id`` and its data.

    :raises ImageNotFound: no such image.
    """
    image_dir = _dir(image_id, root)
    if not os.path.isfile(os.path.join(image_dir, "image.json")):
        raise images.ImageNotFound(image_id=image_id)
    gone = os.path.join(root, ".deleted.%s.%s" % (image_id,
                                                 uuid.uuid4().hex))
    try:
        os.rename(image_dir, gone)
    except FileNotFoundError:
        raise images.ImageNotFound(image_id=image_id) from None
    shutil.rmtree(gone, ignore_errors=True)
    LOG.info("Deleted image %s", image_id)
