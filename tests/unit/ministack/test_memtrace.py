"""ministack.memtrace: off by default; on, SIGUSR2 writes what grew.

The "on" case runs in a child interpreter: it hooks SIGUSR2 and starts
tracemalloc, neither of which belongs in the test runner's process.
"""

import os
import signal
import stat
import subprocess
import sys
import textwrap
import tracemalloc

from ministack import memtrace

CHILD = textwrap.dedent("""
    import os, signal, sys, time
    from ministack import memtrace

    def wait_for(n):
        deadline = time.monotonic() + 120
        while len(os.listdir(sys.argv[1])) < n:
            if time.monotonic() > deadline:
                sys.exit("no dump %d" % n)
            time.sleep(0.05)

    assert memtrace.install("unit", {memtrace.ENV: sys.argv[1]})
    os.kill(os.getpid(), signal.SIGUSR2)
    wait_for(1)
    kept = [bytearray(4096) for _ in range(256)]   # the "leak"
    os.kill(os.getpid(), signal.SIGUSR2)
    wait_for(2)
""")


def test_off_without_the_environment_variable():
    before = signal.getsignal(signal.SIGUSR2)
    assert memtrace.install("unit", {}) is None
    assert memtrace.install("unit", {memtrace.ENV: ""}) is None
    assert signal.getsignal(signal.SIGUSR2) is before
    assert not tracemalloc.is_tracing()


def test_sigusr2_writes_private_reports_naming_what_grew(tmp_path):
    out = tmp_path / "dumps"
    subprocess.run([sys.executable, "-c", CHILD, str(out)], check=True,
                   timeout=300, cwd=os.path.dirname(os.path.dirname(
                       os.path.dirname(os.path.dirname(__file__)))))
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o700
    files = sorted(out.iterdir(), key=lambda p: p.name)
    assert [p.name.rsplit("-", 1)[1] for p in files] == ["1.txt", "2.txt"]
    for path in files:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    second = files[1].read_text()
    assert "since the first dump" in second
    # The kept list comprehension is the biggest grower, by its line.
    grown = second.split("sites, since the first dump")[1].splitlines()[1]
    line = next(i for i, text in enumerate(CHILD.splitlines(), 1)
                if "kept =" in text)
    assert grown.startswith("<string>:%d: " % line), second
    assert "KiB (+1" in grown, second
    assert "live objects by type" in second   # the gc census
