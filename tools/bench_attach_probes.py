"""What tools/bench_attach.py measures with, apart from the REST calls.

* :class:`GuestWaiter`: a loop *inside* the guest (started through the
  QEMU guest agent before the request) that exits when a disk serial
  appears in, or leaves, ``/sys/block/vd*/serial``. Polling from the host
  instead would cost two agent round trips per probe; here the host only
  polls ``guest-exec-status``, so the resolution is ~20 ms plus one agent
  round trip, the same for the stack and for the floor.
* :func:`guest_serials`: the guest's virtio disks and their serials.
* :class:`ReauthCloud`: the REST client, re-authenticating when a long
  soak outlives its token.
* :func:`describe_guest`, :func:`vg_free_gib`, :func:`settle_volume`:
  what the guest is made of, what fits in the VG, and the clean-up of a
  volume left attached by a failure.

The raw floor is in ``bench_attach_floor``, the leak ledgers in
``bench_attach_ledger``, the tables and the chart in
``bench_attach_report``.
"""

import os
import time

import sqlalchemy as sa

import journey
from minicompute.virt.libvirt import guest_agent
from ministack import executor
from ministack import images

STATE_DIR = "/var/lib/ministack"
IMAGES = os.path.join(STATE_DIR, "images")

# sh script run in the guest: $1 serial, $2 present|absent, $3 max polls.
# Builtins only (read, test) apart from sleep: a fork per probe is slow
# under TCG.
WAIT_SCRIPT = r"""
n=0
while [ $n -lt "$3" ]; do
  found=absent
  for f in /sys/block/vd*/serial; do
    [ -r "$f" ] || continue
    s=
    read -r s < "$f"   # no trailing newline: non-zero, but s is set
    [ "$s" = "$1" ] && found=present && break
  done
  [ $found = "$2" ] && exit 0
  n=$((n+1))
  sleep 0.02
done
exit 2
"""


class ReauthCloud:
    """journey.Cloud that takes a new token on 401 (long soaks outlive
    one) and pools enough connections for the concurrent phase;
    ``project``: scoped to that project instead of the cloud's own (the
    admin pinning servers in the bench's project)."""

    def __init__(self, name, project=None):
        self.name, self.project = name, project
        self._login()

    def _login(self):
        import requests.adapters
        self._cloud = journey.Cloud.from_clouds_yaml(self.name,
                                                     project=self.project)
        adapter = requests.adapters.HTTPAdapter(pool_maxsize=64)
        self._cloud.http.mount("http://", adapter)

    def _call(self, kind, *args, **kwargs):
        resp = getattr(self._cloud, kind)(*args, **kwargs)
        if resp.status_code == 401:
            self._login()
            resp = getattr(self._cloud, kind)(*args, **kwargs)
        return resp

    def compute(self, *args, **kwargs):
        return self._call("compute", *args, **kwargs)

    def volume(self, *args, **kwargs):
        return self._call("volume", *args, **kwargs)


class CinderRows:
    """Cinder's volume status as its database row says, for the latency
    rounds' clock.

    The status a user polls through the API is this row; polling the API
    every few milliseconds would load the stack's API, keystone's token
    check and the database with an observer the floor does not pay for
    (its "target and secret gone" is the return of its own calls), and
    polling it every ``STATUS_POLL`` (50 ms) put up to 60 ms of the
    observer's own lag into the stack's figure. A primary-key SELECT on
    one kept connection costs the database a fraction of a millisecond.
    """

    def __init__(self, url):
        # Autocommit: each SELECT sees what committed since the last one
        # (MariaDB's REPEATABLE READ would keep showing the first read).
        self.engine = sa.create_engine(url, isolation_level="AUTOCOMMIT")
        self.conn = self.engine.connect()

    def status(self, volume_id):
        row = self.conn.execute(sa.text(
            "SELECT status FROM volumes WHERE id=:id"),
            {"id": volume_id}).first()
        return row[0] if row else "gone"

    def statuses(self, volume_ids):
        """``{volume id: status}`` of those that have a row."""
        if not volume_ids:
            return {}
        query = sa.text("SELECT id, status FROM volumes WHERE id IN :ids"
                        ).bindparams(sa.bindparam("ids", expanding=True))
        return dict(self.conn.execute(
            query, {"ids": sorted(volume_ids)}).all())

    def close(self):
        self.conn.close()
        self.engine.dispose()


class GuestWaiter:
    """Waits in the guest for ``serial`` to be present (or absent)."""

    def __init__(self, domain, serial, present, timeout=180):
        self.domain = domain
        self.finished_at = None
        self.exit_code = None
        self.pid = guest_agent.agent_command(domain, "guest-exec", {
            "path": "/bin/sh", "arg": [
                "-c", WAIT_SCRIPT, "sh", serial,
                "present" if present else "absent", str(int(timeout / .02))],
            "capture-output": True})["pid"]

    def done(self):
        if self.finished_at is None:
            status = guest_agent.agent_command(
                self.domain, "guest-exec-status", {"pid": self.pid})
            if status.get("exited"):
                self.finished_at = time.perf_counter()
                self.exit_code = status.get("exitcode")
                if self.exit_code:
                    raise SystemExit("guest waiter failed (exit %s)"
                                     % self.exit_code)
        return self.finished_at is not None

    def wait(self, timeout=180):
        deadline = time.monotonic() + timeout
        while not self.done():
            if time.monotonic() > deadline:
                raise SystemExit("guest waiter timed out")
            time.sleep(0.02)
        return self.finished_at


#: One shell and no other process per probe: ``$(cat ...)`` forked a
#: subshell and a cat per disk, and each process costs a TCG guest
#: about 10 ms of CPU (a probe of nine disks ~120 ms, now ~35). The
#: concurrent floor probes its guests every 0.2 s while its disks are
#: plugged, so a dear probe slowed the floor it was measuring.
GUEST_SERIALS_SCRIPT = ("for d in /sys/block/vd*; do s=; "
                        "read -r s < $d/serial 2>/dev/null; "
                        "echo ${d##*/} $s; done")


def guest_serials(domain):
    """``[(dev, serial), ...]`` of the guest's virtio disks."""
    rc, out, err = guest_agent.guest_exec(
        domain, ["/bin/sh", "-c", GUEST_SERIALS_SCRIPT], timeout=60,
        interval=0.05)
    return [tuple((line.split() + [""])[:2]) for line in out.splitlines()
            if line.strip()]


def describe_guest(args, site):
    """Fill in args.image_record, memory_mb and virt_type as nova sees
    them, so the floor's guest is the same kind as the stack's (the
    virt_type of the compute host ``site``, a bench_attach_hosts.Site,
    the bench runs on)."""
    args.image_record = next(
        (i for i in images.list_images(root=IMAGES)
         if args.image in (i["name"], i["id"])), None)
    if args.image_record is None:
        raise SystemExit("image %s is not registered under %s"
                         % (args.image, IMAGES))
    with sa.create_engine(journey.nova_db_url()).connect() as conn:
        row = conn.execute(sa.text(
            "SELECT memory_mb FROM flavors WHERE flavorid=:f"),
            {"f": args.flavor}).first()
    if row is None:
        raise SystemExit("flavor %s not found" % args.flavor)
    args.memory_mb = row[0]
    args.virt_type = site.virt_type


def vg_free_gib(vg):
    out, _ = executor.execute("vgs", "--config", "global{activation=0}",
                              "--noheadings", "--units", "b", "--nosuffix",
                              "-o", "vg_free", vg)
    return int(out.strip()) / 2 ** 30


def settle_volume(bench, server_id, volume_id, timeout=120):
    """Detach ``volume_id`` wherever it is attached and wait for
    ``available`` (best effort: used after failures and in clean-up)."""
    resp = bench.cloud.volume("GET", "/volumes/%s" % volume_id)
    if not resp.ok:
        return
    volume = resp.json()["volume"]
    servers = {a["server_id"] for a in volume["attachments"]}
    if server_id and volume["status"] in ("reserved", "attaching"):
        servers.add(server_id)
    deadline = time.monotonic() + timeout
    # An "error" volume (its create failed) is attached nowhere and
    # never becomes available: nothing to wait for.
    while volume["status"] not in ("available", "error") and \
            time.monotonic() < deadline:
        if volume["status"] in ("in-use", "reserved", "error_detaching"):
            for sid in servers:
                bench.detach(sid, volume_id)
        time.sleep(1)
        volume = bench.cloud.volume("GET", "/volumes/%s"
                                    % volume_id).json()["volume"]
