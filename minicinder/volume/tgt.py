"""iSCSI targets in a running ``tgtd``, driven with ``tgtadm --lld iscsi``.

The adapter between minicinder's LVM driver and tgt. One target per
volume, named ``iqn.2010-10.org.openstack:volume-<id>``, with the volume's
block device as LUN 1 (LUN 0 is tgt's own controller LUN). Access is
controlled twice, as Cinder does:

* **CHAP**: an incoming account (``--mode account --op new``) bound to
  the target; an initiator must log in with that user and password.
* **ACL by initiator name** (``--op bind --initiator-name IQN``). Note
  tgt admits an initiator when *either* its address matches an
  ``--initiator-address`` rule *or* its name matches an
  ``--initiator-name`` rule, so binding the address ``ALL`` would open the
  target to every initiator name. This adapter only binds names.

Targets live in tgtd's memory: they vanish when tgtd stops, which is why
the driver re-creates exports at start-up (``ensure_export``).

Every command goes through the injected ``execute`` with an argv list.
Failures raise :class:`ministack.exception.ProcessExecutionError`.
"""

import logging

from ministack import executor

LOG = logging.getLogger(__name__)


def parse_targets(text):
    """Parse ``tgtadm --lld iscsi --mode target --op show``.

    :returns: one dict per target::

        {"tid": 1, "iqn": "iqn...", "state": "ready",
         "luns": [{"lun": 1, "type": "disk", "size": "1074 MB",
                   "backing_store": "/dev/loop3"}],
         "sessions": [{"initiator": "iqn...", "addresses": ["127.0.0.1"]}],
         "accounts": ["user"],        # incoming CHAP users
         "acls": ["iqn..."]}          # names and addresses, as tgt lists them

    The format is indentation based: targets at column 0, sections at 4,
    section entries at 8 and their fields at 12 (16 for a connection's
    address).
    """
    targets = []
    target = section = item = None
    for line in text.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        body = line.strip()
        if indent == 0 and body.startswith("Target "):
            tid, iqn = body[len("Target "):].split(": ", 1)
            target = {"tid": int(tid), "iqn": iqn, "state": None, "luns": [],
                      "sessions": [], "accounts": [], "acls": []}
            targets.append(target)
            section = item = None
        elif target is None:
            continue
        elif indent == 4:
            section = body.rstrip(":")
            item = None
        elif section == "System information" and body.startswith("State:"):
            target["state"] = body.split(":", 1)[1].strip()
        elif section == "LUN information":
            if indent == 8 and body.startswith("LUN:"):
                item = {"lun": int(body.split(":", 1)[1]), "type": None,
                        "size": None, "backing_store": None}
                target["luns"].append(item)
            elif item is not None and body.startswith("Type:"):
                item["type"] = body.split(":", 1)[1].strip()
            elif item is not None and body.startswith("Size:"):
                item["size"] = body.split(":", 1)[1].split(",")[0].strip()
            elif item is not None and body.startswith("Backing store path:"):
                path = body.split(":", 1)[1].strip()
                item["backing_store"] = None if path == "None" else path
        elif section == "I_T nexus information":
            if indent == 8 and body.startswith("I_T nexus:"):
                item = {"initiator": None, "addresses": []}
                target["sessions"].append(item)
            elif item is not None and body.startswith("Initiator:"):
                # "Initiator: iqn.1994-05.com.example:x alias: none"
                item["initiator"] = body.split()[1]
            elif item is not None and body.startswith("IP Address:"):
                item["addresses"].append(body.split(":", 1)[1].strip())
        elif section == "Account information" and indent == 8:
            if not body.endswith("(outgoing)"):
                target["accounts"].append(body)
        elif section == "ACL information" and indent == 8:
            target["acls"].append(body)
    return targets


class TgtAdm:
    """Create, inspect and delete iSCSI targets in the local tgtd."""

    def __init__(self, execute=executor.execute):
        self._execute = execute

    def _tgtadm(self, *args):
        out, _ = self._execute("tgtadm", "--lld", "iscsi", *args)
        return out

    # --- inspection ----------------------------------------------------------

    def show_targets(self):
        """All targets, parsed by :func:`parse_targets`."""
        return parse_targets(self._tgtadm("--mode", "target", "--op", "show"))

    def find_target(self, iqn):
        """The target named ``iqn`` or None."""
        for target in self.show_targets():
            if target["iqn"] == iqn:
                return target
        return None

    def list_accounts(self):
        """Every CHAP user tgtd knows (bound to a target or not)."""
        out = self._tgtadm("--mode", "account", "--op", "show")
        return [line.strip() for line in out.splitlines()[1:] if line.strip()]

    # --- targets -------------------------------------------------------------

    def create_target(self, iqn, backing_path, lun=1, chap=None,
                      initiators=()):
        """Export ``backing_path`` as LUN ``lun`` of target ``iqn``.

        Idempotent: an existing target with the same IQN is reused and
        only what is missing is added.

        :param chap: ``(user, password)`` of the incoming CHAP account, or
            None for no authentication.
        :param initiators: initiator names admitted by the ACL.
        :returns: the target id (tid).
        """
        target = self.find_target(iqn)
        if target is None:
            tids = [t["tid"] for t in self.show_targets()]
            tid = max(tids, default=0) + 1
            LOG.info("Creating target %s (tid %s)", iqn, tid)
            self._tgtadm("--mode", "target", "--op", "new", "--tid", tid,
                         "--targetname", iqn)
            target = {"tid": tid, "luns": [], "accounts": [], "acls": []}
        tid = target["tid"]
        if lun not in [entry["lun"] for entry in target["luns"]]:
            LOG.info("Adding LUN %s backed by %s to tid %s", lun,
                     backing_path, tid)
            self._tgtadm("--mode", "logicalunit", "--op", "new", "--tid", tid,
                         "--lun", lun, "--backing-store", backing_path)
        if chap:
            self.set_chap(tid, *chap, bound=target["accounts"])
        for initiator in initiators:
            if initiator not in target["acls"]:
                self.bind_initiator(tid, initiator)
        return tid

    def delete_target(self, iqn, delete_accounts=True):
        """Delete target ``iqn`` even with sessions open (missing: no-op).

        :param delete_accounts: also delete its CHAP accounts, unless
            another target still uses them.
        """
        target = self.find_target(iqn)
        if target is None:
            return
        LOG.info("Deleting target %s (tid %s)", iqn, target["tid"])
        self._tgtadm("--mode", "target", "--op", "delete", "--force",
                     "--tid", target["tid"])
        if delete_accounts:
            in_use = {user for other in self.show_targets()
                      for user in other["accounts"]}
            for user in target["accounts"]:
                if user not in in_use:
                    self.delete_account(user)

    # --- CHAP ----------------------------------------------------------------

    def set_chap(self, tid, user, password, bound=None):
        """Require CHAP ``user``/``password`` on target ``tid``.

        tgtd cannot change an account's password, so an existing account
        of that name is deleted and re-created.

        :param bound: users already bound to ``tid`` (saves a lookup).
        """
        if user in self.list_accounts():
            self.delete_account(user)
            bound = []
        self._tgtadm("--mode", "account", "--op", "new", "--user", user,
                     "--password", password)
        if bound is None or user not in bound:
            self._tgtadm("--mode", "account", "--op", "bind", "--tid", tid,
                         "--user", user)

    def delete_account(self, user):
        """Delete CHAP account ``user`` (tgtd unbinds it everywhere)."""
        if user in self.list_accounts():
            LOG.info("Deleting CHAP account %s", user)
            self._tgtadm("--mode", "account", "--op", "delete",
                         "--user", user)

    # --- ACL -----------------------------------------------------------------

    def bind_initiator(self, tid, initiator):
        """Admit initiator name ``initiator`` to target ``tid``.

        (``--initiator-name``: tgtadm's ``-I`` is an *address*.)
        """
        LOG.info("Allowing %s on tid %s", initiator, tid)
        self._tgtadm("--mode", "target", "--op", "bind", "--tid", tid,
                     "--initiator-name", initiator)

    def unbind_initiator(self, iqn, initiator):
        """Revoke ``initiator`` from target ``iqn`` (idempotent)."""
        target = self.find_target(iqn)
        if target is None or initiator not in target["acls"]:
            return
        LOG.info("Revoking %s on %s", initiator, iqn)
        self._tgtadm("--mode", "target", "--op", "unbind",
                     "--tid", target["tid"], "--initiator-name", initiator)
