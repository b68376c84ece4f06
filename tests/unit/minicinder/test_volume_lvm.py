"""minicinder.volume.drivers.lvm: the commands the LVM adapter runs
(no LVM needed)."""

import pytest

from minicinder.volume.drivers import lvm
from ministack import exception
from tests.support.fake_storage import FakeExecute

VG = "stack-volumes-lvmdriver-1"
MiB = 1024 * 1024
EXTENT = 4 * MiB
PE_START = 1 * MiB


def lvs_answer(*lvs):
    """Answers for `lvs` listing (name, first extent, last extent) LVs."""
    sizes = "\n".join("  %s|%d" % (n, (b - a + 1) * EXTENT) for n, a, b in lvs)
    ranges = "\n".join("  %s|/dev/loop1:%d-%d|%d" % (n, a, b, EXTENT)
                       for n, a, b in lvs)
    return sizes, ranges


def make_lvm(lvs=(), loops="", device_mapper=False, extra=None):
    sizes, ranges = lvs_answer(*lvs)
    answers = {
        ("lvs", "--noheadings", "--units", "b", "--nosuffix", "--separator",
         "|", "-o", "lv_name,lv_size"): sizes,
        ("lvs", "--noheadings", "--units", "b", "--nosuffix", "--separator",
         "|", "-o", "lv_name,seg_pe_ranges,vg_extent_size"): ranges,
        ("pvs",): "  %d\n" % PE_START,
        ("losetup", "--list"): loops,
        ("losetup", "--show"): "/dev/loop7\n",
    }
    answers.update(extra or {})
    fake = FakeExecute(answers)
    return lvm.LVM(VG, execute=fake, device_mapper=device_mapper), fake


def test_device_mapper_is_detected_once():
    """dmsetup runs once; its verdict picks the lvm --config."""
    fake = FakeExecute({("dmsetup", "version"): "Library version: 1.02\n"})
    vg = lvm.LVM(VG, execute=fake)
    assert vg.device_mapper is False
    assert vg.device_mapper is False
    vg.list_volumes()
    assert len(fake.commands("dmsetup")) == 1
    assert fake.commands("lvs")[0][1:3] == ("--config",
                                           "global{activation=0}")


def test_device_mapper_present():
    fake = FakeExecute({("dmsetup", "version"):
                        "Library version: 1\nDriver version: 4.47.0\n"})
    assert lvm.LVM(VG, execute=fake).device_mapper is True


def test_list_volumes_parses_names_and_sizes():
    vg, _ = make_lvm(lvs=[("volume-a", 0, 255), ("volume-b", 256, 511)])
    assert vg.list_volumes() == [{"name": "volume-a", "size": 1024 * MiB},
                                 {"name": "volume-b", "size": 1024 * MiB}]


def test_create_volume_is_contiguous_and_not_activated_without_dm():
    vg, fake = make_lvm()
    vg.create_volume("volume-a", 2)
    (call,) = fake.commands("lvcreate")
    assert call[1:3] == ("--config", "global{activation=0}")
    assert ("--alloc", "contiguous") == call[call.index("--alloc"):][:2]
    assert "-an" in call and "-Zn" in call
    assert call[call.index("-L") + 1] == "2g"
    assert call[-1] == VG


def test_create_volume_with_dm_activates_normally():
    vg, fake = make_lvm(device_mapper=True)
    vg.create_volume("volume-a", 1)
    (call,) = fake.commands("lvcreate")
    assert "--config" not in call and "-an" not in call
    assert "contiguous" in call


def test_create_volume_is_idempotent():
    vg, fake = make_lvm(lvs=[("volume-a", 0, 255)])
    vg.create_volume("volume-a", 1)
    assert fake.commands("lvcreate") == []


def test_device_path_with_dm_is_the_lv_path():
    vg, fake = make_lvm(lvs=[("volume-a", 0, 255)], device_mapper=True)
    assert vg.get_device_path("volume-a") == "/dev/%s/volume-a" % VG
    assert fake.commands("lvchange") == [("lvchange", "-ay",
                                          VG + "/volume-a")]
    assert fake.commands("losetup") == []


def test_device_path_without_dm_maps_the_extents():
    """Offset = pe_start + first extent * extent size; size = extents."""
    vg, fake = make_lvm(lvs=[("volume-a", 0, 24), ("volume-b", 25, 49)])
    assert vg.get_device_path("volume-b") == "/dev/loop7"
    (create,) = [c for c in fake.commands("losetup") if "--show" in c]
    assert create == ("losetup", "--show", "-f",
                      "-o", str(PE_START + 25 * EXTENT),
                      "--sizelimit", str(25 * EXTENT), "/dev/loop1")


def test_device_path_reuses_an_existing_loop():
    loops = ("/dev/loop1 0 0 /var/lib/ministack/backing-file\n"
             "/dev/loop5 %d %d /dev/loop1\n" % (PE_START, 25 * EXTENT))
    vg, fake = make_lvm(lvs=[("volume-a", 0, 24)], loops=loops)
    assert vg.get_device_path("volume-a") == "/dev/loop5"
    assert [c for c in fake.commands("losetup") if "--show" in c] == []


def test_missing_lv_has_no_device():
    vg, _ = make_lvm()
    with pytest.raises(lvm.VolumeNotFound):
        vg.get_device_path("volume-x")


def test_non_contiguous_lv_cannot_be_mapped():
    vg, fake = make_lvm()
    fake.answers[("lvs", "--noheadings", "--units", "b", "--nosuffix",
                  "--separator", "|", "-o",
                  "lv_name,seg_pe_ranges,vg_extent_size")] = (
        "  volume-a|/dev/loop1:0-9|4194304\n"
        "  volume-a|/dev/loop1:20-29|4194304\n")
    with pytest.raises(lvm.NotContiguous):
        vg.get_device_path("volume-a")


def test_release_device_detaches_only_matching_loops():
    loops = ("/dev/loop5 %d %d /dev/loop1\n"
             "/dev/loop6 %d %d /dev/loop1\n"
             % (PE_START, 25 * EXTENT, PE_START + 25 * EXTENT, 25 * EXTENT))
    vg, fake = make_lvm(lvs=[("volume-a", 0, 24), ("volume-b", 25, 49)],
                        loops=loops)
    vg.release_device("volume-a")
    assert [c for c in fake.commands("losetup") if "-d" in c] == [
        ("losetup", "-d", "/dev/loop5")]


def test_delete_volume_releases_then_removes():
    loops = "/dev/loop5 %d %d /dev/loop1\n" % (PE_START, 25 * EXTENT)
    vg, fake = make_lvm(lvs=[("volume-a", 0, 24)], loops=loops)
    vg.delete_volume("volume-a")
    detach = fake.calls.index(("losetup", "-d", "/dev/loop5"))
    remove = [i for i, c in enumerate(fake.calls) if c[0] == "lvremove"]
    assert remove and remove[0] > detach
    assert fake.calls[remove[0]][-2:] == ("-f", VG + "/volume-a")


def test_delete_missing_volume_is_a_no_op():
    vg, fake = make_lvm()
    vg.delete_volume("volume-x")
    assert fake.commands("lvremove") == []


def test_clear_volume_discards_a_loop_device():
    # A loop's discard punches holes: zeroes without allocating the
    # sparse backing file (-z would allocate every block).
    vg, fake = make_lvm(lvs=[("volume-a", 0, 24)])
    vg.clear_volume("volume-a")
    assert fake.commands("blkdiscard") == [("blkdiscard", "/dev/loop7")]
    assert fake.commands("dd") == []


def test_clear_volume_writes_zeroes_on_a_dm_device():
    vg, fake = make_lvm(lvs=[("volume-a", 0, 24)], device_mapper=True)
    vg.clear_volume("volume-a")
    assert fake.commands("blkdiscard") == [
        ("blkdiscard", "-z", "/dev/%s/volume-a" % VG)]


def test_clear_volume_falls_back_to_dd():
    vg, fake = make_lvm(lvs=[("volume-a", 0, 24)], extra={
        ("blkdiscard",): exception.ProcessExecutionError(
            cmd=["blkdiscard"], exit_code=1)})
    vg.clear_volume("volume-a")
    (dd,) = fake.commands("dd")
    assert "of=/dev/loop7" in dd and "if=/dev/zero" in dd
    assert "count=%d" % (25 * EXTENT // MiB) in dd


def test_extend_in_place_stays_contiguous_without_dm():
    vg, fake = make_lvm(lvs=[("volume-a", 0, 255)])
    vg.extend_volume("volume-a", 2)
    (call,) = fake.commands("lvextend")
    assert call[1:3] == ("--config", "global{activation=0}")
    assert call[-5:] == ("-L", "2g", "--alloc", "contiguous",
                         VG + "/volume-a")


def test_extend_without_room_after_the_lv_says_so():
    vg, _ = make_lvm(lvs=[("volume-a", 0, 255)], extra={
        ("lvextend",): exception.ProcessExecutionError(
            cmd=["lvextend"], exit_code=5,
            stderr="Insufficient suitable contiguous allocatable extents "
                   "for logical volume volume-a: 256 more required")})
    with pytest.raises(lvm.NoContiguousSpace):
        vg.extend_volume("volume-a", 2)


def test_copy_volume_skips_zero_blocks():
    vg, fake = make_lvm(lvs=[("volume-a", 0, 24), ("volume-b", 25, 74)])
    vg.copy_volume("volume-a", "volume-b")
    (dd,) = fake.commands("dd")
    assert dd[1:3] == ("if=/dev/loop7", "of=/dev/loop7")
    assert "count=%d" % (25 * EXTENT // MiB) in dd
    assert "conv=sparse,fsync" in dd


class RecordingVG:
    """Stands in for the LVM adapter under the driver: records the
    calls; ``extend_volume`` finds no room after the LV."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        def record(*args):
            self.calls.append((name,) + args)
            if name == "extend_volume":
                raise lvm.NoContiguousSpace(vg=VG, name=args[0])
            if name == "get_device_path":
                return "/dev/loop9"
        return record


class NoTargets:
    """tgt with no targets: deleting one is a no-op, as TgtAdm's."""

    def delete_target(self, iqn):
        pass


def test_driver_moves_an_lv_that_cannot_grow_in_place():
    """Copy into a zeroed LV of the new size, swap the names only after
    the copy, then wipe and remove the old LV."""
    from minicinder.volume import driver as volume_driver
    from minicinder.volume.drivers import lvm_driver
    from tests.support.minicinder_inprocess import make_conf
    drv = lvm_driver.LVMTgtDriver(make_conf(volume_driver="lvm"),
                                  execute=FakeExecute(), vg=RecordingVG())
    drv.tgt = NoTargets()
    ref = volume_driver.VolumeRef(id="a", size=1)
    assert drv.extend_volume(ref, 2) == {"provider_location": None}
    steps = [c for c in drv.vg.calls if c[0] != "get_device_path"]
    assert steps == [
        ("release_device", "volume-a"),
        ("extend_volume", "volume-a", 2),
        ("create_volume", "volume-a.grow", 2),
        ("clear_volume", "volume-a.grow"),
        ("copy_volume", "volume-a", "volume-a.grow"),
        ("release_device", "volume-a.grow"),
        ("rename_volume", "volume-a", "volume-a.old"),
        ("rename_volume", "volume-a.grow", "volume-a"),
        ("clear_volume", "volume-a.old"),
        ("delete_volume", "volume-a.old"),
    ]


def _clone_driver():
    from minicinder.volume.drivers import lvm_driver
    from tests.support.minicinder_inprocess import make_conf
    vg = RecordingVG()
    drv = lvm_driver.LVMTgtDriver(make_conf(volume_driver="lvm"),
                                  execute=FakeExecute(), vg=vg)
    return drv, vg


def test_driver_clones_into_a_zeroed_lv():
    from minicinder.volume import driver as volume_driver
    drv, vg = _clone_driver()
    clone = volume_driver.VolumeRef(id="b", size=2)
    source = volume_driver.VolumeRef(id="a", size=1)
    assert drv.create_cloned_volume(clone, source) == {}
    steps = [c for c in vg.calls if c[0] != "get_device_path"]
    assert steps == [
        ("create_volume", "volume-b", 2),
        ("clear_volume", "volume-b"),
        ("copy_volume", "volume-a", "volume-b"),
    ]


def test_a_failed_clone_copy_removes_the_new_lv():
    from minicinder import exception
    from minicinder.volume import driver as volume_driver
    from ministack import exception as ms_exception

    class FailingCopyVG(RecordingVG):
        def copy_volume(self, source, target):
            self.calls.append(("copy_volume", source, target))
            raise ms_exception.ProcessExecutionError(
                cmd=["dd"], exit_code=1, stderr="dd: read error")

    drv, _ = _clone_driver()
    vg = drv.vg = FailingCopyVG()
    with pytest.raises(exception.VolumeBackendError):
        drv.create_cloned_volume(volume_driver.VolumeRef(id="b", size=1),
                                 volume_driver.VolumeRef(id="a", size=1))
    steps = [c[:2] for c in vg.calls if c[0] != "get_device_path"]
    assert steps[:3] == [("create_volume", "volume-b"),
                         ("clear_volume", "volume-b"),
                         ("copy_volume", "volume-a")]
    assert steps[-1] == ("delete_volume", "volume-b")


def test_api_workers_share_the_device_cache(tmp_path, monkeypatch):
    """A volume made by one API worker is connected by another without
    ``lvs``/``pvs``: the device it found is shared (checked against sysfs
    before use, like its own cache), and forgotten with the volume."""
    from minicinder.volume.drivers import lvm_devices
    from minicinder.volume.drivers import lvm_driver
    from tests.support.minicinder_inprocess import make_conf
    sysfs = {"/dev/loop9": ("/dev/loop0", "1048576", "1073741824")}
    monkeypatch.setattr(lvm_devices, "identity", sysfs.get)

    def worker():
        drv = lvm_driver.LVMTgtDriver(make_conf(volume_driver="lvm"),
                                      execute=FakeExecute(), vg=RecordingVG())
        drv.tgt = NoTargets()
        drv.share_state(str(tmp_path / "shared"))
        return drv

    one, other = worker(), worker()
    assert one.devices.path("volume-a") == "/dev/loop9"
    assert other.devices.path("volume-a") == "/dev/loop9"
    assert other.vg.calls == []   # no look-up: the shared entry
    # The loop now maps something else: the entry is not trusted.
    sysfs["/dev/loop9"] = ("/dev/loop0", "0", "1073741824")
    fresh = worker()
    assert fresh.devices.path("volume-a") == "/dev/loop9"
    assert fresh.vg.calls == [("get_device_path", "volume-a")]
    # Deleting the volume forgets it everywhere.
    fresh.vg.volume_exists = lambda name: False
    from minicinder.volume import driver as volume_driver
    fresh.delete_volume(volume_driver.VolumeRef(id="a", size=1))
    assert not (tmp_path / "shared" / "volume-a").exists()
    assert oct((tmp_path / "shared").stat().st_mode & 0o777) == "0o700"


def _segments(*rows):
    """``pvs --segments`` rows: (pv, start, size, lv name or "")."""
    return "".join("  %s|%s|%d|%d|%s|%d\n" % (pv, VG, start, size, lv,
                                              EXTENT)
                   for pv, start, size, lv in rows)


def test_create_volume_leaves_room_to_grow_in_place():
    """Issue 29: LVM's contiguous allocation is first fit, so a new LV
    would sit right after the last one; it goes instead at the end of the
    largest free area less its own size, so it can double in place."""
    fake = FakeExecute({("pvs", "--noheadings", "--segments"): _segments(
        ("/dev/loop1", 0, 256, "volume-old"), ("/dev/loop1", 256, 100, ""),
        ("/dev/loop1", 356, 256, "volume-mid"),
        ("/dev/loop1", 612, 2048, ""))})
    vg = lvm.LVM(VG, execute=fake, device_mapper=False)
    vg.create_volume("volume-new", 1)
    (call,) = fake.commands("lvcreate")
    # 256 extents wanted in the 2048-extent area: 256 left after it
    assert call[-2:] == (VG, "/dev/loop1:2148-2403")


def test_create_volume_splits_a_small_area_evenly():
    fake = FakeExecute({("pvs", "--noheadings", "--segments"): _segments(
        ("/dev/loop1", 0, 300, ""), ("/dev/loop2", 0, 10, ""))})
    vg = lvm.LVM(VG, execute=fake, device_mapper=False)
    vg.create_volume("volume-new", 1)
    assert fake.commands("lvcreate")[0][-1] == "/dev/loop1:22-277"


def test_create_volume_lets_lvm_refuse_when_nothing_fits():
    fake = FakeExecute({("pvs", "--noheadings", "--segments"): _segments(
        ("/dev/loop1", 0, 100, ""))})
    vg = lvm.LVM(VG, execute=fake, device_mapper=False)
    vg.create_volume("volume-new", 1)
    assert fake.commands("lvcreate")[0][-1] == VG


def test_grow_loops_resizes_the_live_loop_over_the_old_range():
    resized = []
    vg, fake = make_lvm(lvs=[("volume-a", 0, 511)], loops=(
        "/dev/loop5 %d %d /dev/loop1\n" % (PE_START, 256 * EXTENT)))
    vg._resize_loop = lambda path, size: resized.append((path, size))
    old = ("/dev/loop1", PE_START, 256 * EXTENT)
    assert vg.grow_loops("volume-a", old) == ["/dev/loop5"]
    assert resized == [("/dev/loop5", 512 * EXTENT)]
    assert not fake.commands("losetup")[1:]   # no new loop, no detach


def test_reduce_volume_is_lvreduce():
    vg, fake = make_lvm(lvs=[("volume-a", 0, 511)])
    vg.reduce_volume("volume-a", 1)
    assert fake.commands("lvreduce")[0][-4:] == ("-f", "-L", "1g",
                                                 VG + "/volume-a")


class _RacyLVM:
    """An executor that is a tiny VG: ``pvs --segments`` shows its free
    area, ``lvcreate PV:a-b`` takes extents a..b and fails as LVM does
    when any is taken. ``pvs`` reads the VG, then waits for a second
    reader (up to 0.3 s) before it answers, so two unserialised creates
    always see the same free area."""

    def __init__(self, extents=2048):
        import threading
        self.taken = []            # (first, last)
        self.extents = extents
        self.lock = threading.Lock()
        self.readers = threading.Barrier(2, timeout=0.3)

    def __call__(self, *argv, **kwargs):
        import threading
        if argv[0] == "lvs":
            return "", ""
        if argv[0] == "pvs":
            with self.lock:
                seen = _segments(*self._rows())
            try:
                self.readers.wait()
            except threading.BrokenBarrierError:
                pass          # serialised: nobody else was reading
            return seen, ""
        if argv[0] == "lvcreate":
            first, last = map(int, argv[-1].split(":")[1].split("-"))
            with self.lock:
                if any(a <= last and first <= b for a, b in self.taken):
                    raise exception.ProcessExecutionError(
                        cmd=argv, exit_code=5,
                        stderr="Insufficient free space")
                self.taken.append((first, last))
            return "", ""
        return "", ""

    def _rows(self):
        rows, at = [], 0
        for first, last in sorted(self.taken):
            if first > at:
                rows.append(("/dev/loop1", at, first - at, ""))
            rows.append(("/dev/loop1", first, last - first + 1, "lv"))
            at = last + 1
        if at < self.extents:
            rows.append(("/dev/loop1", at, self.extents - at, ""))
        return rows


def test_creates_at_once_do_not_pick_the_same_extents():
    """minicinder's API workers create volumes at once: each create's
    choice of extents and its lvcreate are one step under the VG's
    extents lock, so none fails with 'Insufficient free space' (4 of 4
    creates at once went error on the lab before)."""
    import concurrent.futures
    fake = _RacyLVM()
    vg = lvm.LVM(VG, execute=fake, device_mapper=False)
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        done = [pool.submit(vg.create_volume, "volume-%d" % i, 1)
                for i in range(4)]
        for future in done:
            future.result()
    assert len(fake.taken) == 4
