"""A process's children and whether a process is gone, from /proc (the
API worker processes of a daemon, in the tests that watch them)."""


def children(pid):
    """The direct children of ``pid`` (its API workers), oldest first."""
    with open("/proc/%d/task/%d/children" % (pid, pid)) as handle:
        return [int(child) for child in handle.read().split()]


def gone(pid):
    """Whether ``pid`` has exited (no longer in /proc, or a zombie its
    parent has not reaped yet)."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True
