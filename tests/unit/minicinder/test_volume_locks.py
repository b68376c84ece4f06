"""minicinder's volume and target locks (minicinder.volume.locks): in one
process by default, across processes with lock files (API workers)."""

import fcntl
import os

import pytest

from minicinder.volume import locks
from minicinder.volume import manager as volume_manager


@pytest.fixture
def lock_files(tmp_path, monkeypatch):
    monkeypatch.setattr(locks, "_lock_path", None)
    path = tmp_path / "lock"
    locks.use_lock_files(str(path))
    return path


def _held_elsewhere(path):
    """Whether another process holds the flock on ``path``."""
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def test_in_process_only_by_default(tmp_path, monkeypatch):
    monkeypatch.setattr(locks, "_lock_path", None)
    with locks.lock("minicinder-volume-v1"):
        assert locks.lock_files() is None
    assert list(tmp_path.iterdir()) == []


def test_lock_directory_is_root_only(lock_files):
    assert oct(os.stat(lock_files).st_mode & 0o777) == "0o700"


def test_a_volume_lock_excludes_another_process(lock_files):
    """A forked process holding the volume's lock holds its file lock;
    once it lets go, this process takes it."""
    held, release = os.pipe(), os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            with volume_manager.volume_lock("v1"):
                os.write(held[1], b"x")
                os.read(release[0], 1)
            code = 0
        finally:
            os._exit(code)
    try:
        assert os.read(held[0], 1) == b"x"
        path = lock_files / "minicinder-volume-v1"
        assert _held_elsewhere(path)
        os.write(release[1], b"x")
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert not _held_elsewhere(path)
        with volume_manager.volume_lock("v1"):
            assert path.exists()
    finally:
        for fd in held + release:
            os.close(fd)


def test_remove_drops_the_file(lock_files):
    with locks.lock("minicinder-volume-v2"):
        pass
    assert (lock_files / "minicinder-volume-v2").exists()
    locks.remove("minicinder-volume-v2")
    locks.remove("minicinder-volume-v2")   # already gone: no error
    assert not (lock_files / "minicinder-volume-v2").exists()


def test_a_name_cannot_leave_the_directory(lock_files):
    with locks.lock("../../escape"):
        pass
    assert sorted(p.name for p in lock_files.iterdir()) == [".._.._escape"]


def test_several_api_workers_need_the_lvm_driver():
    """The fake driver keeps its volumes in one process's memory."""
    from minicinder import service
    from ministack import exception as ms_exception
    from tests.support.minicinder_inprocess import make_conf
    conf = make_conf(osapi_volume_workers=2)
    with pytest.raises(ms_exception.ConfigError) as err:
        service.build(conf)
    assert "volume_driver = lvm" in err.value.format_message()
