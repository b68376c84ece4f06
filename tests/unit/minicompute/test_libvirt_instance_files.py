"""minicompute.virt.libvirt.instance_files: the directory QEMU (running
as another user) must traverse and no one else may list, and the guest's
own boot files in it."""

import os
import stat

from minicompute.virt.libvirt import instance_files as driver
from ministack import executor


def test_takes_the_group_of_instances_path_and_mode_0750(tmp_path):
    instances = tmp_path / "instances"
    instances.mkdir()
    # The gid of instances_path is what counts (a group this user is in).
    gid = os.getgroups()[-1] if os.getgroups() else os.getgid()
    os.chown(instances, -1, gid)
    old = os.umask(0o077)
    try:
        path = str(instances / "uuid-1")
        driver.make_instance_dir(path)
    finally:
        os.umask(old)
    st = os.stat(path)
    assert stat.S_IMODE(st.st_mode) == 0o750
    assert st.st_gid == gid


def test_repairs_an_existing_directory(tmp_path):
    path = tmp_path / "uuid-2"
    path.mkdir(mode=0o777)
    os.chmod(path, 0o777)
    driver.make_instance_dir(str(path))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o750


def test_boot_files_are_private_copies_in_the_instance_dir(tmp_path,
                                                             monkeypatch):
    image_dir = tmp_path / "image"
    image_dir.mkdir()
    for name, data in (("vmlinuz", b"kernel"), ("initrd.img", b"initrd"),
                       ("disk.qcow2", b"disk")):
        (image_dir / name).write_bytes(data)
        os.chmod(image_dir / name, 0o640)
    image = {"kernel": str(image_dir / "vmlinuz"),
             "initrd": str(image_dir / "initrd.img"),
             "disk": str(image_dir / "disk.qcow2"), "disk_format": "qcow2"}
    calls = []

    def fake_execute(*argv, **kwargs):
        calls.append(argv)
        with open(argv[-1], "wb") as handle:
            handle.write(b"overlay")
        return "", ""

    monkeypatch.setattr(executor, "execute", fake_execute)
    inst = tmp_path / "uuid-3"
    inst.mkdir()
    old = os.umask(0o022)
    try:
        files = driver.create_boot_files(image, str(inst))
    finally:
        os.umask(old)
    assert files == {"disk": str(inst / "disk"),
                     "kernel": str(inst / "kernel"),
                     "initrd": str(inst / "ramdisk")}
    assert calls == [("qemu-img", "create", "-q", "-f", "qcow2", "-F",
                      "qcow2", "-b", image["disk"], str(inst / "disk"))]
    assert (inst / "kernel").read_bytes() == b"kernel"
    assert (inst / "ramdisk").read_bytes() == b"initrd"
    for path in files.values():
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    # The image's own files are left as they were.
    assert stat.S_IMODE(os.stat(image["kernel"]).st_mode) == 0o640
