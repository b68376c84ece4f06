#!/usr/bin/env python3
"""Scale run of the deployed stack: what breaks first on this machine.

``tools/bench_attach.py --scale`` (or this file on its own) prints tables
and writes a PNG chart; it measures, it asserts nothing:

* **burst**: ``--servers`` servers (default 10) booted from the lab image
  with the bench flavor (``--boot-batch`` at a time), ``--per-server``
  volumes each (default 8, so 80 attachments) created, then all
  attached at once from a thread pool and
  waited for (Cinder ``in-use`` and every serial visible in its guest),
  then all detached at once (``available`` and gone from the guests).
  Errors (non-2xx answers, ``error*`` states, timeouts) and duplicate
  device names are counted; attach-all and detach-all are timed.
* **API under load**: volumes are added up to ``--volumes`` (default
  200); ``--load-threads`` clients then call GET volume, GET server,
  list volumes (``/volumes/detail``) and list attachments (Cinder 3.44
  ``/attachments``) in a loop, first with nothing else running (idle),
  then while ``--attaches`` (16) attaches run at once, until those are
  in-use and visible; p50/p99/max of each call in each condition.
* **CPU**: /proc is sampled every 0.5 s through every phase, per process
  group (QEMU guests, the three daemons, MariaDB, tgtd, libvirt,
  Keystone, RabbitMQ, other), and each phase gets a verdict on the
  limiting resource (``bench_scale_stats.verdict``).

Hosts: on a lab of several compute hosts the scheduler places the servers
(fewest live instances first: they alternate between the hosts); each
guest is probed through its own host's libvirtd, and the report says how
many servers and attaches landed on each host. ``--host HOST`` pins them
all to one host instead.

Needs room: one 1 GiB LV per volume in the lab VG and a Cinder volume
quota of ``--volumes`` more than the project uses. The quota is raised
for the run (admin cloud) and put back afterwards; the VG is checked
first and the run refuses with the command that grows it.

Everything it creates is removed on exit, also on failure, Ctrl-C or
SIGTERM; then ``ministack-audit`` runs and its exit code is printed.

Usage (root, after devstack/stack.sh)::

    /opt/stack/venv/bin/python tools/bench_attach.py --scale
    /opt/stack/venv/bin/python tools/bench_scale.py --servers 2 \\
        --per-server 2 --volumes 10 --attaches 4      # a quick look
"""

import argparse
import concurrent.futures
import itertools
import os
import random
import signal
import subprocess
import sys
import threading
import time

import libvirt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_attach  # noqa: E402
import bench_attach_hosts as hosts  # noqa: E402
from bench_attach_report import say  # noqa: E402
import bench_scale_report  # noqa: E402
import bench_scale_room as room  # noqa: E402
import bench_scale_stats as stats  # noqa: E402
import journey  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CALLS = ("GET volume", "GET server", "list volumes", "list attachments")


class Scale(bench_attach.Bench):
    """bench_attach's Bench (boot, volumes, attach, settle, clean-up)
    plus the scale phases and the quota it raises."""

    def __init__(self, args, site=None):
        super().__init__(args, site or hosts.site(args.host, spread=True))
        self.quota = room.VolumeQuota(
            self.cloud, self.cloud._cloud.volume_url.rsplit("/", 1)[1])
        self.results = {"cpu": {}, "latency": {}, "api_errors": {}}
        if self.site.pinned:
            self.results["host"] = self.site.name

    def delete_volume(self, vid, wait=True):
        """Bench's delete, but a volume the driver failed to clear
        (``error_deleting``) is reset to ``error`` and deleted again
        (twice at most) instead of waited on until the time-out."""
        self.cloud.volume("DELETE", "/volumes/%s" % vid)
        if not wait:
            return
        retries = [2]

        def gone():
            status = self.volume_status(vid)
            if status == "error_deleting" and retries[0]:
                retries[0] -= 1
                say("   volume %s error_deleting: reset and delete again"
                    % vid)
                self.cloud.volume("POST", "/volumes/%s/action" % vid, {
                    "os-reset_status": {"status": "error"}})
                self.cloud.volume("DELETE", "/volumes/%s" % vid)
            return status == "gone"

        journey.wait("volume %s deleted" % vid, gone, timeout=600)
        self.volumes.discard(vid)

    def hosts_of(self, sids):
        """``{server id: compute host}`` of ``sids``."""
        return {sid: self.server_hosts.get(sid) for sid in sids}

    # --- phases --------------------------------------------------------

    def boot_servers(self):
        """``--servers`` ACTIVE servers with a guest agent, booted
        ``--boot-batch`` at a time. A build that fails (on a busy machine
        the compute's guest-agent wait runs out first) is recorded in
        results["boot_faults"], deleted and booted again, up to
        ``--boot-retries`` times in all."""
        sids, faults = [], self.results.setdefault("boot_faults", [])
        while len(sids) < self.args.servers:
            try:
                sids += self.boot(min(self.args.boot_batch,
                                      self.args.servers - len(sids)))
            except SystemExit as exc:
                if len(faults) >= self.args.boot_retries:
                    raise
                faults.append(str(exc))
                say("   boot failed, retrying: %s" % exc)
                for sid in [s for s in self.servers if s not in sids]:
                    self.cloud.compute("DELETE", "/servers/%s" % sid)
                    journey.wait("server %s deleted" % sid, lambda s=sid:
                                 self.cloud.compute("GET", "/servers/%s" % s)
                                 .status_code == 404)
                    del self.servers[sid]
                    self.server_hosts.pop(sid, None)
        return sids

    def create_many(self, names):
        """Volumes ``names``, 8 creates at a time, all ``available``;
        those whose create failed are made again (Bench.make_again)."""
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            vids = list(pool.map(self.create_volume, names))
        failed = self.wait_many(vids, "available", failed=True)
        return self.make_again(vids, names, sorted(
            vids.index(vid) for vid in failed))

    def wait_many(self, vids, status, failed=False):
        """Wait until every volume of ``vids`` has ``status``.

        :param failed: return the set of those that went ``error``
            instead of stopping at the first (the others are waited for
            all the same).
        """
        pending, went_error = set(vids), set()
        deadline = time.monotonic() + 600
        while pending and time.monotonic() < deadline:
            statuses = self.volume_statuses()
            for vid in list(pending):
                got = statuses.get(vid, "gone")
                if got == status:
                    pending.discard(vid)
                elif got == "error" and failed:
                    went_error.add(vid)
                    pending.discard(vid)
                elif got.startswith("error"):
                    raise SystemExit("volume %s went %s" % (vid, got))
            if pending:
                time.sleep(0.5)
        if pending:
            raise SystemExit("%d volumes never became %s" % (len(pending),
                                                            status))
        return went_error

    def attach_all(self, pairs, pool):
        """Attach ``pairs`` at once, settle; then detach at once, settle.
        Returns the figures."""
        out = {}
        start = time.perf_counter()
        answers = list(pool.map(lambda p: self.attach(*p), pairs))
        bad = [r.status_code for r, _ in answers if r.status_code != 200]
        errs, seen = self._settle(pairs, "in-use", True)
        out["attach_wall"] = time.perf_counter() - start
        out["attach_errors"] = len(bad) + errs
        out["attach_codes"] = sorted(set(bad))
        devices = {}
        for (sid, _), (_, dev) in zip(pairs, answers, strict=True):
            devices.setdefault(sid, []).append(dev)
        out["dup_devices"] = sum(len(d) - len(set(d))
                                 for d in devices.values()) + sum(
            len(n) - len(set(n)) for n in seen.values())
        return out

    def detach_all(self, pairs, pool):
        out = {}
        start = time.perf_counter()
        answers = list(pool.map(lambda p: self.detach(*p), pairs))
        bad = [r.status_code for r in answers if r.status_code != 202]
        errs, _ = self._settle(pairs, "available", False)
        out["detach_wall"] = time.perf_counter() - start
        out["detach_errors"] = len(bad) + errs
        out["detach_codes"] = sorted(set(bad))
        return out

    def burst(self, sids):
        a = self.args
        burst = {"servers": len(sids), "per_server": a.per_server}
        self.sampler.mark("create")
        start = time.perf_counter()
        vids = self.create_many(["s%d-%d" % (si, vi) for si in range(len(
            sids)) for vi in range(a.per_server)])
        burst["create_wall"] = time.perf_counter() - start
        it = iter(vids)
        pairs = [(sid, next(it)) for sid in sids for _ in range(a.per_server)]
        with concurrent.futures.ThreadPoolExecutor(len(pairs)) as pool:
            self.sampler.mark("attach %d" % len(pairs))
            burst.update(self.attach_all(pairs, pool))
            self.sampler.mark("detach %d" % len(pairs))
            burst.update(self.detach_all(pairs, pool))
        self.sampler.mark(None)
        burst["errors"] = burst["attach_errors"] + burst["detach_errors"]
        burst["hosts"] = hosts.per_host(self.hosts_of(sids), pairs)
        self.results["burst"] = burst
        return vids

    def load(self, sids, vids, cond, until):
        """``--load-threads`` clients cycling through CALLS until
        ``until`` is set; latencies into results["latency"]."""
        lat = self.results["latency"]
        errs = self.results["api_errors"]
        lock = threading.Lock()

        def client(n):
            rng = random.Random(n)
            for call in itertools.islice(itertools.cycle(CALLS), n, None):
                if until.is_set():
                    return
                if call == "GET volume":
                    do = ("volume", "GET", "/volumes/%s" % rng.choice(vids))
                elif call == "GET server":
                    do = ("compute", "GET", "/servers/%s" % rng.choice(sids))
                elif call == "list volumes":
                    do = ("volume", "GET", "/volumes/detail")
                else:
                    do = ("volume", "GET", "/attachments")
                t0 = time.perf_counter()
                resp = getattr(self.cloud, do[0])(do[1], do[2])
                took = time.perf_counter() - t0
                with lock:
                    lat.setdefault((call, cond), []).append(took)
                    if resp.status_code != 200:
                        errs[(call, cond)] = errs.get((call, cond), 0) + 1

        threads = [threading.Thread(target=client, args=(n,), daemon=True)
                   for n in range(self.args.load_threads)]
        for t in threads:
            t.start()
        return threads

    def api_under_load(self, sids, vids):
        a = self.args
        self.sampler.mark("create")
        have = len(vids)
        start = time.perf_counter()
        vids = vids + self.create_many(["l%d" % i for i in range(
            max(0, a.volumes - have))])
        self.results["volumes"] = len(vids)
        self.results["create_more_wall"] = time.perf_counter() - start
        listed = self.cloud.volume("GET", "/volumes/detail").json()["volumes"]
        self.results["listed"] = len(listed)
        self.sampler.mark("API idle")
        stop = threading.Event()
        threads = self.load(sids, vids, "idle", stop)
        time.sleep(a.idle_seconds)   # a sampling window, not a wait
        stop.set()
        for t in threads:
            t.join()
        pairs = [(sids[i % len(sids)], vids[i]) for i in range(a.attaches)]
        stop = threading.Event()
        self.sampler.mark("API + %d attaches" % len(pairs))
        threads = self.load(sids, vids, "%d attaches" % len(pairs), stop)
        with concurrent.futures.ThreadPoolExecutor(len(pairs)) as pool:
            try:
                under = self.attach_all(pairs, pool)
            finally:
                stop.set()
                for t in threads:
                    t.join()
            self.sampler.mark("detach %d" % len(pairs))
            under.update(self.detach_all(pairs, pool))
        self.sampler.mark(None)
        under["count"] = len(pairs)
        under["hosts"] = hosts.per_host(self.hosts_of(sids), pairs)
        self.results["under_load"] = under


def _interrupt(signum, frame):
    raise KeyboardInterrupt()


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="bench_attach.py --scale",
        description=__doc__.splitlines()[0])
    parser.add_argument("--scale", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--servers", type=int, default=10)
    parser.add_argument("--per-server", type=int, default=8)
    parser.add_argument("--volumes", type=int, default=200,
                        help="volumes that exist during the API phase")
    parser.add_argument("--attaches", type=int, default=16,
                        help="attaches running during the API phase")
    parser.add_argument("--load-threads", type=int, default=4)
    parser.add_argument("--boot-retries", type=int, default=4)
    parser.add_argument("--boot-batch", type=int, default=2,
                        help="servers booted at once: 10 TCG guests booting "
                        "together on 2 busy cores outlast the compute's "
                        "120 s guest-agent wait and fail the build")
    parser.add_argument("--idle-seconds", type=float, default=5.0)
    parser.add_argument("--host", default=None,
                        help="put every server on this compute host "
                        "(default: where the scheduler places them)")
    parser.add_argument("--cloud", default="ministack-admin",
                        help="an admin cloud: the volume quota is raised")
    parser.add_argument("--image", default="ministack-guest")
    parser.add_argument("--flavor", default="42")
    parser.add_argument("--backing-dir", default="/var/lib/ministack",
                        help="where the VG's backing file lives")
    parser.add_argument("--png", default=os.path.join(REPO, "docs",
                                                      "scale.png"))
    args = parser.parse_args(argv)
    args.volumes = max(args.volumes, args.servers * args.per_server)
    libvirt.registerErrorHandler(lambda *_: None, None)
    signal.signal(signal.SIGTERM, _interrupt)
    bench = Scale(args)
    room.check_room(args)
    bench.sampler = stats.CpuSampler()
    say("scale run %s: %d servers x %d volumes, then %d volumes + %d "
        "attaches under %d API clients; cloud %s; load %.2f on %d CPUs" % (
            bench_attach.RUN, args.servers, args.per_server, args.volumes,
            args.attaches, args.load_threads, args.cloud, os.getloadavg()[0],
            os.cpu_count()))
    say("   hosts: %s" % (bench.site.describe() if bench.site.pinned else
                          "placed by the scheduler over %s" % ", ".join(
                              bench.site.known or ["this machine's one"])))
    audit_rc = png = None
    bench.sampler.start()
    try:
        bench.quota.raise_for(args.volumes)
        say("== booting %d servers" % args.servers)
        bench.sampler.mark("boot")
        start = time.perf_counter()
        sids = bench.boot_servers()
        boot_wall = time.perf_counter() - start
        say("   servers per host: %s" % ", ".join(
            "%s %d" % (host, c["servers"]) for host, c in
            hosts.per_host(bench.hosts_of(sids)).items()))
        say("== %d x %d attach-all, detach-all" % (args.servers,
                                                   args.per_server))
        vids = bench.burst(sids)
        bench.results["burst"]["boot_wall"] = boot_wall
        say("   attach-all %s, detach-all %s, errors %d" % (
            stats.secs(bench.results["burst"]["attach_wall"]),
            stats.secs(bench.results["burst"]["detach_wall"]),
            bench.results["burst"]["errors"]))
        say("== API latency with %d volumes, idle then under %d attaches" % (
            args.volumes, args.attaches))
        bench.api_under_load(sids, vids)
    except KeyboardInterrupt:
        say("\ninterrupted: cleaning up")
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        say("== cleaning up")
        try:
            bench.sampler.mark("clean-up")
            bench.cleanup()
        finally:
            bench.quota.restore()
            bench.sampler.stop()
        bench.results["cpu"] = {k: v for k, v in bench.sampler.summary(
        ).items() if v["seconds"] > 0}
        bench.results["ours"] = bench_attach.ledger.our_residue(
            bench, bench_attach.VG, bench_attach.RUN)
        audit = subprocess.run(
            [os.path.join(os.path.dirname(sys.executable), "ministack-audit")],
            capture_output=True, text=True, check=False)
        audit_rc = audit.returncode
        if audit_rc:
            say(audit.stdout[-2000:])
            if not bench.results["ours"]:
                say("(none of the audit's findings is this run's: its "
                    "servers, volumes, LVs, targets and secrets are gone)")
        try:
            png = stats.chart(bench.results, args.png)
        except Exception as exc:   # the tables still matter
            say("chart failed: %s" % exc)
        bench_scale_report.report(bench.results, audit_rc, png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
