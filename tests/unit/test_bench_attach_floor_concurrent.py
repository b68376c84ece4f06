"""The pure parts of bench_attach's concurrent floor: which disk gets
which name, when a guest counts as settled, the aliases a detach waits
for, and the stack / floor ratios the report prints."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "tools"))
import bench_attach_floor_concurrent as cfloor  # noqa: E402
import bench_attach_report as report  # noqa: E402


def test_plan_names_vdb_onwards_in_each_guest():
    disks = cfloor.plan("0123abcd", 2, 3)
    assert [(d.guest, d.dev) for d in disks] == [
        (0, "vdb"), (0, "vdc"), (0, "vdd"),
        (1, "vdb"), (1, "vdc"), (1, "vdd")]


def test_plan_past_vdz_goes_on_as_libvirt_names():
    devs = [d.dev for d in cfloor.plan("0123abcd", 1, 26)]
    assert devs[-2:] == ["vdz", "vdaa"]
    assert len(set(devs)) == 26


def test_plan_names_are_unique_carry_the_run_and_fit_virtio():
    disks = cfloor.plan("0123abcd", 4, 8)
    assert len(disks) == 32
    for field in ("name", "iqn", "usage", "serial"):
        values = [getattr(d, field) for d in disks]
        assert len(set(values)) == 32, field
        assert all("0123abcd" in value for value in values), field
    assert max(len(d.serial) for d in disks) <= 20
    first = disks[0]
    assert first.name == "bench-floor-0123abcd-c0-0"
    assert first.iqn == "iqn.2010-10.org.openstack:bench-floor-0123abcd-c0-0"
    assert first.usage == "bench-floor-chap-" + first.iqn


def test_settled_present_needs_every_serial():
    disks = [("vda", ""), ("vdb", "s1"), ("vdc", "other")]
    assert not cfloor.settled(disks, {"s1", "s2"}, present=True)
    assert cfloor.settled(disks + [("vdd", "s2")], {"s1", "s2"},
                          present=True)


def test_settled_absent_needs_none_left():
    assert not cfloor.settled([("vdb", "s1")], {"s1", "s2"}, present=False)
    assert cfloor.settled([("vda", ""), ("vdb", "other")], {"s1", "s2"},
                          present=False)


def test_disk_aliases_of_live_xml():
    xml = """<domain><devices>
      <disk type='file'><target dev='vda'/><alias name='virtio-disk0'/></disk>
      <disk type='network'><target dev='vdb'/>
        <alias name='virtio-disk1'/></disk>
      <disk type='network'><target dev='vdc'/></disk>
    </devices></domain>"""
    assert cfloor.disk_aliases(xml) == {"vda": "virtio-disk0",
                                        "vdb": "virtio-disk1"}


def _conc(attach, detach, floor_attach, floor_detach, errors=0):
    return {"g": 4, "v": 8, "attach_wall": attach, "detach_wall": detach,
            "attach_errors": 0, "detach_errors": 0,
            "floor": {"g": 4, "v": 8, "attach_wall": floor_attach,
                      "detach_wall": floor_detach, "attach_errors": errors,
                      "detach_errors": 0}}


def test_ratio_lines_met_and_not_met():
    lines = report.concurrency_floor_lines(_conc(6.0, 9.0, 5.0, 4.0))
    assert lines[0] == "floor attach all (by hand, 4x8): 5.0 s wall, 0 errors"
    assert lines[1] == "floor detach all (by hand, 4x8): 4.0 s wall, 0 errors"
    assert lines[2] == ("attach-all ratio (stack / floor walls, 6.0 s / "
                        "5.0 s): 1.20x  (target <= 1.5x: met)")
    assert lines[3] == ("detach-all ratio (stack / floor walls, 9.0 s / "
                        "4.0 s): 2.25x  (target <= 1.5x: NOT met)")


def test_ratio_exactly_at_target_is_met():
    lines = report.concurrency_floor_lines(_conc(3.0, 3.0, 2.0, 2.0))
    assert lines[2].endswith("1.50x  (target <= 1.5x: met)")


def test_errors_on_either_side_are_not_met():
    lines = report.concurrency_floor_lines(_conc(1.0, 1.0, 2.0, 2.0,
                                                 errors=2))
    assert lines[2].endswith("(target <= 1.5x: NOT met, 2 errors)")
    assert lines[3].endswith("(target <= 1.5x: met)")


def test_no_floor_prints_nothing_and_a_failed_floor_says_so():
    assert report.concurrency_floor_lines({"attach_wall": 1.0}) == []
    assert report.concurrency_floor_lines(
        {"floor_error": "SystemExit: guest waiter timed out"}) == [
        "floor (by hand): failed: SystemExit: guest waiter timed out"]


def _pair(attach, detach, floor_attach, floor_detach, errors=0):
    pair = _conc(attach, detach, floor_attach, floor_detach, errors)
    pair.update(note=None, dup_api=0, dup_guest=0)
    return pair


def test_rounds_combine_into_medians_and_summed_errors():
    import bench_attach_concurrency as concurrency
    result = concurrency.combine([_pair(9.0, 7.0, 4.0, 6.0),
                                  _pair(6.0, 8.0, 5.0, 5.0, errors=1),
                                  _pair(7.0, 6.0, 6.0, 7.0)])
    assert (result["attach_wall"], result["detach_wall"]) == (7.0, 7.0)
    assert (result["floor"]["attach_wall"],
            result["floor"]["detach_wall"]) == (5.0, 6.0)
    assert result["floor"]["attach_errors"] == 1
    assert [r["attach_wall"] for r in result["rounds"]] == [9.0, 6.0, 7.0]
    lines = report.concurrency_floor_lines(result)
    assert lines[2] == ("attach-all ratio (stack / floor median walls, "
                        "7.0 s / 5.0 s): 1.40x  (target <= 1.5x: NOT met, "
                        "1 errors)")
    rounds = report.round_lines(result["rounds"])
    assert rounds[0] == ("round 1: stack attach all 9.0 s, detach all "
                         "7.0 s; floor 4.0 s, 6.0 s; ratios 2.25x, 1.17x")
    assert len(rounds) == 3


def test_a_failed_floor_in_any_round_leaves_no_ratio():
    import bench_attach_concurrency as concurrency
    failed = _pair(6.0, 6.0, 1.0, 1.0)
    del failed["floor"]
    failed["floor_error"] = "RuntimeError: boom"
    result = concurrency.combine([_pair(6.0, 6.0, 5.0, 5.0), failed])
    assert report.concurrency_floor_lines(result) == [
        "floor (by hand): failed: RuntimeError: boom"]
    assert report.round_lines([{"attach_wall": 1.0, "detach_wall": 1.0}]) \
        == []
