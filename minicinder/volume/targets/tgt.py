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

Every command goes through the injected ``execute`` with an argv list:
in the service, :func:`minicinder.volume.targets.tgtd_socket.execute`, which
sends the request tgtadm would to tgtd's management socket without
starting a process; ``ministack.executor.execute`` runs the
real ``tgtadm`` the same argv asks for. The creation of a CHAP account
never takes argv: its password would show in ``/proc/<pid>/cmdline``,
so it is always a socket request of its own
(:func:`~minicinder.volume.targets.tgtd_socket.new_account`). Failures raise
:class:`ministack.exception.ProcessExecutionError` (a command),
:class:`TgtdError` (the socket) or :class:`UnexpectedOutput` (a ``show``
this module will not trust).

Which target belongs to which volume is minicinder's own record (the tid
and IQN in the volume's ``provider_location``); the ``show`` output is
only read to check that tgtd still agrees with it, by the strict parser
of ``tgt_show`` (whose ``parse_targets``, ``parse_target`` and
``UnexpectedOutput`` are re-exported here).
"""

import logging

from minicinder.volume.targets import iscsi_names
from minicinder.volume.targets import tgtd_socket
from minicinder.volume.targets.tgt_show import UnexpectedOutput  # noqa: F401 (re-exported)
from minicinder.volume.targets.tgt_show import parse_target  # noqa: F401 (re-exported)
from minicinder.volume.targets.tgt_show import parse_targets  # noqa: F401 (re-exported)
from ministack import exception
from ministack import executor

LOG = logging.getLogger(__name__)


class TgtdError(exception.MinistackException):
    msg_fmt = "%(reason)s"


class TgtAdm:
    """Create, inspect and delete iSCSI targets in the local tgtd."""

    def __init__(self, execute=executor.execute,
                 new_account=tgtd_socket.new_account):
        self._execute = execute
        self._new_account = new_account

    def _tgtadm(self, *args):
        out, _ = self._execute("tgtadm", "--lld", "iscsi", *args)
        return out

    # --- inspection ----------------------------------------------------------

    def _show(self):
        return self._tgtadm("--mode", "target", "--op", "show")

    def show_targets(self):
        """All targets, parsed by :func:`parse_targets`."""
        return parse_targets(self._show())

    def find_target(self, iqn):
        """The target named ``iqn`` or None (:func:`parse_target`)."""
        return parse_target(self._show(), iqn=iqn)[0]

    def target_by_tid(self, tid):
        """The target with id ``tid`` or None (:func:`parse_target`)."""
        return parse_target(self._show(), tid=tid)[0]

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
        # One show: the target and the tids.
        target, tids = parse_target(self._show(), iqn=iqn)
        if target is None:
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

    def reopen_lun(self, tid, lun, backing_path):
        """Make tgtd re-read LUN ``lun``'s size (after its device grew).

        tgt learns a backing store's size when it opens it and answers
        READ CAPACITY from that; a grown device stays its old size to
        the initiators until the LUN reopens it. ``--params
        online=0,path=P`` does that in one management request (tgtd
        serves requests one at a time between I/O): offline, close,
        reopen ``P`` (the same device), size read, online again. ``path``
        alone is refused while the LUN is online.
        """
        LOG.info("Reopening LUN %s of tid %s on %s (new size)", lun, tid,
                 backing_path)
        self._tgtadm("--mode", "logicalunit", "--op", "update", "--tid",
                     tid, "--lun", lun, "--params",
                     "online=0,path=%s" % backing_path)

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
        # Not tgtadm: its --password would be readable in /proc/*/cmdline.
        try:
            self._new_account(user, password)
        except (OSError, ValueError, tgtd_socket.TgtdError) as exc:
            raise TgtdError(reason="creating CHAP account %s: %s"
                            % (user, exc))
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

        (``--initiator-name``: tgtadm's ``-I`` is an *address*.) Only a
        well-formed iSCSI name is bound: tgtd echoes it unescaped in
        ``--op show``, so a newline in it would forge a target line.
        """
        if not iscsi_names.is_valid(initiator):
            raise exception.InvalidInput(
                reason="%r is not an iSCSI initiator name" % initiator)
        LOG.info("Allowing %s on tid %s", initiator, tid)
        self._tgtadm("--mode", "target", "--op", "bind", "--tid", tid,
                     "--initiator-name", initiator)

    def unbind_initiator(self, iqn, initiator, tid=None):
        """Revoke ``initiator`` from target ``iqn`` (idempotent).

        The ACL entry must equal ``initiator`` exactly (no prefix or case
        folding). :param tid: the target id on record; the target is used
        only if tgtd lists ``iqn`` under that id.
        """
        target = self.find_target(iqn)
        if target is None or (tid is not None and target["tid"] != tid) \
                or initiator not in target["acls"]:
            return
        LOG.info("Revoking %s on %s", initiator, iqn)
        self._tgtadm("--mode", "target", "--op", "unbind",
                     "--tid", target["tid"], "--initiator-name", initiator)
