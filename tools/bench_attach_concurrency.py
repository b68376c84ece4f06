"""The concurrent phase of tools/bench_attach.py: many attaches at once,
then many detaches at once, against the same stack, then the same
``g`` x ``v`` by hand (``bench_attach_floor_concurrent``).

The floor's guests are booted before the stack's attaches (nothing is
timed while they boot) and live until the floor is done, so both sides
are measured with the same guests running."""

import concurrent.futures
import time
import traceback

import bench_attach_probes as probes
import bench_scale_stats as stats
from bench_attach_report import say

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
    quota = _quota(bench, g * v)
    # CPU per process group while each wall is timed: on 2 cores the
    # stack and the floor are both CPU-bound, so the CPU seconds each
    # spends say where the stack's extra time goes.
    cpu = stats.CpuSampler(interval=0.25)
    cpu.start()
    try:
        try:
            floor = bench.concurrent_floor
            say("   booting %d floor guests at once" % g)
            floor.boot(g, bench.args.image_record, bench.args.memory_mb,
                       bench.args.virt_type)
            result = _stack(bench, sids, v, note, cpu.mark)
            say("   stack: attach all %.1f s, detach all %.1f s; now the "
                "floor" % (result["attach_wall"], result["detach_wall"]))
        finally:
            if quota is not None:
                quota.restore()
        try:
            result["floor"] = floor.run(v, mark=cpu.mark)
        except Exception as exc:   # the stack's figures still count
            say("   floor failed:\n" + traceback.format_exc())
            result["floor_error"] = "%s: %s" % (type(exc).__name__, exc)
        finally:
            floor.cleanup()
    finally:
        cpu.stop()
    result["cpu"] = cpu.summary()


def _quota(bench, volumes):
    """Raise the project's volume quota for the phase (g x v volumes
    outgrow Cinder's default of 10), as the scale run does, through the
    admin cloud; put back by the caller. None when already enough or
    when no admin cloud answers (then the POSTs may meet the quota)."""
    import bench_scale_room   # not at the top: it imports bench_attach
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
    pairs = [(sid, bench.create_volume("c%d-%d" % (si, vi)))
             for si, sid in enumerate(sids) for vi in range(v)]
    for _, vid in pairs:
        bench.wait_status(vid, "available")
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
    bench.results["concurrency"] = result
    return result
