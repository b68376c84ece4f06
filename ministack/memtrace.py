"""Opt-in tracemalloc in a running daemon: where its memory grows.

A daemon's RSS growing over hundreds of attach/detach cycles is either a
leak (something kept per request: a cache, a registry, a list) or the
allocator settling (arenas and free lists sized by the first peaks, the
interpreter's caches filling once). RSS cannot tell them apart; Python's
own allocation ledger can. This module is off unless the environment
names a directory::

    MINISTACK_TRACEMALLOC=/root/memtrace ministackctl restart minicinder

Then the first ``SIGUSR2`` starts tracing (tracing from start-up would
slow the daemon's imports tenfold, and growth is what matters) and each
one writes ``<dir>/<project>-<pid>-<n>.txt`` (mode 0600, the directory
0700: the file names code paths and object counts, nothing else, but it
is the operator's): RSS, the traced total, live objects by type, and the
allocation sites that grew since the first dump and since the previous
one. Each dump first runs ``malloc_trim(0)`` and prints RSS before and
after it: memory the C allocator held free is told apart from live data.
The usual run: warm up, signal (the baseline), run the cycles, signal
again, read the second file: whatever it lists was allocated after the
baseline and is still alive. While tracing, RSS also holds tracemalloc's
own tables (printed): judge RSS growth on an untraced run.

Off, it costs one environment lookup at start-up: no tracing, no handler.
"""

import collections
import ctypes
import ctypes.util
import datetime
import gc
import os
import re
import signal
import threading
import tracemalloc

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

ENV = "MINISTACK_TRACEMALLOC"
FRAMES = 10
TOP = 25

# Allocations made by the measuring itself.
_IGNORE = (tracemalloc.Filter(False, tracemalloc.__file__, all_frames=True),
           tracemalloc.Filter(False, __file__, all_frames=True),
           tracemalloc.Filter(False, "<frozen importlib._bootstrap>"),
           tracemalloc.Filter(False, "<unknown>"))


class Tracer:
    """Snapshots of this process, written on demand."""

    def __init__(self, directory, project):
        self.directory = directory
        self.project = project
        self.count = 0
        self.first = self.previous = None
        self.first_census = None
        self.lock = threading.Lock()

    def dump(self):
        """Take a snapshot and write the report; returns its path."""
        with self.lock:
            if not tracemalloc.is_tracing():
                tracemalloc.start(FRAMES)
            gc.collect()
            # Both read before the snapshot and census allocate.
            self.rss_before_trim = rss_kib()
            self.trimmed = malloc_trim()
            self.rss_after_trim = rss_kib()
            snapshot = tracemalloc.take_snapshot().filter_traces(_IGNORE)
            census = collections.Counter(
                type(o).__name__ for o in gc.get_objects())
            self.count += 1
            lines = self._header(census)
            if self.first is None:
                self.first, self.first_census = snapshot, census
                lines += ["", "== biggest allocation sites (baseline)"]
                lines += [str(s) for s in
                          snapshot.statistics("lineno")[:TOP]]
            else:
                lines += self._census_diff(census)
                lines += self._diff("since the first dump", snapshot,
                                    self.first)
                lines += self._diff("since the previous dump", snapshot,
                                    self.previous)
            self.previous = snapshot
            path = os.path.join(self.directory, "%s-%d-%d.txt" % (
                self.project, os.getpid(), self.count))
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write("\n".join(lines) + "\n")
            return path

    def _header(self, census):
        current, peak = tracemalloc.get_traced_memory()
        # Threads by name, digits folded: a pool that keeps growing shows.
        threads = collections.Counter(re.sub(r"\d+", "N", t.name)
                                      for t in threading.enumerate())
        return ["%s pid %d dump %d at %s" % (
                    self.project, os.getpid(), self.count,
                    datetime.datetime.now(datetime.UTC).isoformat()),
                "RSS %d KiB, %s; traced %d KiB (peak %d KiB), tracemalloc "
                "itself %d KiB; %d threads; %d gc objects" % (
                    self.rss_before_trim,
                    "%d KiB after malloc_trim(0)" % self.rss_after_trim
                    if self.trimmed else "malloc_trim(0) unavailable",
                    current // 1024, peak // 1024,
                    tracemalloc.get_tracemalloc_memory() // 1024,
                    threading.active_count(), sum(census.values())),
                "threads: " + ", ".join("%s x%d" % item for item
                                        in sorted(threads.items()))]

    def _census_diff(self, census):
        grown = sorted(((n - self.first_census.get(t, 0), t, n)
                        for t, n in census.items()), reverse=True)
        return ["", "== live objects by type, change since the first dump"] \
            + ["%+8d %s (now %d)" % row for row in grown[:TOP] if row[0]]

    def _diff(self, title, snapshot, older):
        stats = snapshot.compare_to(older, "lineno")
        lines = ["", "== allocation sites, %s (size_diff, count_diff)"
                 % title] + [str(s) for s in stats[:TOP]]
        growers = snapshot.compare_to(older, "traceback")[:3]
        for stat in growers:
            if stat.size_diff <= 0:
                break
            lines += ["", "-- traceback of %+d B in %+d blocks:"
                      % (stat.size_diff, stat.count_diff)]
            lines += stat.traceback.format(limit=FRAMES)
        return lines


def malloc_trim():
    """Hand the C heap's free pages back (glibc): RSS that this gives
    back was free memory the allocator kept, not live data. False when
    there is no glibc."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        return False
    return True


def rss_kib():
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def install(project, environ=None):
    """Hook ``SIGUSR2`` when the environment asks for it (call from the
    main thread); returns the :class:`Tracer` or None."""
    directory = (os.environ if environ is None else environ).get(ENV)
    if not directory:
        return None
    os.makedirs(directory, mode=0o700, exist_ok=True)
    tracer = Tracer(directory, project)
    # The handler only wakes a thread: a snapshot takes seconds and must
    # not run inside whatever the main thread was doing.
    wake = threading.Event()

    def _dumper():
        while True:
            wake.wait()
            wake.clear()
            try:
                tracer.dump()
            except Exception:   # a full disk must not end the tracing
                LOG.exception("tracemalloc dump failed")

    threading.Thread(target=_dumper, daemon=True,
                     name="memtrace-dump").start()
    signal.signal(signal.SIGUSR2, lambda _signum, _frame: wake.set())
    return tracer
