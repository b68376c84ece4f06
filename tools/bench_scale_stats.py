"""The pure parts of tools/bench_scale.py: percentiles, the CPU ledger
read from ``/proc``, the limiting-resource verdict, the table and the
chart.

Kept apart from the REST and libvirt code so they can be unit-tested
without a lab (tests/unit/test_bench_scale_stats.py).

CPU is sampled from ``/proc`` rather than with psutil so the sampler
costs one read per process per tick and needs nothing beyond the
kernel: ``/proc/stat`` gives the machine's busy and iowait jiffies,
``/proc/<pid>/stat`` each process's utime+stime. Processes are grouped
by what they are (:func:`classify`): the lab's three daemons (only those
started with ``/etc/ministack`` configs, so another helper's private
daemons land in ``other``), QEMU guests, MariaDB, tgtd, libvirt,
Keystone, RabbitMQ.
"""

import math
import os
import threading
import time

GROUPS = ("qemu", "miniapi", "minicinder", "minicompute", "mariadbd",
          "tgtd", "libvirtd", "keystone", "rabbitmq", "bench", "other",
          "exited")
# "exited": busy time no sampled process accounts for - commands that
# start and end between two ticks (lvs, tgtadm, blkdiscard, virsh) and
# interrupts.


def percentile(values, pct):
    """Nearest-rank percentile (the value below which ``pct`` % of the
    samples fall); None for no samples."""
    data = sorted(v for v in values if v is not None)
    if not data:
        return None
    rank = max(1, math.ceil(pct / 100.0 * len(data)))
    return data[min(rank, len(data)) - 1]


def classify(comm, cmdline):
    """The group a process belongs to, from its ``comm`` and argv."""
    args = cmdline.split("\0") if "\0" in cmdline else cmdline.split()
    joined = " ".join(args)
    if comm.startswith("qemu-system") or "qemu-system" in (args or [""])[0]:
        return "qemu"
    for daemon in ("miniapi", "minicinder", "minicompute"):
        if any(a.endswith("/" + daemon) or a == daemon for a in args[:2]):
            return daemon if "/etc/ministack/" in joined else "other"
    if comm in ("mariadbd", "mysqld"):
        return "mariadbd"
    if comm == "tgtd":
        return "tgtd"
    if comm in ("libvirtd", "virtqemud", "virtlogd"):
        return "libvirtd"
    if "keystone" in joined and "gunicorn" in joined:
        return "keystone"
    if comm in ("beam.smp", "epmd") or "rabbit" in joined:
        return "rabbitmq"
    return "other"


def process_name(comm, cmdline):
    """``comm``, or for an interpreter the script it runs (``pytest``,
    ``minicinder``, ``cinder_priv_soak.py``) so "other" can be told
    apart."""
    args = [a for a in cmdline.split("\0") if a]
    if comm.startswith("python") and len(args) > 1:
        script = next((a for a in args[1:] if not a.startswith("-")), "")
        return os.path.basename(script) or comm
    return comm


def _proc_jiffies(pid):
    with open("/proc/%d/stat" % pid) as f:
        data = f.read()
    # comm may contain spaces: fields after the last ')' are fixed.
    fields = data[data.rindex(")") + 2:].split()
    return int(fields[11]) + int(fields[12])   # utime + stime


def _machine_jiffies():
    with open("/proc/stat") as f:
        parts = f.readline().split()[1:]
    values = [int(v) for v in parts]
    idle, iowait = values[3], values[4]
    return sum(values[:8]), idle + iowait, iowait


class CpuSampler:
    """Samples /proc every ``interval`` seconds in a thread; ``mark``
    starts a named phase, :meth:`summary` gives each phase's share of
    the machine per group."""

    def __init__(self, interval=0.5):
        self.interval = interval
        self.phases = {}          # name -> accumulated totals
        self._phase = None
        self._stop = threading.Event()
        self._thread = None
        self._groups = {}         # pid -> (group, name)
        self._comms = {}          # pid -> comm when classified
        self._last = None

    def _snapshot(self):
        per = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            pid = int(entry)
            try:
                # comm is read every tick: a qemu guest is first seen as
                # libvirtd's fork, before its exec, with the same pid.
                with open("/proc/%d/comm" % pid) as f:
                    comm = f.read().strip()
                if self._comms.get(pid) != comm:
                    with open("/proc/%d/cmdline" % pid) as f:
                        cmd = f.read()
                    group = classify(comm, cmd)
                    if pid == os.getpid():
                        group = "bench"
                    self._groups[pid] = (group, process_name(comm, cmd))
                    self._comms[pid] = comm
                per[pid] = _proc_jiffies(pid)
            except (OSError, ValueError):
                continue
        return time.monotonic(), _machine_jiffies(), per

    def _tick(self):
        now = self._snapshot()
        if self._last is not None and self._phase is not None:
            (t0, (tot0, idle0, io0), per0) = self._last
            (t1, (tot1, idle1, io1), per1) = now
            acc = self.phases.setdefault(self._phase, {
                "seconds": 0.0, "total": 0, "idle": 0, "iowait": 0,
                "groups": {}, "procs": {}, "peak_busy": 0.0})
            acc["seconds"] += t1 - t0
            acc["total"] += tot1 - tot0
            acc["idle"] += idle1 - idle0
            acc["iowait"] += io1 - io0
            if tot1 > tot0:
                acc["peak_busy"] = max(acc["peak_busy"], 1 - (
                    idle1 - idle0) / (tot1 - tot0))
            for pid, jiffies in per1.items():
                delta = jiffies - per0.get(pid, jiffies)
                if delta <= 0:
                    continue
                group, comm = self._groups[pid]
                acc["groups"][group] = acc["groups"].get(group, 0) + delta
                key = (pid, group, comm)
                acc["procs"][key] = acc["procs"].get(key, 0) + delta
        self._last = now

    def _run(self):
        while not self._stop.wait(self.interval):
            self._tick()

    def start(self):
        self._last = self._snapshot()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def mark(self, phase):
        """Account samples from now on to ``phase`` (None: to nothing)."""
        self._tick()
        self._phase = phase

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join()

    def summary(self):
        return {name: summarize(acc) for name, acc in self.phases.items()}


def summarize(acc, ncpu=None):
    """A phase's totals as fractions: ``busy`` of the whole machine,
    ``iowait``, ``groups`` (share of all CPU time, 1.0 = every core),
    ``top`` (the busiest single process as a fraction of one core)."""
    ncpu = ncpu or os.cpu_count() or 1
    total = acc["total"] or 1
    busy = 1 - acc["idle"] / total
    # total is in jiffies summed over all CPUs; a process's jiffies are
    # per CPU it ran on, so its share of the machine is jiffies/total.
    groups = {g: j / total for g, j in acc["groups"].items()}
    groups["exited"] = max(0.0, busy - sum(groups.values()))
    qemu_procs = sum(1 for (pid, g, c) in acc["procs"] if g == "qemu")
    others = {}
    for (_pid, g, name), jiffies in acc["procs"].items():
        if g == "other":
            others[name] = others.get(name, 0) + jiffies / total
    others = sorted(others.items(), key=lambda kv: -kv[1])[:3]
    top = None
    if acc["procs"]:
        (pid, group, comm), jiffies = max(acc["procs"].items(),
                                          key=lambda kv: kv[1])
        top = {"pid": pid, "group": group, "comm": comm,
               "cores": jiffies / total * ncpu}
    return {"seconds": acc["seconds"], "busy": busy,
            "iowait": acc["iowait"] / total, "peak_busy": acc["peak_busy"],
            "groups": groups, "qemu_procs": qemu_procs, "top": top,
            "others": others,
            "ncpu": ncpu}


def verdict(cpu):
    """Name the limiting resource of one phase from its CPU summary.

    * the machine >= 90 % busy: CPU, and who holds it;
    * iowait >= 20 %: the disk;
    * one process >= 90 % of a core while the machine has room: that
      process's single thread (a GIL or a lock), not the machine;
    * otherwise nothing saturates: time goes to waiting (locks, polls,
      the guests' own pace), said as such.
    """
    ncpu = cpu["ncpu"]
    groups = sorted(cpu["groups"].items(), key=lambda kv: -kv[1])
    lead = ", ".join("%d%% %s" % (round(share / max(cpu["busy"], 1e-9)
                                        * 100), _label(g, cpu))
                     for g, share in groups[:3] if share >= 0.01)
    top = cpu["top"]
    if cpu["busy"] >= 0.90:
        return "CPU: %d cores at %d%% (%s)" % (ncpu, round(cpu["busy"] * 100),
                                              lead)
    if cpu["iowait"] >= 0.20:
        return "disk: %d%% iowait (%s)" % (round(cpu["iowait"] * 100), lead)
    if top and top["cores"] >= 0.90:
        return ("one thread: %s (pid %d) at %d%% of a core while the "
                "machine is %d%% busy (%s)" % (
                    top["comm"], top["pid"], round(top["cores"] * 100),
                    round(cpu["busy"] * 100), lead))
    return ("nothing saturated: machine %d%% busy (%s); the time is "
            "waiting, not computing" % (round(cpu["busy"] * 100), lead))


def _label(group, cpu):
    if group == "qemu":
        return "in %d qemu TCG guests" % cpu["qemu_procs"]
    if group == "exited":
        return "in short-lived commands and interrupts"
    if group == "other" and cpu.get("others"):
        return "in other processes: %s" % ", ".join(
            "%s %d%%" % (name, round(share * 100))
            for name, share in cpu["others"])
    return "in " + group


def ms(seconds):
    return "-" if seconds is None else "%.0f ms" % (seconds * 1000)


def secs(seconds):
    return "-" if seconds is None else "%.1f s" % seconds


def format_table(rows, headers):
    """Left-aligned first column, right-aligned others, one space-padded
    line per row."""
    table = [list(headers)] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(headers))]
    lines = []
    for n, row in enumerate(table):
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def latency_rows(samples):
    """``samples``: {(call, condition): [seconds, ...]} -> table rows
    (call, condition, n, p50, p99, max)."""
    rows = []
    for (call, cond), values in sorted(samples.items()):
        rows.append((call, cond, len(values), ms(percentile(values, 50)),
                     ms(percentile(values, 99)),
                     ms(max(values) if values else None)))
    return rows


def cpu_rows(summary):
    """Per phase: seconds, machine busy, iowait, then each group's share
    of the machine."""
    rows = []
    for phase, cpu in summary.items():
        shares = cpu["groups"]
        rows.append([phase, "%.0f s" % cpu["seconds"],
                     "%d%%" % round(cpu["busy"] * 100),
                     "%d%%" % round(cpu["iowait"] * 100)] + [
            "%d%%" % round(shares.get(g, 0) * 100) for g in GROUPS])
    return rows


def chart(results, path):
    """Three panels: wall times of the 80-attachment phase, p50/p99 of
    the API calls idle and under 16 attaches, CPU share per group and
    phase."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16, 5))
    burst = results.get("burst") or {}
    names = ["boot", "create", "attach-all", "detach-all"]
    vals = [burst.get(k) or 0 for k in ("boot_wall", "create_wall",
                                         "attach_wall", "detach_wall")]
    axes[0].bar(names, vals, color=["#999", "#999", "#1f77b4", "#ff7f0e"])
    axes[0].set_ylabel("seconds")
    axes[0].set_title("%s servers x %s volumes at once (%s errors)" % (
        burst.get("servers", "?"), burst.get("per_server", "?"),
        burst.get("errors", "?")))
    samples = results.get("latency") or {}
    calls = sorted({c for c, _ in samples})
    conds = sorted({c for _, c in samples}, key=lambda c: c != "idle")
    width = 0.8 / max(1, 2 * len(conds))
    for i, cond in enumerate(conds):
        for j, pct in enumerate((50, 99)):
            ys = [(percentile(samples.get((c, cond), []), pct) or 0) * 1000
                  for c in calls]
            xs = [k + (i * 2 + j - len(conds) + 0.5) * width
                  for k in range(len(calls))]
            axes[1].bar(xs, ys, width, label="%s p%d" % (cond, pct))
    axes[1].set_xticks(range(len(calls)))
    axes[1].set_xticklabels(calls, rotation=15, fontsize=8)
    axes[1].set_ylabel("ms")
    axes[1].set_title("API latency, %s volumes" % results.get("volumes", "?"))
    if samples:
        axes[1].legend(fontsize=8)
    summary = results.get("cpu") or {}
    phases = list(summary)
    bottom = [0.0] * len(phases)
    for group in GROUPS:
        ys = [summary[p]["groups"].get(group, 0) * 100 for p in phases]
        if not any(y >= 0.5 for y in ys):
            continue
        axes[2].bar(phases, ys, bottom=bottom, label=group)
        bottom = [b + y for b, y in zip(bottom, ys, strict=True)]
    axes[2].set_ylim(0, 100)
    axes[2].set_ylabel("%% of all %d cores" % (os.cpu_count() or 1))
    axes[2].set_title("CPU by process group")
    axes[2].tick_params(axis="x", labelsize=7, labelrotation=25)
    axes[2].legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
