"""After a fault: every ledger, the audit, and which recovery path ran.

``ministack-fault watch`` waits until the fault has fired and its
recovery has finished, then prints what an operator would look at, each
with the command that shows the same (as ``tools/journey.py`` prints its
phases): the Cinder volume and its attachments, nova's
``block_device_mapping`` row, ``virsh domblklist`` of the server's
domain (on its own compute host's libvirtd), the server's events with
the fault's, and ``ministack-audit``. It ends with the seed's recovery
path that ran and each fact of the seed's end state, checked.

The ledgers are read as the audit reads them (``ledgers.read_all``: the
nova and cinder databases, every host's libvirtd, tgt, LVM); the volume,
attachments and events through the APIs, as the operator's commands do.
"""

import time

from minicompute.faults import catalog
from ministack import executor
from ministack.ledgers import checks as ledger_checks
from ministack.ledgers import snapshot as snapshot_mod
from ministack_audit import ledgers

BDM_QUERY = ("SELECT device_name, attachment_id, connection_info IS NOT NULL"
             " FROM %sblock_device_mapping WHERE volume_id='%s' AND "
             "deleted=0")


def sql_command(url, volume_id):
    """The seed's BDM query as the operator runs it on this database."""
    if url.startswith("sqlite"):
        path = url.split("///", 1)[1].split("?", 1)[0]
        return 'sqlite3 %s "%s"' % (path, BDM_QUERY % ("", volume_id))
    if url.startswith("mysql"):
        return 'mysql -e "%s"' % (BDM_QUERY % ("nova.", volume_id))
    return 'psql nova -c "%s"' % (BDM_QUERY % ("", volume_id))


class Observed:
    """The ledgers of one fired fault's volume and server, read once."""

    def __init__(self, fired, server, volume, attachments, events, snap,
                 divergences, uri, nova_db=""):
        self.fired = fired
        self.nova_db = nova_db
        self.fault = catalog.get(fired["name"])
        self.server, self.volume = server, volume
        self.attachments = [a for a in attachments
                            if a.get("instance") == server["id"]]
        self.events = events
        self.snap = snap
        self.uri = uri
        index = snapshot_mod.bdm_index(snap)
        self.bdm = index.get((server["id"], fired["volume_id"]))
        domain = snapshot_mod.domain_of(snap, server["id"]) or {}
        self.disks = {dev: d for dev, d in (domain.get("disks") or {}).items()
                      if d.get("serial") == fired["volume_id"]}
        self.domain = server.get("OS-EXT-SRV-ATTR:instance_name")
        words = (fired["volume_id"], server["id"], self.domain or "-")
        self.divergences = [d for d in divergences if any(
            w in "%s %s %s" % (d.subject, d.detail, d.data) for w in words)]
        self.elsewhere = len(divergences) - len(self.divergences)

    def action(self):
        """The instance action of the request the fault fired in."""
        for action, events in self.events:
            if action["request_id"] == self.fired.get("request_id"):
                return action, events
        return None, []

    def checks(self):
        """``[(ok, fact)]``: the seed's end state, fact by fact."""
        end, fault = self.fault.end, self.fault
        status = (self.volume or {}).get("status", "gone")
        out = [(status == end["volume"], "volume %s (the seed's end state: "
                "%s)" % (status, end["volume"]))]
        out.append((bool(self.attachments) == end["attachment"],
                    "%s Cinder attachment of the server" % (
                        "its" if self.attachments else "no")))
        bdm_ok = bool(self.bdm) == end["bdm"] and (
            not self.bdm or bool(self.bdm["connection_info"]))
        out.append((bdm_ok, "BDM %s" % (
            "%s with its connection_info" % self.bdm["device_name"]
            if self.bdm and self.bdm["connection_info"] else
            "%s without connection_info" % self.bdm["device_name"]
            if self.bdm else "gone")))
        whole = all(d["live"] and d["config"] for d in self.disks.values())
        out.append((bool(self.disks) == end["disk"] and whole,
                    "the volume's disk %s the guest%s" % (
                        "in" if self.disks else "not in",
                        "" if whole else " (not both live and persistent)")))
        action, events = self.action()
        if fault.name == catalog.RESERVE_TIMEOUT:
            out.append((action is None, "no instance action: the API never "
                        "got past the reservation"))
        else:
            event = next((e for e in events if e["event"] ==
                          "compute_%s_volume" % fault.operation), None)
            failed = bool(event and event["result"] == "Error" and
                          event.get("finish_time"))
            out.append((failed, "the %s's event (request %s) %s" % (
                fault.operation, self.fired.get("request_id"),
                "finished with Error: %s" % (event.get("details") or "")
                if failed else "has not failed yet")))
        if fault.name == catalog.DETACH_REFUSED:
            running = self.server.get("OS-EXT-STS:power_state") == 1
            out.append((running, "the guest runs again"))
        out.append((not self.divergences, "ministack-audit: %s" % (
            "no divergence about this volume or server"
            if not self.divergences else
            "%d divergence(s) about them" % len(self.divergences))))
        return out

    def clean(self):
        return all(ok for ok, _ in self.checks())


def observe(client, settings, fired):
    """Read every ledger of ``fired``'s volume and server."""
    server = client.server(fired["server_id"])
    try:
        volume = client.volume_show(fired["volume_id"])
    except Exception:      # deleted since: the report says "gone"
        volume = None
    attachments = client.attachments(fired["volume_id"]) if volume else []
    events = client.events(server["id"])
    snap = ledgers.read_all(settings)
    divergences = ledger_checks.run(snap)
    host = server.get("OS-EXT-SRV-ATTR:host")
    uri = next((h.libvirt_uri for h in settings.hosts if h.name == host),
               settings.libvirt_uri)
    return Observed(fired, server, volume, attachments, events, snap,
                    divergences, uri, settings.nova_db)


def latest_fired(status, volume_id=None, server_id=None):
    """The newest firing of ``status`` for the volume and/or server."""
    found = [f for f in status.get("fired") or []
             if (volume_id is None or f["volume_id"] == volume_id) and
             (server_id is None or f["server_id"] == server_id)]
    return found[-1] if found else None


def watch(client, settings, volume_id=None, server_id=None, timeout=600,
          interval=2, sleep=time.sleep, clock=time.monotonic, out=print):
    """Wait for a firing and a clean end state, then print the report.

    :returns: 0 when the end state is the seed's, 1 otherwise (or when
        no fault fired within ``timeout`` seconds).
    """
    deadline = clock() + timeout
    out("waiting for the fault to fire and its recovery to finish "
        "(at most %ss)..." % timeout)
    observed = None
    while True:
        fired = latest_fired(client.status(), volume_id, server_id)
        if fired is not None:
            observed = observe(client, settings, fired)
            if observed.clean():
                break
        if clock() >= deadline:
            break
        sleep(interval)
    if observed is None:
        out("no fault fired for %s within %ss: `ministack-fault status` "
            "shows what is armed" % (_what(volume_id, server_id), timeout))
        return 1
    render(observed, out)
    return 0 if observed.clean() else 1


def _what(volume_id, server_id):
    return " and ".join(p for p in (
        volume_id and "volume %s" % volume_id,
        server_id and "server %s" % server_id) if p) or "any volume"


def _heading(out, text):
    out("")
    out("== %s" % text)


def render(obs, out=print):
    fault, fired, vid = obs.fault, obs.fired, obs.fired["volume_id"]
    sid = obs.server["id"]
    _heading(out, "Fault %s fired: the seed's recovery path %d, \"%s\"" % (
        fault.name, fault.number, fault.path))
    by = fired.get("armed_by") or {}
    out("   fault %s, armed by user %s; fired on compute host %s at %s "
        "(request %s)" % (fired["id"], by.get("user_name") or
                          by.get("user_id"), fired["host"],
                          fired["fired_at"], fired.get("request_id")))
    out("   what failed: %s" % fault.step)
    _heading(out, "Every ledger, after the recovery")
    out("   $ openstack volume show %s -c status -c attachments" % vid)
    out("   cinder volume:      %s" % (
        "status=%s attachments=%s" % (obs.volume["status"], [
            a.get("server_id") for a in obs.volume.get("attachments", [])])
        if obs.volume else "gone"))
    out("   $ openstack --os-volume-api-version 3.44 volume attachment list "
        "--volume-id %s" % vid)
    for att in obs.attachments:
        out("   cinder attachment:  %s status=%s instance=%s" % (
            att["id"], att.get("status"), att.get("instance")))
    if not obs.attachments:
        out("   cinder attachment:  none for server %s" % sid)
    out("   $ %s" % sql_command(obs.nova_db, vid))
    out("   nova BDM:           %s" % (
        "%s attachment_id=%s connection_info=%s" % (
            obs.bdm["device_name"], obs.bdm["attachment_id"],
            "set" if obs.bdm["connection_info"] else "NULL")
        if obs.bdm else "no BDM row"))
    _domblklist(obs, out)
    out("   $ openstack server event list %s" % sid)
    for action, events in obs.events[:2]:
        out("   %-14s %s  %s" % (action["action"], action["request_id"],
                                 action.get("message") or "-"))
        for event in events:
            out("      %s  %s  %s" % (event["event"], event["result"],
                                      event.get("details") or ""))
    out("   $ ministack-audit")
    for div in obs.divergences:
        out("   %s: %s: %s" % (div.kind, div.subject, div.detail))
    out("   %s%s" % ("no divergence about this volume or server"
                     if not obs.divergences else "",
                     " (%d elsewhere in the lab)" % obs.elsewhere
                     if obs.elsewhere else ""))
    _heading(out, "Which recovery ran, and why the state is clean")
    out("   The seed's path %d, \"%s\": %s" % (fault.number, fault.path,
                                               fault.recovery))
    results = obs.checks()
    for ok, fact in results:
        out("   [%s] %s" % ("ok" if ok else "NOT", fact))
    out("   %s" % fault.clean)
    out("   %s" % ("clean: the seed's end state." if all(
        ok for ok, _ in results) else "NOT clean: see the facts above."))


def _domblklist(obs, out):
    if not obs.domain:
        out("   (the server has no domain name: not an admin's view?)")
        return
    shown = "virsh domblklist %s" % obs.domain if \
        obs.uri == "qemu:///system" else \
        "virsh -c '%s' domblklist %s" % (obs.uri, obs.domain)
    out("   $ %s" % shown)
    text, _ = executor.execute("virsh", "-c", obs.uri, "domblklist",
                               obs.domain, check_exit_code=False)
    for line in text.rstrip().splitlines():
        out("      " + line)
