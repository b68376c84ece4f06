#!/usr/bin/env python3
"""Measure attach/detach through the deployed stack against the raw floor.

Prints a table and writes a PNG chart (a measurement, never a timed test):

* **latency**, ``-n`` rounds: a fresh 1 GiB volume is attached to a bench
  server and detached again. Attach is timed from the POST returning (the
  API accepted it) to Cinder reporting ``in-use`` and to the disk's serial
  showing in the guest's ``/sys/block/vd*/serial``; detach from the DELETE
  returning to ``available`` and to the serial gone. The **raw floor** does
  the same kind of disk by hand in the same run: an LV, a tgt target with
  CHAP and an initiator ACL, a libvirt CHAP secret and ``attachDevice`` of
  the QEMU iSCSI network disk into a guest booted from the same image with
  the same flavor, then back (detach, target and secret removed). Fresh
  volume per round on both sides, so both include building the export.
* **concurrency**: ``-g`` servers x ``-v`` volumes attached at once, then
  detached at once: wall time, errors, duplicate device names; then the
  same ``g`` x ``v`` by hand at once into ``g`` floor guests (the
  concurrent floor, ``bench_attach_floor_concurrent``); ``--rounds``
  such pairs (5), and the ratios of the median wall times, stack / floor
  (the target: <= 1.5x).
* **soak**: ``-k`` attach/detach cycles of one volume after ``--warmup``
  uncounted ones, then what leaked: loop devices, LVs, targets, BDMs,
  attachments, domain disks, libvirt secrets, file descriptors and RSS of
  the three daemons (``bench_attach_soak``).

``--host HOST`` runs it all on that compute host of a lab of several
(``bench_attach_hosts``): the servers pinned there, the floors' guests and
CHAP secrets in its libvirtd, its initiator name, the lab's portal.
Without it, the first host, as before.

Everything it creates (servers, volumes, the floors' domains, LVs, targets
and secrets) is removed on exit, also on failure or Ctrl-C; then
``ministack-audit`` runs and its exit code is printed.

Usage (root, after devstack/stack.sh)::

    /opt/stack/venv/bin/python tools/bench_attach.py --quick
    /opt/stack/venv/bin/python tools/bench_attach.py -n 20 -g 4 -v 8 -k 200
    /opt/stack/venv/bin/python tools/bench_attach.py --quick --host compute2
"""

import argparse
import os
import signal
import subprocess
import sys
import time
import uuid

import libvirt

from minicompute.virt.libvirt import guest_agent

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_attach_concurrency as concurrency  # noqa: E402
import bench_attach_floor as floor  # noqa: E402
import bench_attach_floor_concurrent as floor_concurrent  # noqa: E402
import bench_attach_hosts as hosts  # noqa: E402
import bench_attach_ledger as ledger  # noqa: E402
import bench_attach_probes as probes  # noqa: E402
import bench_attach_report as report  # noqa: E402
from bench_attach_report import say  # noqa: E402
import bench_attach_soak as soak  # noqa: E402
import bench_attach_traced as traced  # noqa: E402
import journey  # noqa: E402

RUN = uuid.uuid4().hex[:8]
VG = "stack-volumes-lvmdriver-1"
POLL = 0.02
# Cinder's status is asked through its API every STATUS_POLL s only: each
# GET costs the stack's API, Keystone token check and database what a
# user watching would not add 50 times a second (the floor pays no such
# observer); those in-use / available times are thus up to STATUS_POLL
# late (more: the loop wakes every POLL). The clock of the targets reads
# the same status from Cinder's database row every ROW_POLL s
# (probes.CinderRows): the API answers from that row, so that is when a
# user would see it, less their own polling interval.
STATUS_POLL = 0.05
ROW_POLL = 0.005
TIMEOUT = 180
#: A volume whose create failed is made again this many times at most.
CREATE_RETRIES = 2


class VolumeError(SystemExit):
    """A volume went ``error`` while the bench waited for another
    status (a SystemExit, as every failed wait of the bench)."""


class Bench:
    """Everything the run creates, so :meth:`cleanup` can undo it."""

    def __init__(self, args, site=None):
        self.args = args
        #: the compute host it runs on (bench_attach_hosts.Site)
        self.site = site or hosts.site(getattr(args, "host", None))
        self.cloud = probes.ReauthCloud(args.cloud)
        # 2.74's host is the admin's: it creates pinned servers in the
        # bench's project (as tools/journey.py --host does).
        self.creator = self.cloud
        if self.site.pinned and args.cloud != hosts.ADMIN_CLOUD:
            self.creator = probes.ReauthCloud(
                hosts.ADMIN_CLOUD, project=hosts.cloud_project(args.cloud))
        self.conn = libvirt.open(self.site.libvirt_uri)
        self.conns = {self.site.name: self.conn}   # host -> libvirt
        self.nova_db = journey.nova_db_url()
        self.cinder_rows = probes.CinderRows(journey.cinder_db_url())
        self.template = journey.instance_name_template()
        self.servers = {}       # id -> domain name
        self.server_hosts = {}  # id -> compute host
        self.volumes = set()
        self.all_servers, self.all_volumes = set(), set()
        initiator = self.site.floor_initiator(RUN)
        self.floor = floor.Floor(self.conn, VG, RUN,
                                 portal=self.site.portal,
                                 initiator=initiator)
        self.concurrent_floor = floor_concurrent.ConcurrentFloor(
            self.conn, VG, RUN, uri=self.site.libvirt_uri,
            portal=self.site.portal, initiator=initiator)
        self.results = {"host": self.site.name}

    # --- API helpers ---------------------------------------------------

    def boot(self, count):
        ids = []
        for i in range(count):
            body = {"server": {"name": "bench-attach-%s-%d" % (RUN, i),
                               "imageRef": self.args.image,
                               "flavorRef": self.args.flavor,
                               "networks": "none"}}
            if self.site.pinned:
                body["server"]["host"] = self.site.name
            sid = journey.check(self.creator.compute("POST", "/servers",
                                                     body),
                                202)["server"]["id"]
            self.servers[sid] = None
            self.all_servers.add(sid)
            ids.append(sid)
        for sid in ids:
            journey.wait("server %s ACTIVE" % sid, lambda s=sid: self._active(
                s), timeout=300)
            host, name = hosts.placement(self.nova_db, sid, self.template)
            if self.site.pinned and host != self.site.name:
                raise SystemExit("server %s is on %s, not on %s" % (
                    sid, host, self.site.name))
            self.server_hosts[sid] = host
            self.servers[sid] = name
            guest_agent.wait_for_agent(self.domain(sid), timeout=120)
        return ids

    def _active(self, sid):
        server = journey.check(self.cloud.compute("GET", "/servers/%s" % sid),
                               200)["server"]
        if server["status"] == "ERROR":
            raise SystemExit("server %s failed: %s" % (sid,
                                                       server.get("fault")))
        return server["status"] == "ACTIVE"

    def conn_of(self, host):
        """A connection to ``host``'s libvirtd (opened once)."""
        if host not in self.conns:
            self.conns[host] = libvirt.open(self.site.uri_of(host))
        return self.conns[host]

    def domain(self, sid):
        """The server's domain, through its own host's libvirtd."""
        return self.conn_of(self.server_hosts[sid]).lookupByName(
            self.servers[sid])

    def create_volume(self, name):
        vid = journey.check(self.cloud.volume("POST", "/volumes", {"volume": {
            "size": 1, "name": "bench-attach-%s-%s" % (RUN, name)}}),
            202)["volume"]["id"]
        self.volumes.add(vid)
        self.all_volumes.add(vid)
        return vid

    def volume_status(self, vid):
        resp = self.cloud.volume("GET", "/volumes/%s" % vid)
        return resp.json()["volume"]["status"] if resp.ok else "gone"

    def volume_statuses(self):
        """``{volume id: status}`` of every volume of the project, in one
        ``GET /volumes/detail`` (what ``openstack volume list`` asks):
        settling 32 volumes by a GET each kept minicinder busy serving
        the bench on this 2-core box, time the stack's own work then
        waited for."""
        statuses, marker = {}, None
        while True:
            path = "/volumes/detail?limit=1000" + (
                "&marker=%s" % marker if marker else "")
            resp = self.cloud.volume("GET", path)
            resp.raise_for_status()
            page = resp.json()["volumes"]
            statuses.update((v["id"], v["status"]) for v in page)
            if not page or "volumes_links" not in resp.json():
                return statuses
            marker = page[-1]["id"]

    def wait_status(self, vid, want, timeout=TIMEOUT):
        """Wait for ``want``; a volume that went ``error`` (its create
        failed) stops the wait at once (:class:`VolumeError`) instead of
        at the time-out."""
        def reached():
            status = self.volume_status(vid)
            if status == "error" and want != "error":
                raise VolumeError("volume %s went error waiting for %s "
                                  "(minicinder's log says why)" % (vid,
                                                                  want))
            return status == want
        journey.wait("volume %s %s" % (vid, want), reached, timeout)

    def create_volumes(self, names):
        """Volumes ``names``, all created, then each waited for until
        ``available``; those whose create failed are made again
        (:meth:`make_again`)."""
        vids = [self.create_volume(name) for name in names]
        failed = []
        for i, vid in enumerate(vids):
            try:
                self.wait_status(vid, "available")
            except VolumeError:
                failed.append(i)
        return self.make_again(vids, names, failed)

    def make_again(self, vids, names, failed, retries=CREATE_RETRIES):
        """The volumes of ``vids`` at the indexes ``failed`` went
        ``error`` (their create failed): each is deleted and created
        again, one at a time, waited for until ``available``, up to
        ``retries`` times; said, and counted in results["create_retries"].
        The volumes exist before anything is timed, and a failed create
        is for minicinder's log to explain, not the attach's figures.
        Returns ``vids`` with the new ids."""
        if not failed:
            return vids
        say("   note: %d volume create(s) went error (%s): deleted and "
            "made again, one at a time" % (len(failed), ", ".join(
                vids[i] for i in failed)))
        self.results["create_retries"] = self.results.get(
            "create_retries", 0) + len(failed)
        for i in failed:
            for attempt in range(1, retries + 1):
                self.delete_volume(vids[i])
                vids[i] = self.create_volume(names[i])
                try:
                    self.wait_status(vids[i], "available")
                    break
                except VolumeError:
                    self.results["create_retries"] += 1
                    if attempt == retries:
                        raise
        return vids

    def delete_volume(self, vid, wait=True):
        self.cloud.volume("DELETE", "/volumes/%s" % vid)
        if wait:
            journey.wait("volume %s deleted" % vid,
                         lambda: self.volume_status(vid) == "gone")
            self.volumes.discard(vid)

    def attach(self, sid, vid, headers=None):
        resp = self.cloud.compute(
            "POST", "/servers/%s/os-volume_attachments" % sid,
            {"volumeAttachment": {"volumeId": vid}}, headers=headers)
        return resp, (resp.json()["volumeAttachment"]["device"]
                      if resp.status_code == 200 else None)

    def detach(self, sid, vid, headers=None):
        return self.cloud.compute(
            "DELETE", "/servers/%s/os-volume_attachments/%s" % (sid, vid),
            headers=headers)

    def watch(self, vid, status, waiter, t0):
        """Seconds from ``t0`` to Cinder's ``status`` in its database row,
        to the same status through the API, and to the guest waiter
        finishing (each None if it never came)."""
        to_row = to_api = to_guest = None
        deadline = time.monotonic() + TIMEOUT
        asked_api = asked_guest = 0.0
        while time.monotonic() < deadline and None in (to_row, to_api,
                                                       to_guest):
            now = time.monotonic()
            if to_row is None and self.cinder_rows.status(vid) == status:
                to_row = time.perf_counter() - t0
            if to_api is None and now - asked_api >= STATUS_POLL:
                asked_api = now
                if self.volume_status(vid) == status:
                    to_api = time.perf_counter() - t0
            if to_guest is None and now - asked_guest >= POLL:
                asked_guest = now
                if waiter.done():
                    to_guest = waiter.finished_at - t0
            if None in (to_row, to_api, to_guest):
                time.sleep(ROW_POLL if to_row is None else POLL)
        return to_row, to_api, to_guest

    # --- phases --------------------------------------------------------

    def stack_round(self, sid, dom, name, trace_headers=None):
        """Attach and detach a fresh volume through the API, timed;
        ``trace_headers()`` gives each request new osprofiler headers."""
        traces = []

        def headers():
            if not trace_headers:
                return None
            trace_id, found = trace_headers()
            traces.append(trace_id)
            return found
        vid = self.create_volume(name)
        self.wait_status(vid, "available")
        serial, values = vid[:20], {}
        waiter = probes.GuestWaiter(dom, serial, present=True)
        start = time.perf_counter()
        resp, _ = self.attach(sid, vid, headers())
        t0 = time.perf_counter()
        journey.check(resp, 200)
        values["post_attach"] = t0 - start
        (values["api_in_use"], values["api_in_use_polled"],
         values["api_visible"]) = self.watch(vid, "in-use", waiter, t0)
        waiter = probes.GuestWaiter(dom, serial, present=False)
        start = time.perf_counter()
        resp = self.detach(sid, vid, headers())
        t0 = time.perf_counter()
        journey.check(resp, 202)
        values["post_detach"] = t0 - start
        (values["api_available"], values["api_available_polled"],
         values["api_gone"]) = self.watch(vid, "available", waiter, t0)
        self.delete_volume(vid)
        if traces:
            values["traces"] = traces   # [attach's, detach's]
        return values

    def latency(self, sid):
        rows = {k: [] for k in ("post_attach", "api_in_use",
                                "api_in_use_polled", "api_visible",
                                "post_detach", "api_available",
                                "api_available_polled", "api_gone",
                                "floor_attached", "floor_visible",
                                "floor_gone", "floor_undone")}
        dom = self.domain(sid)
        fdom = self.floor.boot(self.args.image_record, self.args.memory_mb,
                               self.args.virt_type)
        tracing = traced.tracing(self.args)
        for i in range(self.args.n):
            values = self.stack_round(sid, dom, "lat%d" % i)
            for key, value in values.items():
                rows[key].append(value)
            visible, gone = values["api_visible"], values["api_gone"]
            if tracing is not None:      # same round, traced: same noise
                traced.record(rows, self.stack_round(
                    sid, dom, "trc%d" % i, tracing.headers))
            for key, value in zip(("floor_attached", "floor_visible",
                                   "floor_gone", "floor_undone"),
                                  self.floor.round(fdom, i), strict=True):
                rows[key].append(value)
            say("   round %2d: api attach %s / detach %s; floor %s / %s" % (
                i + 1, report.ms(visible), report.ms(gone),
                report.ms(rows["floor_visible"][-1]),
                report.ms(rows["floor_gone"][-1])))
        self.floor.shutdown()
        self.results["latency"] = rows
        if tracing is not None:
            traced.report(rows)
            traced.hop_report(tracing, rows)

    def _settle(self, pairs, status, present):
        """Wait until every volume has ``status`` in Cinder, then until
        every guest shows (or no longer shows) its serials; returns
        (errors, {server: guest device names of our serials}).

        Cinder first, from its database rows every ROW_POLL * 10 s
        (probes.CinderRows): a GET per volume, or even one volume list
        every 0.25 s (~7 ms of minicinder's CPU per attach), and guest
        probes (each a process started in a TCG guest) all along the
        phase would be the bench's load on this 2-core box, not the
        stack's. The guests are then probed as the concurrent floor
        probes its own once its calls have returned."""
        deadline = time.monotonic() + TIMEOUT
        pending = {vid for _, vid in pairs}
        errors, seen = 0, {}
        while pending and time.monotonic() < deadline:
            statuses = self.cinder_rows.statuses(pending)
            for vid in list(pending):
                got = statuses.get(vid, "gone")
                if got == status:
                    pending.discard(vid)
                elif got in ("error", "error_attaching", "error_detaching",
                             "gone"):
                    errors += 1
                    pending.discard(vid)
            if pending:
                time.sleep(ROW_POLL * 10)
        errors += len(pending)
        deadline = time.monotonic() + TIMEOUT
        for sid in {sid for sid, _ in pairs}:
            want = {vid[:20] for s, vid in pairs if s == sid}
            while True:
                disks = probes.guest_serials(self.domain(sid))
                ours = {dev: ser for dev, ser in disks if ser in want}
                done = set(ours.values()) == want if present else not ours
                if done:
                    seen[sid] = [d for d, s in disks if s in want]
                    break
                if time.monotonic() > deadline:
                    errors += 1
                    break
                time.sleep(0.2)
        return errors, seen

    # --- clean-up ------------------------------------------------------

    def cleanup(self):
        for vid in list(self.volumes):
            try:
                probes.settle_volume(self, None, vid)
                self.delete_volume(vid, wait=False)
            except Exception as exc:   # keep cleaning the rest
                say("   cleanup: volume %s: %s" % (vid, exc))
        for vid in list(self.volumes):
            try:
                self.delete_volume(vid)
            except BaseException as exc:
                say("   cleanup: volume %s not deleted: %s" % (vid, exc))
        for sid in list(self.servers):
            self.cloud.compute("DELETE", "/servers/%s" % sid)
        for sid in list(self.servers):
            try:
                journey.wait("server %s deleted" % sid, lambda s=sid:
                             self.cloud.compute("GET", "/servers/%s" % s)
                             .status_code == 404)
                del self.servers[sid]
            except BaseException as exc:
                say("   cleanup: server %s not deleted: %s" % (sid, exc))
        self.floor.cleanup()
        self.concurrent_floor.cleanup()
        self.cinder_rows.close()


def _interrupt(signum, frame):
    # SIGTERM cleans up the same way as Ctrl-C.
    raise KeyboardInterrupt()


def main(argv=None):
    if "--scale" in (sys.argv[1:] if argv is None else argv):
        import bench_scale  # the scale run: its own options and phases
        return bench_scale.main(argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=20, help="latency rounds")
    parser.add_argument("-g", type=int, default=4, help="servers at once")
    parser.add_argument("-v", type=int, default=8,
                        help="volumes per server at once")
    parser.add_argument("-k", type=int, default=200, help="soak cycles")
    parser.add_argument("--rounds", type=int, default=5,
                        help="concurrency rounds (stack and floor each); "
                        "the ratios are of the median walls")
    parser.add_argument("--warmup", type=int, default=20,
                        help="soak cycles run before the ledgers are read")
    parser.add_argument("--memtrace", action="store_true",
                        help="SIGUSR2 the daemons after the warm-up and "
                        "after the soak (see ministack.memtrace)")
    parser.add_argument("--scale", action="store_true", help="the scale "
                        "run instead (tools/bench_scale.py, own options)")
    parser.add_argument("--traced", action="store_true",
                        help="each latency round also traced (osprofiler): "
                        "attach/detach with tracing off and on")
    parser.add_argument("--quick", action="store_true",
                        help="short run: N=3, 2x2, K=5")
    parser.add_argument("--cloud", default="ministack")
    parser.add_argument("--image", default="ministack-guest")
    parser.add_argument("--flavor", default="42")
    parser.add_argument("--png", default="/tmp/bench_attach.png")
    parser.add_argument("--skip", action="append", default=[],
                        choices=("latency", "concurrency", "soak"))
    parser.add_argument("--host", default=None,
                        help="the compute host to run on (servers pinned "
                        "there by the admin, the floors in its libvirtd "
                        "as its initiator); default: the first host")
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.g, args.v, args.k, args.warmup = 3, 2, 2, 5, 2
        args.rounds = 1
    site = hosts.site(args.host)
    probes.describe_guest(args, site)
    # The agent is polled while guests boot: libvirt's default handler
    # would print every expected "not connected" to stderr.
    libvirt.registerErrorHandler(lambda *_: None, None)
    signal.signal(signal.SIGTERM, _interrupt)
    bench = Bench(args, site)
    say("bench run %s: N=%d, %dx%d, K=%d, cloud %s; load %.2f on %d CPUs" % (
        RUN, args.n, args.g, args.v, args.k, args.cloud, os.getloadavg()[0],
        os.cpu_count()))
    say("   on " + site.describe())
    audit_rc = png = None
    baseline = ledger.leak_snapshot(bench, VG)
    try:
        say("== booting %d servers" % max(1, args.g))
        sids = bench.boot(max(1, args.g))
        if "latency" not in args.skip:
            say("== latency, %d rounds (stack, then floor, each round)"
                % args.n)
            bench.latency(sids[0])
        if "concurrency" not in args.skip:
            say("== concurrency")
            concurrency.run(bench, sids, VG)
        if "soak" not in args.skip:
            say("== soak, %d cycles after %d of warm-up" % (args.k,
                                                           args.warmup))
            bench.results["soak"] = soak.run(bench, sids[0], VG, args.k,
                                             args.warmup, args.memtrace)
    except KeyboardInterrupt:
        say("\ninterrupted: cleaning up")
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        say("== cleaning up")
        bench.cleanup()
        time.sleep(1)
        final = ledger.leak_snapshot(bench, VG)
        bench.results["residue"] = {k: final[k] - baseline[k]
                                    for k in baseline}
        bench.results["ours"] = ledger.our_residue(bench, VG, RUN)
        say("left of this run's own objects: %s" % (
            bench.results["ours"] or "nothing"))
        say("global counts vs start (other tests on this box move them "
            "too): %s" % bench.results["residue"])
        audit = subprocess.run(
            [os.path.join(os.path.dirname(sys.executable), "ministack-audit")],
            capture_output=True, text=True, check=False)
        audit_rc = audit.returncode
        if audit_rc:
            say(audit.stdout[-2000:])
        try:
            png = report.chart(bench.results, args.png)
        except Exception as exc:   # the table still matters
            say("chart failed: %s" % exc)
        report.report(bench.results, audit_rc, png)
    return 0


if __name__ == "__main__":
    sys.exit(main())

