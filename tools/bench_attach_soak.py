"""The soak phase of tools/bench_attach.py: many cycles, then what grew.

One volume is attached to and detached from one server ``-k`` times; the
ledgers of ``bench_attach_ledger`` are read before and after. The first
``--warmup`` cycles are not counted: a fresh daemon's RSS grows on its
first requests for reasons that are not leaks (lazily imported modules,
SQLAlchemy's compiled-statement cache, keystonemiddleware's token cache,
the allocator's arenas sized by the first peaks), and a leak is what keeps
growing after that.

With ``--memtrace`` the daemons are sent ``SIGUSR2`` after the warm-up and
after the cycles: started with ``MINISTACK_TRACEMALLOC=<dir>``
(``ministack.memtrace``) they write there which allocation sites grew in
between.
"""

import os
import signal
import time

import bench_attach_ledger as ledger
import bench_attach_probes as probes
from bench_attach_report import say
import journey


def cycle(bench, sid, vid):
    """One attach and detach: seconds (to in-use, to available)."""
    start = time.perf_counter()
    journey.check(bench.attach(sid, vid)[0], 200)
    bench.wait_status(vid, "in-use")
    mid = time.perf_counter()
    journey.check(bench.detach(sid, vid), 202)
    bench.wait_status(vid, "available")
    detached = time.perf_counter() - mid
    # As tempest (wait_for_volume_attachment_remove_from_server): the
    # server lets go of the volume (its BDM) just after Cinder says
    # available, and nova's API refuses a re-attach while it has not.
    journey.wait("server %s lets go of %s" % (sid, vid),
                 lambda: bench.cloud.compute(
                     "GET", "/servers/%s/os-volume_attachments/%s"
                     % (sid, vid)).status_code == 404)
    return mid - start, detached


def catches_sigusr2(pid):
    """Whether ``pid`` has a SIGUSR2 handler (``SigCgt`` in /proc): sent
    to a daemon started without ``MINISTACK_TRACEMALLOC``, the signal's
    default action would kill it."""
    try:
        with open("/proc/%d/status" % pid) as handle:
            for line in handle:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) &
                                1 << (signal.SIGUSR2 - 1))
    except OSError:
        pass
    return False


def signal_daemons(what):
    sent = []
    for daemon in ledger.DAEMONS:
        pid = ledger.daemon_pid(daemon)
        if pid and catches_sigusr2(pid):
            os.kill(pid, signal.SIGUSR2)
            sent.append(daemon)
    say("   SIGUSR2 (tracemalloc dump: %s) sent to %s" % (
        what, ", ".join(sent) or "no daemon: none runs with "
        "MINISTACK_TRACEMALLOC"))


def run(bench, sid, vg, cycles_wanted, warmup, memtrace=False):
    vid = bench.create_volume("soak")
    bench.wait_status(vid, "available")
    _cycles(bench, sid, vid, warmup)
    if memtrace:
        signal_daemons("baseline")
    before = ledger.leak_snapshot(bench, vg)
    cycles, errors = _cycles(bench, sid, vid, cycles_wanted, progress=True)
    after = ledger.leak_snapshot(bench, vg)
    if memtrace:
        signal_daemons("after the cycles")
    bench.delete_volume(vid)
    return {"cycles": cycles, "errors": errors, "warmup": warmup,
            "before": before, "after": after}


def _cycles(bench, sid, vid, count, progress=False):
    """``count`` cycles: ([(to in-use, to available)...], errors)."""
    cycles, errors = [], 0
    for i in range(count):
        try:
            cycles.append(cycle(bench, sid, vid))
        except SystemExit as exc:
            errors += 1
            say("   cycle %d failed: %s" % (i + 1, exc))
            probes.settle_volume(bench, sid, vid)
        if progress and (i + 1) % 25 == 0:
            say("   %d/%d cycles" % (i + 1, count))
    return cycles, errors
