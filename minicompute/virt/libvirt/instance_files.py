"""The files of one guest: its directory, root disk, kernel and ramdisk.

Like nova's libvirt driver, each guest boots from its own copies in its
own directory (``<instances_path>/<uuid>/``)::

    disk      qcow2 overlay over the image's disk (the image is never written);
              for a snapshot image (a shelved server's), a copy of the
              snapshot, itself an overlay over the server's base image
    kernel    copy of the image's kernel
    ramdisk   copy of the image's initrd

Why copies: libvirt runs QEMU as an unprivileged user and, with
``dynamic_ownership``, gives every file a guest boots from to that user
while it runs and gives it back (to root:root when it has no remembered
owner) when the guest stops. Pointing guests at the image's own kernel
would let one guest's stop take the shared kernel away from QEMU's
group, and the next guest, or a running one rebooting, could no longer
read it. A guest's own files can be relabelled at will.

Permissions: the directory takes the group of its parent (which the
deployment gives to QEMU's group) with mode 0750; the files are 0600
(libvirt hands them to QEMU's user at start), whatever the umask.
"""

import os
import shutil

from ministack import executor

#: The names of a guest's files in its directory (nova's names).
DISK = "disk"
KERNEL = "kernel"
RAMDISK = "ramdisk"

#: ``image_type`` of a snapshot image (``ministack.images.SNAPSHOT``).
SNAPSHOT = "snapshot"


def make_instance_dir(path):
    """Create (or fix) an instance directory: owner root, group that of
    its parent (``instances_path``), mode 0750.

    QEMU, running as a user in that group, reaches the files inside;
    other local users cannot even list the directory.
    """
    os.makedirs(path, exist_ok=True)
    os.chown(path, -1, os.stat(os.path.dirname(path)).st_gid)
    os.chmod(path, 0o750)


def _private_copy(source, target):
    shutil.copyfile(source, target)
    os.chmod(target, 0o600)
    return target


def create_boot_files(image, directory, root_disk=True):
    """The overlay, kernel and ramdisk of a guest of ``image`` in
    ``directory`` (which exists); returns ``{"disk", "kernel", "initrd"}``
    paths for ``config.domain``. ``root_disk=False`` (a volume-backed
    guest, whose root is its boot volume): no overlay, ``disk`` None."""
    disk = None
    if root_disk and image.get("image_type") == SNAPSHOT:
        # A shelved server's snapshot is its own overlay (over its base
        # image): the new guest gets a copy of it, so the snapshot can be
        # deleted once the guest runs, as unshelve does.
        disk = _private_copy(image["disk"], os.path.join(directory, DISK))
    elif root_disk:
        disk = os.path.join(directory, DISK)
        executor.execute(
            "qemu-img", "create", "-q", "-f", "qcow2", "-F",
            image.get("disk_format", "qcow2"), "-b", image["disk"], disk)
        os.chmod(disk, 0o600)
    return {
        "disk": disk,
        "kernel": _private_copy(image["kernel"],
                                os.path.join(directory, KERNEL)),
        "initrd": _private_copy(image["initrd"],
                                os.path.join(directory, RAMDISK)),
    }
