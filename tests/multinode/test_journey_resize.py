"""``tools/journey.py --resize`` as a user types it (a new root login
shell, from the repository) on the two-host lab: the demo server, a
volume attached and written, resized to m1.micro and confirmed, resized
back and reverted, resized back and confirmed. Each ledger says what the
move did: while it runs the volume is parked (one attachment,
``reserved``, no connector, tgt's ACL empty); at VERIFY_RESIZE one
attachment, on the destination, the ACL names only that host, the guest
has the new flavor's memory and reads what it wrote before; after the
revert the same on the host the revert went back to; the lab ends on
the server's original flavor."""

import re

from tests.multinode import conftest as mn
from tests.support import login_shell

JOURNEY = "/opt/stack/venv/bin/python tools/journey.py --resize"


def _phase(out, start, end):
    return out.split("== " + start, 1)[1].split("== " + end, 1)[0]


def _memory(text):
    found = re.search(r"guest memory:\s+MemTotal: (\d+) kB", text)
    assert found, text
    return int(found.group(1))


def _one_attachment_on(text, host):
    assert len(re.findall(r"cinder attachment:", text)) == 1, text
    assert re.search(r"cinder attachment:\s+[0-9a-f]{8} status=attached "
                     r"host=%s\n" % host, text), text
    assert re.search(r"tgt ACL:\s+%s \(iqn\S+\)\n" % host, text), text
    assert "libvirt domain on:  %s (running)" % host in text, text


def test_journey_resize_confirm_and_revert(hosts):
    out = login_shell.checked(login_shell.script(JOURNEY, mn.REPO),
                              timeout=1200)
    assert "journey complete in " in out
    source = re.search(r"on compute host (\S+), flavor (\S+); new flavor "
                       r"84", out)
    assert source, out
    first, original = source.group(1), source.group(2)
    assert first in hosts

    before = _phase(out, "Attach a volume", "Resize to flavor 84:")
    wrote = re.search(r"wrote '([^']+)' to /dev/(vd[b-z])", before)
    assert wrote, before
    _one_attachment_on(before, first)

    during = _phase(out, "Resize to flavor 84:", "VERIFY_RESIZE")
    # The source parks the volume: its new attachment has no connector
    # and tgt exports the LUN to nobody until the destination updates
    # it. The window is short (a cast and an update), so it is checked
    # over the four move timelines, not each.
    parked = re.findall(r"[0-9a-f]{8}/reserved/-/conn=no; ACL none$", out,
                        re.M)
    assert parked, out
    assert re.search(r"server VERIFY_RESIZE/-\s+migration finished\s+"
                     r"attachments [0-9a-f]{8}/attached/\S+/conn=yes; "
                     r"ACL \S+$", during, re.M), during

    verify = _phase(out, "VERIFY_RESIZE", "Confirm the resize")
    moved = re.search(r"migration \d+: finished, (\S+) -> (\S+)", verify)
    assert moved and moved.group(1) == first, verify
    dest = moved.group(2)
    assert "server:             VERIFY_RESIZE, flavor m1.micro, host %s" \
        % dest in verify
    _one_attachment_on(verify, dest)
    assert _memory(verify) > _memory(before)
    assert "read back on %s: '%s'" % (dest, wrote.group(1)) in verify

    confirmed = _phase(out, "Confirm the resize", "Resize back to flavor")
    assert "server:             ACTIVE, flavor m1.micro, host %s" % dest \
        in confirmed
    _one_attachment_on(confirmed, dest)

    reverting = _phase(out, "Revert that resize", "Reverted:")
    assert re.search(r"server ACTIVE/-\s+migration reverted\s+attachments "
                     r"[0-9a-f]{8}/attached/%s/conn=yes; ACL %s$" % (
                         dest, dest), reverting, re.M), reverting
    reverted = _phase(out, "Reverted:", "Resize to flavor %s and confirm"
                      % original)
    assert "server:             ACTIVE, flavor m1.micro, host %s" % dest \
        in reverted
    _one_attachment_on(reverted, dest)
    assert _memory(reverted) == _memory(verify)
    assert "read back on %s: '%s'" % (dest, wrote.group(1)) in reverted

    last = _phase(out, "Resize to flavor %s and confirm" % original,
                  "Clean up")
    assert _memory(last) == _memory(before)
    assert re.search(r"server [0-9a-f]{8} has flavor \S+ again", last)
    assert "is gone" in out.split("== Clean up", 1)[1]
