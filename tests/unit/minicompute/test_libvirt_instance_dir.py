"""minicompute.virt.libvirt.driver.make_instance_dir: the directory QEMU
(running as another user) must traverse and no one else may list."""

import os
import stat

from minicompute.virt.libvirt import driver


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
