"""The concurrent phase of tools/bench_attach.py: many attaches at once,
then many detaches at once, against the same stack."""

import concurrent.futures
import time

import bench_attach_probes as probes
from bench_attach_report import say


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
    pairs = [(sid, bench.create_volume("c%d-%d" % (si, vi)))
             for si, sid in enumerate(sids) for vi in range(v)]
    for _, vid in pairs:
        bench.wait_status(vid, "available")
    result = {"g": g, "v": v, "note": note}
    with concurrent.futures.ThreadPoolExecutor(len(pairs)) as pool:
        start = time.perf_counter()
        answers = list(pool.map(lambda p: bench.attach(*p), pairs))
        errors = [r.status_code for r, _ in answers
                  if r.status_code != 200]
        att_errors, seen = bench._settle(pairs, "in-use", True)
        result["attach_wall"] = time.perf_counter() - start
        devices = {}
        for (sid, _), (_, dev) in zip(pairs, answers, strict=True):
            devices.setdefault(sid, []).append(dev)
        dup_api = sum(len(d) - len(set(d)) for d in devices.values())
        dup_guest = sum(len(names) - len(set(names))
                        for names in seen.values())
        result.update(attach_errors=len(errors) + att_errors,
                      dup_api=dup_api, dup_guest=dup_guest)
        start = time.perf_counter()
        answers = list(pool.map(lambda p: bench.detach(*p), pairs))
        errors = [r.status_code for r in answers if r.status_code != 202]
        det_errors, _ = bench._settle(pairs, "available", False)
        result["detach_wall"] = time.perf_counter() - start
        result["detach_errors"] = len(errors) + det_errors
    for _, vid in pairs:
        bench.delete_volume(vid, wait=False)
    for _, vid in pairs:
        bench.delete_volume(vid)
    bench.results["concurrency"] = result
