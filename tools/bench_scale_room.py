"""Room for the scale run: the volume group and host disk it needs, and
the Cinder volume quota it raises for the run and puts back."""

import os

import bench_attach
import bench_attach_probes as probes
from bench_attach_report import say


def check_room(args):
    """Refuse (SystemExit, with the fix) when the VG or the host disk
    cannot hold ``args.volumes`` 1 GiB volumes."""
    free = probes.vg_free_gib(bench_attach.VG)
    need = args.volumes
    if free + 0.01 < need:
        raise SystemExit(
            "VG %s has %.1f GiB free, the run needs %d (1 GiB volumes)."
            " Grow its sparse backing file, e.g.:\n  truncate -s +%dG "
            "/var/lib/ministack/%s-backing-file && losetup -c LOOP && "
            "pvresize --config 'global{activation=0}' LOOP\n(or "
            "VOLUME_BACKING_FILE_SIZE before stack.sh)" % (
                bench_attach.VG, free, need, need - int(free) + 8,
                bench_attach.VG))
    # Deleting a volume zeroes it (volume_clear = zero) by a discard of
    # its loop device, which punches holes in the VG's sparse backing
    # file: the run allocates only what it writes. (It used to be
    # blkdiscard -z, which allocated each deleted volume's GiB: 200
    # deletes filled the disk and left 60 volumes error_deleting.)
    st = os.statvfs(args.backing_dir)
    disk = st.f_bavail * st.f_frsize / 2 ** 30
    if disk < 10:
        raise SystemExit(
            "%s has %.0f GiB free; the run needs about 10 GiB of host "
            "disk (guest overlays, logs, the databases)" % (
                args.backing_dir, disk))


class VolumeQuota:
    """The project's volume quota, raised for the run and put back."""

    def __init__(self, cloud, project):
        self.cloud, self.project = cloud, project
        self.quota_before = None

    def raise_for(self, volumes):
        path = "/os-quota-sets/%s" % self.project
        quota = self.cloud.volume("GET", path + "?usage=True")
        if not quota.ok:
            raise SystemExit("cannot read the volume quota (%s): use an "
                             "admin cloud" % quota.status_code)
        vols = quota.json()["quota_set"]["volumes"]
        defaults = self.cloud.volume("GET", path + "/defaults").json()
        self.quota_before = (vols["limit"],
                             defaults["quota_set"]["volumes"])
        want = vols["in_use"] + vols["reserved"] + volumes + 8
        if vols["limit"] == -1 or vols["limit"] >= want:
            self.quota_before = None
            return
        resp = self.cloud.volume("PUT", path, {"quota_set": {
            "volumes": want}})
        if not resp.ok:
            self.quota_before = None
            raise SystemExit("cannot raise the volume quota to %d: %s %s" % (
                want, resp.status_code, resp.text[:300]))
        say("   volume quota of project %s raised %d -> %d for the run" % (
            self.project, vols["limit"], want))

    def restore(self):
        if self.quota_before is None:
            return
        limit, default = self.quota_before
        path = "/os-quota-sets/%s" % self.project
        if limit == default:
            resp = self.cloud.volume("DELETE", path)
        else:
            resp = self.cloud.volume("PUT", path, {"quota_set": {
                "volumes": limit}})
        say("   volume quota put back to %d (%s)" % (limit, resp.status_code))
        if resp.ok:
            self.quota_before = None
