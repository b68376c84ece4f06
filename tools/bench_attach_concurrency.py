"""The concurrent phase of tools/bench_attach.py: many attaches at once,
then many detaches at once, against the same stack, then the same
``g`` x ``v`` by hand (``bench_attach_floor_concurrent``).

The floor's guests are booted before the stack's attaches (nothing is
timed while they boot) and live until the floor is done, so both sides
are measured with the same guests running.

On 2 cores both sides are CPU-bound and most of the CPU is the TCG
guests' own work on each hot-plug, which varies from run to run: one
pair of walls put the attach-all ratio anywhere from 0.97x to 2.0x
within an hour, and the guests' CPU per disk moved by a third between
two rounds of the same side. So the phase is ``--rounds`` pairs (5 by
default; three still put a median anywhere from 1.30x to 1.47x on the
same code in one morning), the stack first in odd rounds and the floor
first in even ones, and the ratios are of the median walls, as the
other targets are medians."""

import concurrent.futures
import statistics
import time
import traceback

import bench_attach_probes as probes
from bench_attach_report import say
import bench_scale_stats as stats

ADMIN_CLOUD = "ministack-admin"


def run(bench, sids, vg):
    """``-g`` servers x ``-v`` volumes attached at once, then detached
    at once: wall times, errors, duplicate device names (scaled down to
    what the volume group holds)."""
    free = probes.vg_free_gib(vg)
    g, v = len(sids), bench.args.v
    note = None
    usable = int(free + 0.01)   # whole 1 GiB volumes that fit
    if g * v > usable:
        v = max(1, usable // g)
        g = min(g, max(1, usable))
        note = ("VG %s has %.1f GiB free: scaled %dx%d down to %dx%d "
                "(1 GiB volumes)" % (vg, free, len(sids), bench.args.v,
                                     g, v))
        say("   note: " + note)
    sids = sids[:g]
    rounds = max(1, getattr(bench.args, "rounds", 1))
    quota = _quota(bench, g * v)
    # CPU per process group while each wall is timed: on 2 cores the
    # stack and the floor are both CPU-bound, so the CPU seconds each
    # spends say where the stack's extra time goes (summed over rounds).
    cpu = stats.CpuSampler(interval=0.25)
    cpu.start()
    floor = bench.concurrent_floor
    pairs = []
    try:
        say("   booting %d floor guests at once" % g)
        floor.boot(g, bench.args.image_record, bench.args.memory_mb,
                   bench.args.virt_type)
        for number in range(1, rounds + 1):
            pairs.append(_round(bench, floor, sids, v, note, cpu.mark,
                                stack_first=number % 2 == 1))
            say("   round %d: %s" % (number, round_line(pairs[-1])))
            if "floor_error" in pairs[-1]:
                break
    finally:
        try:
            floor.cleanup()
        finally:
            if quota is not None:
                quota.restore()
            cpu.stop()
    result = combine(pairs)
    result["cpu"] = cpu.summary()
    bench.results["concurrency"] = result
    return result


def _round(bench, floor, sids, v, note, mark, stack_first):
    """One pair: the stack's phase and the floor's, in that order or the
    other; the stack's result with the floor's under ``floor`` (or
    ``floor_error``)."""
    result = {}

    def floor_side():
        try:
            result["floor"] = floor.run(v, mark=mark)
        except Exception as exc:   # the stack's figures still count
            say("   floor failed:\n" + traceback.format_exc())
            result["floor_error"] = "%s: %s" % (type(exc).__name__, exc)

    if not stack_first:
        floor_side()
    result.update(_stack(bench, sids, v, note, mark))
    if stack_first:
        floor_side()
    return result


def round_line(pair):
    """One round's walls, for the progress output."""
    line = "stack attach all %.1f s, detach all %.1f s" % (
        pair["attach_wall"], pair["detach_wall"])
    if pair.get("floor"):
        line += "; floor %.1f s, %.1f s" % (pair["floor"]["attach_wall"],
                                            pair["floor"]["detach_wall"])
    return line


def combine(pairs):
    """The rounds as one result in the shape of a single round's: each
    wall the median of its rounds', errors and duplicates summed, and
    ``rounds`` listing every round's walls. A floor that failed in any
    round leaves ``floor_error`` (no ratio is judged without it)."""
    first = pairs[0]
    result = {"g": first["g"], "v": first["v"], "note": first["note"],
              "rounds": [{"attach_wall": p["attach_wall"],
                          "detach_wall": p["detach_wall"],
                          "floor": p.get("floor")} for p in pairs]}
    for key in ("attach_wall", "detach_wall"):
        result[key] = statistics.median(p[key] for p in pairs)
    for key in ("attach_errors", "detach_errors", "dup_api", "dup_guest"):
        result[key] = sum(p[key] for p in pairs)
    errors = [p["floor_error"] for p in pairs if "floor_error" in p]
    if errors:
        result["floor_error"] = errors[0]
        return result
    floors = [p["floor"] for p in pairs]
    result["floor"] = {"g": floors[0]["g"], "v": floors[0]["v"]}
    for key in ("attach_wall", "detach_wall"):
        result["floor"][key] = statistics.median(f[key] for f in floors)
    for key in ("attach_errors", "detach_errors"):
        result["floor"][key] = sum(f[key] for f in floors)
    return result


def _quota(bench, volumes):
    """Raise the project's volume quota for the phase (g x v volumes
    outgrow Cinder's default of 10), as the scale run does, through the
    admin cloud; put back by the caller. None when already enough or
    when no admin cloud answers (then the POSTs may meet the quota)."""
    import bench_scale_room  # not at the top: it imports bench_attach
    try:
        admin = probes.ReauthCloud(ADMIN_CLOUD)
        quota = bench_scale_room.VolumeQuota(
            admin, bench.cloud._cloud.volume_url.rsplit("/", 1)[1])
        quota.raise_for(volumes)
    except (Exception, SystemExit) as exc:
        say("   note: volume quota not checked (%s): %s" % (ADMIN_CLOUD,
                                                             exc))
        return None
    return quota if quota.quota_before is not None else None


def _stack(bench, sids, v, note, mark):
    """The stack's side: every volume attached at once through the API,
    then detached at once; ``mark(phase)`` names the CPU sampler's
    phase."""
    g = len(sids)
    names = [(sid, "c%d-%d" % (si, vi))
             for si, sid in enumerate(sids) for vi in range(v)]
    pairs = list(zip([sid for sid, _ in names], bench.create_volumes(
        [name for _, name in names]), strict=True))
    result = {"g": g, "v": v, "note": note}
    with concurrent.futures.ThreadPoolExecutor(len(pairs)) as pool:
        mark("stack attach-all")
        start = time.perf_counter()
        answers = list(pool.map(lambda p: bench.attach(*p), pairs))
        errors = [r.status_code for r, _ in answers
                  if r.status_code != 200]
        att_errors, seen = bench._settle(pairs, "in-use", True)
        result["attach_wall"] = time.perf_counter() - start
        mark(None)
        devices = {}
        for (sid, _), (_, dev) in zip(pairs, answers, strict=True):
            devices.setdefault(sid, []).append(dev)
        dup_api = sum(len(d) - len(set(d)) for d in devices.values())
        dup_guest = sum(len(names) - len(set(names))
                        for names in seen.values())
        result.update(attach_errors=len(errors) + att_errors,
                      dup_api=dup_api, dup_guest=dup_guest)
        mark("stack detach-all")
        start = time.perf_counter()
        answers = list(pool.map(lambda p: bench.detach(*p), pairs))
        errors = [r.status_code for r in answers if r.status_code != 202]
        det_errors, _ = bench._settle(pairs, "available", False)
        result["detach_wall"] = time.perf_counter() - start
        mark(None)
        result["detach_errors"] = len(errors) + det_errors
    for _, vid in pairs:
        bench.delete_volume(vid, wait=False)
    for _, vid in pairs:
        bench.delete_volume(vid)
    return result
