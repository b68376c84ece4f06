"""The pure parts of the scale benchmark (tools/bench_scale_stats.py):
percentiles, process classification, the CPU summary, the
limiting-resource verdict, the tables and the chart."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "tools"))
import bench_scale_stats as stats  # noqa: E402


def test_percentile_nearest_rank():
    data = list(range(1, 101))        # 1..100
    assert stats.percentile(data, 50) == 50
    assert stats.percentile(data, 99) == 99
    assert stats.percentile(data, 100) == 100
    assert stats.percentile([7], 99) == 7
    assert stats.percentile([3, 1, 2], 50) == 2   # unsorted input


def test_percentile_of_nothing_is_none():
    assert stats.percentile([], 50) is None
    assert stats.percentile([None, None], 99) is None


@pytest.mark.parametrize("comm, cmdline, group", [
    ("qemu-system-x86", "/usr/bin/qemu-system-x86_64\0-name\0guest=i-1\0",
     "qemu"),
    ("miniapi", "/opt/stack/venv/bin/python\0/opt/stack/venv/bin/miniapi\0"
     "--config-file\0/etc/ministack/miniapi.conf\0", "miniapi"),
    # another helper's private minicinder is not the lab's
    ("minicinder", "/opt/stack/venv/bin/python\0/opt/stack/venv/bin/"
     "minicinder\0--config-file\0/tmp/x/minicinder.conf\0", "other"),
    ("python", "/opt/stack/venv/bin/python\0/opt/stack/venv/bin/minicompute"
     "\0--config-file\0/etc/ministack/minicompute.conf\0", "minicompute"),
    ("mariadbd", "mariadbd\0--datadir=/var/lib/mysql\0", "mariadbd"),
    ("tgtd", "/usr/sbin/tgtd\0-f\0", "tgtd"),
    ("virtqemud", "/usr/sbin/virtqemud\0", "libvirtd"),
    ("gunicorn", "/opt/stack/keystone-venv/bin/python3\0/opt/stack/"
     "keystone-venv/bin/gunicorn\0--name\0keystone\0", "keystone"),
    ("beam.smp", "/usr/lib/erlang/erts/bin/beam.smp\0-rabbit\0", "rabbitmq"),
    ("pytest", "/opt/stack/venv/bin/python\0/opt/stack/venv/bin/pytest\0",
     "other"),
])
def test_classify(comm, cmdline, group):
    assert stats.classify(comm, cmdline) == group


def test_process_name_names_the_script_an_interpreter_runs():
    assert stats.process_name(
        "python3", "/opt/stack/venv/bin/python\0-u\0/x/pytest\0-q\0") == \
        "pytest"
    assert stats.process_name("tgtd", "/usr/sbin/tgtd\0-f\0") == "tgtd"


def _acc(total, idle, iowait, procs):
    groups = {}
    for (_pid, group, _name), jiffies in procs.items():
        groups[group] = groups.get(group, 0) + jiffies
    return {"seconds": 10.0, "total": total, "idle": idle,
            "iowait": iowait, "peak_busy": 1 - idle / total,
            "groups": groups, "procs": procs}


def test_summary_shares_and_busiest_process():
    procs = {(1, "qemu", "qemu-system-x86"): 300,
             (2, "qemu", "qemu-system-x86"): 300,
             (3, "minicinder", "minicinder"): 200,
             (4, "other", "pytest"): 100}
    cpu = stats.summarize(_acc(1000, 80, 0, procs), ncpu=2)
    assert cpu["busy"] == pytest.approx(0.92)
    assert cpu["groups"]["qemu"] == pytest.approx(0.6)
    assert cpu["qemu_procs"] == 2
    assert cpu["top"]["pid"] == 1
    assert cpu["top"]["cores"] == pytest.approx(0.6)   # 300/1000 of 2 cores
    assert cpu["others"] == [("pytest", pytest.approx(0.1))]
    # 920 busy jiffies, 900 of them in sampled processes: the rest ran
    # in processes that came and went between two samples.
    assert cpu["groups"]["exited"] == pytest.approx(0.02)


def test_verdict_cpu_saturated_names_who_holds_it():
    procs = {(n, "qemu", "qemu-system-x86"): 70 for n in range(10)}
    procs[(99, "minicinder", "minicinder")] = 200
    cpu = stats.summarize(_acc(1000, 20, 0, procs), ncpu=2)
    text = stats.verdict(cpu)
    assert text.startswith("CPU: 2 cores at 98%")
    assert "in 10 qemu TCG guests" in text
    # qemu is 700 of 980 busy jiffies
    assert "71% in 10 qemu TCG guests" in text


def test_verdict_disk_when_iowait_dominates():
    cpu = stats.summarize(_acc(1000, 700, 400,
                               {(1, "mariadbd", "mariadbd"): 200}), ncpu=2)
    assert stats.verdict(cpu).startswith("disk: 40% iowait")


def test_verdict_one_thread_pegged_on_an_idle_machine():
    cpu = stats.summarize(_acc(1000, 500, 0,
                               {(7, "minicinder", "minicinder"): 470}),
                          ncpu=2)
    text = stats.verdict(cpu)
    assert text.startswith("one thread: minicinder (pid 7) at 94% of a core")


def test_verdict_nothing_saturated():
    cpu = stats.summarize(_acc(1000, 800, 0,
                               {(7, "miniapi", "miniapi"): 150}), ncpu=2)
    assert stats.verdict(cpu).startswith("nothing saturated: machine 20%")


def test_format_table_aligns_columns():
    text = stats.format_table([("GET volume", "12 ms"),
                               ("list attachments", "1234 ms")],
                              ("call", "p50"))
    lines = text.splitlines()
    assert lines[0] == "call                  p50"
    assert lines[1] == "----------------  -------"
    assert lines[2] == "GET volume          12 ms"
    assert lines[3] == "list attachments  1234 ms"


def test_latency_rows():
    rows = stats.latency_rows({("GET volume", "idle"): [0.010, 0.020, 0.030],
                               ("GET server", "idle"): []})
    assert rows == [("GET server", "idle", 0, "-", "-", "-"),
                    ("GET volume", "idle", 3, "20 ms", "30 ms", "30 ms")]


def test_chart_writes_a_png(tmp_path):
    cpu = stats.summarize(_acc(1000, 20, 0, {
        (1, "qemu", "qemu-system-x86"): 800}), ncpu=2)
    results = {"burst": {"servers": 10, "per_server": 8, "errors": 0,
                         "boot_wall": 60.0, "create_wall": 20.0,
                         "attach_wall": 30.0, "detach_wall": 25.0},
               "latency": {("GET volume", "idle"): [0.01, 0.02],
                           ("GET volume", "16 attaches"): [0.05, 0.2]},
               "volumes": 200, "cpu": {"attach 80": cpu}}
    path = stats.chart(results, str(tmp_path / "scale.png"))
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_sampler_reclassifies_a_process_that_execs(tmp_path, monkeypatch):
    """A qemu guest is first seen as libvirtd's fork (same pid, before
    its exec): once its comm changes it counts as qemu, not libvirtd."""
    proc = {"comm": "libvirtd", "cmdline": "libvirtd\0-d\0"}
    real_open = open

    def fake_open(path, *args, **kwargs):
        if path == "/proc/4242/comm":
            return real_open(_write(tmp_path, "comm", proc["comm"] + "\n"))
        if path == "/proc/4242/cmdline":
            return real_open(_write(tmp_path, "cmdline", proc["cmdline"]))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(stats.os, "listdir", lambda path: ["4242"])
    monkeypatch.setattr(stats, "_proc_jiffies", lambda pid: 0)
    monkeypatch.setattr("builtins.open", fake_open)
    sampler = stats.CpuSampler()
    sampler._snapshot()
    assert sampler._groups[4242][0] == "libvirtd"
    proc.update(comm="qemu-system-x86",
                cmdline="/usr/bin/qemu-system-x86_64\0-name\0guest=i-1\0")
    sampler._snapshot()
    assert sampler._groups[4242][0] == "qemu"


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_cpu_seconds_lines_in_core_seconds():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                    "tools"))
    import bench_attach_report as report
    cpu = stats.summarize(_acc(1000, 100, 0, {
        (1, "qemu", "qemu-system-x86"): 600,
        (2, "minicinder", "minicinder"): 300}), ncpu=2)
    [line] = report.cpu_seconds_lines({"stack attach-all": cpu})
    # 10 s on 2 cores = 20 core-s; 90% busy; qemu 60%, minicinder 30%.
    assert line == ("cpu stack attach-all: 10.0 s, machine 90% busy, "
                    "18.0 core-s: qemu 12.0, minicinder 6.0")
