"""Resize and cold migration of a libvirt guest, as upstream's libvirt
driver moves one (``migrate_disk_and_power_off``, ``finish_migration``,
``confirm_migration``, ``finish_revert_migration``).

The source powers the guest off and moves its directory aside to
``<instances_path>/<uuid>_resize`` (nova's ``_resize`` leftovers): the
destination copies the root disk from there, and a revert boots from it
again. ministack's compute hosts are namespaces of one machine whose
instance directories are all reachable from each host, so the copy is a
file copy where nova copies over ssh; the images a disk overlays are the
machine's one image registry.

Unlike nova, the source also undefines the domain at once (upstream
keeps it, shut off, until the confirm): each host's libvirt then holds
only the guests of the servers it hosts, which is what
``ministack-audit`` checks. A revert defines it again from the kept disk.

On the destination the copy is grown to the new flavor's ``root_gb``
(``qemu-img resize``; a disk is never shrunk here: the source refuses
that first, as upstream) and the guest is defined with the new flavor's
memory and vCPUs, so the guest sees them. A volume-backed guest has no
local root disk: only its kernel and ramdisk move, as copies of the
image's.
"""

import json
import os
import shutil

from oslo_log import log as logging

from minicompute import exception
from minicompute.virt.libvirt import instance_files
from ministack import executor
from ministack import images

LOG = logging.getLogger(__name__)

#: The suffix of a source's kept directory (nova's).
RESIZE_SUFFIX = "_resize"

#: The staged copy of the moved disk in the destination's directory,
#: from which ``spawn`` takes its private copy (as it takes a snapshot's).
_STAGED = "disk.moved"

GiB = 1024 ** 3


def _virtual_size(path):
    out, _err = executor.execute("qemu-img", "info", "--output=json",
                                 "--force-share", path)
    return int(json.loads(out)["virtual-size"])


def grow_disk(path, root_gb):
    """Grow the qcow2 disk at ``path`` to ``root_gb`` GiB if it is
    smaller (a flavor's 0 means "the image's size": left alone)."""
    if not root_gb:
        return
    wanted = int(root_gb) * GiB
    if _virtual_size(path) < wanted:
        executor.execute("qemu-img", "resize", "-q", path, str(wanted))
        LOG.info("Grew %s to %s GiB", path, root_gb)


class MigrateDiskMixin:
    """The resize steps of :class:`.driver.LibvirtDriver` (``host``,
    ``conf``, ``_instance_dir``, ``spawn``, ``destroy``)."""

    def _resize_dir(self, instance):
        return self._instance_dir(instance) + RESIZE_SUFFIX

    def _image_record(self, image):
        """The registered image (its kernel, ramdisk and command line)."""
        if isinstance(image, dict) and "kernel" in image:
            return dict(image)
        image_id = image.get("id") if isinstance(image, dict) else image
        return images.get_image(
            image_id, root=os.path.join(self.conf.state_path, "images"))

    def migrate_disk_and_power_off(self, ctxt, instance, flavor,
                                   block_device_info=None):
        inst_dir = self._instance_dir(instance)
        kept = self._resize_dir(instance)
        try:
            self.host.get_guest(instance["name"]).poweroff()
        except exception.InstanceNotFound:
            LOG.warning("No domain for %s to power off", instance["name"])
        shutil.rmtree(kept, ignore_errors=True)
        if os.path.isdir(inst_dir):
            os.rename(inst_dir, kept)
        try:
            # The domain goes and the volumes are disconnected here; the
            # directory was moved aside, so destroy removes no file.
            self.destroy(ctxt, instance, block_device_info=block_device_info)
        except Exception:
            if os.path.isdir(kept) and not os.path.exists(inst_dir):
                os.rename(kept, inst_dir)
            raise
        LOG.info("Guest %s powered off and taken away; its files kept "
                 "in %s", instance["name"], kept)
        return {"disk_dir": kept}

    def _boot_moved(self, ctxt, instance, image, flavor, disk,
                    block_device_info, power_on):
        """Spawn with ``disk`` (a kept disk, or None for a volume-backed
        guest) as the root disk's source."""
        record = self._image_record(image)
        if disk is not None:
            record.update(image_type=instance_files.SNAPSHOT, disk=disk)
        self.spawn(ctxt, instance, record, flavor,
                   block_device_info=block_device_info)
        if not power_on:
            self.host.get_guest(instance["name"]).poweroff()

    def finish_migration(self, ctxt, instance, disk_info, image, flavor,
                         block_device_info=None, power_on=True):
        source = os.path.join((disk_info or {}).get("disk_dir") or "",
                              instance_files.DISK)
        staged = None
        if os.path.isfile(source):
            inst_dir = self._instance_dir(instance)
            instance_files.make_instance_dir(inst_dir)
            staged = os.path.join(inst_dir, _STAGED)
            shutil.copyfile(source, staged)
            os.chmod(staged, 0o600)
            try:
                grow_disk(staged, flavor.get("root_gb"))
            except Exception as exc:
                raise exception.ResizeError(reason=str(exc)) from exc
        try:
            self._boot_moved(ctxt, instance, image, flavor, staged,
                             block_device_info, power_on)
        finally:
            if staged is not None and os.path.exists(staged):
                os.unlink(staged)
        LOG.info("Guest %s defined and started here with %s MiB and %s "
                 "vCPU(s)", instance["name"], flavor.get("memory_mb"),
                 flavor.get("vcpus"))

    def confirm_migration(self, ctxt, instance):
        shutil.rmtree(self._resize_dir(instance), ignore_errors=True)

    def finish_revert_migration(self, ctxt, instance, image, flavor,
                                block_device_info=None, power_on=True):
        kept = self._resize_dir(instance)
        disk = os.path.join(kept, instance_files.DISK)
        self._boot_moved(ctxt, instance, image, flavor,
                         disk if os.path.isfile(disk) else None,
                         block_device_info, power_on)
        shutil.rmtree(kept, ignore_errors=True)
        LOG.info("Guest %s defined again from %s", instance["name"], kept)
