"""``tools/journey.py --live-migrate`` as a user types it (a new root
login shell, from the repository) on the two-host lab: the demo server,
a volume attached and written, moves to the other host and back. Each
ledger says what the move did: while it runs the volume has two
attachments and tgt's ACL names both hosts; after it, one attachment,
on the new host, the ACL names only that host, the domain runs only
there, and the guest reads what it wrote before; the trace holds the
destination's second attachment and the source's delete."""

import re

from tests.multinode import conftest as mn
from tests.support import login_shell

JOURNEY = "/opt/stack/venv/bin/python tools/journey.py --live-migrate"


def _phase(out, start, end):
    return out.split("== " + start, 1)[1].split("== " + end, 1)[0]


def test_journey_live_migrate_there_and_back(hosts):
    first, second = list(hosts)
    out = login_shell.checked(login_shell.script(JOURNEY, mn.REPO),
                              timeout=900)
    assert "journey complete in " in out
    assert "on compute host %s; destination %s" % (first, second) in out

    before = _phase(out, "Attach a volume", "Live migrate")
    wrote = re.search(r"wrote '([^']+)' to /dev/(vd[b-z])", before)
    assert wrote, before
    assert re.search(r"cinder attachment:\s+[0-9a-f]{8} status=attached "
                     r"host=%s\n" % first, before), before
    assert "libvirt domain on:  %s (running)" % first in before

    during = _phase(out, "Live migrate", "Moved:")
    both = [line for line in during.splitlines()
            if "; ACL " in line and sorted(line.split("; ACL ", 1)[1].split(
                ", ")) == sorted([first, second])]
    assert both, during
    # the destination's attachment is made with its connector (attaching),
    # completed before the guest moves: two attached ones while it runs
    assert any(len(re.findall(r"[0-9a-f]{8}/attached/", line)) == 2
               for line in both), both
    assert re.search(r"migration completed\s+attachments [0-9a-f]{8}/"
                     r"attached/%s; ACL %s$" % (second, second), during,
                     re.M), during

    moved = _phase(out, "Moved:", "The live migration, hop by hop")
    assert len(re.findall(r"cinder attachment:", moved)) == 1, moved
    assert re.search(r"cinder attachment:\s+[0-9a-f]{8} status=attached "
                     r"host=%s\n" % second, moved), moved
    assert re.search(r"tgt ACL:\s+%s \(iqn\S+\)\n" % second, moved), moved
    assert "libvirt domain on:  %s (running)" % second in moved
    assert "read back on %s: '%s'" % (second, wrote.group(1)) in moved
    assert re.search(r"migration \d+: completed, %s -> %s" % (first,
                                                              second), moved)

    hops = _phase(out, "The live migration, hop by hop", "And back to")
    if "no trace:" not in hops:
        for name in ("os-migrateLive", "pre_live_migration",
                     "virDomainMigrateToURI3",
                     "POST /v3/{project}/attachments ",
                     "DELETE /v3/{project}/attachments/{id}",
                     "post_live_migration_at_destination"):
            assert name in hops, (name, hops)
    assert re.search(r"server [0-9a-f]{8} is on %s again" % first, out)
    assert "is gone" in out.split("== Clean up", 1)[1]
