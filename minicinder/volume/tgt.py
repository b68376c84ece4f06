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
in the service, :func:`minicinder.volume.tgtd_socket.execute`, which
sends the request tgtadm would to tgtd's management socket without
starting a process (issue 16); ``ministack.executor.execute`` runs the
real ``tgtadm`` the same argv asks for. The creation of a CHAP account
never takes argv: its password would show in ``/proc/<pid>/cmdline``,
so it is always a socket request of its own
(:func:`~minicinder.volume.tgtd_socket.new_account`). Failures raise
:class:`ministack.exception.ProcessExecutionError` (a command),
:class:`TgtdError` (the socket) or :class:`UnexpectedOutput` (a ``show``
this module will not trust).

Which target belongs to which volume is minicinder's own record (the tid
and IQN in the volume's ``provider_location``); the ``show`` output is
only read to check that tgtd still agrees with it.
"""

import logging
import re

from minicinder.volume import iscsi_names
from minicinder.volume import tgtd_socket
from ministack import exception
from ministack import executor

LOG = logging.getLogger(__name__)

SECTIONS = ("System information", "I_T nexus information",
            "LUN information", "Account information", "ACL information")

_TARGET = re.compile(r"Target ([0-9]+): (\S+)\Z")
_FIELD = re.compile(r"([A-Za-z][A-Za-z0-9 _/-]*):(?: (.*))?\Z")
_SESSION = re.compile(r"I_T nexus: [0-9]+\Z")
_INITIATOR = re.compile(r"Initiator: (\S+) alias: (.*)\Z")
_LUN = re.compile(r"LUN: ([0-9]+)\Z")
_ACCOUNT = re.compile(r"([A-Za-z0-9._@-]+)( \(outgoing\))?\Z")
_ADDRESS_RULE = re.compile(r"(ALL|[0-9A-Fa-f.:]+(/[0-9]+)?)\Z")


class UnexpectedOutput(exception.MinistackException):
    """tgtadm printed something this parser does not know: refuse to guess
    which target is which rather than act on a forged line."""

    msg_fmt = ("tgtadm --op show: %(reason)s at line %(line)d (%(text)r)"
               "%(where)s; refusing to use it. A name bound to a target "
               "(ACL) or an initiator's alias may have planted it: remove "
               "it with tgtadm --op unbind, or delete the target")


class TgtdError(exception.MinistackException):
    msg_fmt = "%(reason)s"


def parse_targets(text):
    """Parse ``tgtadm --lld iscsi --mode target --op show``, strictly.

    :returns: one dict per target::

        {"tid": 1, "iqn": "iqn...", "state": "ready",
         "luns": [{"lun": 1, "type": "disk", "size": "1074 MB",
                   "backing_store": "/dev/loop3"}],
         "sessions": [{"initiator": "iqn...", "addresses": ["127.0.0.1"]}],
         "accounts": ["user"],        # incoming CHAP users
         "acls": ["iqn..."]}          # names and addresses, as tgt lists them

    The format is indentation based: targets at column 0, sections at 4,
    section entries at 8 and their fields at 12 (16 for a connection's
    address). tgtd prints names it was given (ACL names, an initiator's
    alias) unescaped, so a name with a newline in it can plant lines that
    look like another target. Hence every line must have the shape its
    place allows, targets come in rising tid order (tgtd keeps them
    sorted) and no tid or name appears twice; anything else raises
    :class:`UnexpectedOutput` instead of inventing a target.
    """
    return _parse_lines(enumerate(text.splitlines(), 1))


def parse_target(text, tid=None, iqn=None):
    """The target with id ``tid`` (or named ``iqn``) in ``tgtadm --op
    show`` output, as :func:`parse_targets` would list it, or None; and
    the tids of every target (what :meth:`TgtAdm.create_target` picks
    the next one from).

    A lookup of one target (every attach and detach makes one) reads
    what decides which lines belong to which target, and that target's
    lines, instead of every line of every target: the listing grows
    with each target on the host (~40 lines each) and parsing all of it
    cost ~0.1 ms per target, three times per handshake.

    * every target line (column 0) is checked as :func:`parse_targets`
      checks it: shape, a valid name, rising tids, no name twice, no
      text before the first. These lines are the boundaries, so a line
      planted anywhere cannot move a line into or out of the chosen
      target's listing;
    * the chosen target's listing is checked line by line, exactly as
      :func:`parse_targets` does.

    The other targets' listings are not read: a malformed line in one
    of them (only a name bound to *that* target or a session on it can
    plant one) no longer refuses lookups of every other target, and is
    still refused by the full parse of the periodic export check
    (``missing_exports``).

    :raises UnexpectedOutput: as :func:`parse_targets`, for a target
        line or a line of the chosen target.
    """
    lines = text.splitlines()
    headers = []    # (index, target line's dict)
    seen = set()
    # parse_targets' target lines: not indented (by a space), not blank.
    for index in [index for index, line in enumerate(lines)
                  if not line.startswith(" ")]:
        line = lines[index]
        if not line.strip():
            continue
        if not headers:
            for number, earlier in enumerate(lines[:index], 1):
                if earlier.strip():
                    raise _bad("text before the first target", number,
                               earlier, None)
        previous = headers[-1][1] if headers else None
        header = _header(line, index + 1,
                         previous and previous["tid"], seen, previous)
        headers.append((index, header))
        seen.add(header["iqn"])
    if not headers:
        for number, line in enumerate(lines, 1):
            if line.strip():
                raise _bad("text before the first target", number, line,
                           None)
    for number, (start, header) in enumerate(headers):
        if header["tid"] == tid or header["iqn"] == iqn:
            end = headers[number + 1][0] if number + 1 < len(headers) \
                else len(lines)
            [target] = _parse_lines(enumerate(lines[start:end],
                                              start + 1))
            return target, [found["tid"] for _, found in headers]
    return None, [found["tid"] for _, found in headers]


def _bad(reason, number, line, target):
    where = "" if target is None else ", in the listing of tid %d (%s)" \
        % (target["tid"], target["iqn"])
    return UnexpectedOutput(reason=reason, line=number, text=line,
                            where=where)


def _header(line, number, previous, seen, target=None):
    """A target line's ``{"tid", "iqn", ...}``, checked: its shape, its
    name, a tid above ``previous`` (the last tid listed), a name not in
    ``seen``. ``target``: the listing it appears in (for the error)."""
    match = _TARGET.match(line.strip())
    if not match or not iscsi_names.is_valid(match.group(2)):
        raise _bad("not a target line", number, line, target)
    tid, iqn = int(match.group(1)), match.group(2)
    if previous is not None and tid <= previous:
        raise _bad("tid %d out of order" % tid, number, line, target)
    if iqn in seen:
        raise _bad("target name listed twice", number, line, target)
    return {"tid": tid, "iqn": iqn, "state": None, "luns": [],
            "sessions": [], "accounts": [], "acls": []}


def _parse_lines(numbered):
    """:func:`parse_targets` of ``(line number, line)`` pairs."""
    targets = []
    seen = set()
    target = section = item = None
    for number, line in numbered:
        body = line.strip()
        if not body:
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent == 0:
            target = _header(line, number,
                             targets[-1]["tid"] if targets else None, seen,
                             target)
            seen.add(target["iqn"])
            targets.append(target)
            section = item = None
        elif target is None:
            raise _bad("text before the first target", number, line, target)
        elif indent == 4:
            if body.rstrip(":") not in SECTIONS or not body.endswith(":"):
                raise _bad("unknown section", number, line, target)
            section = body.rstrip(":")
            item = None
        elif section == "System information" and indent == 8:
            field = _FIELD.match(body)
            if not field:
                raise _bad("not a field", number, line, target)
            if field.group(1) == "State":
                target["state"] = (field.group(2) or "").strip()
        elif section == "LUN information":
            if indent == 8:
                match = _LUN.match(body)
                if not match:
                    raise _bad("not a LUN", number, line, target)
                item = {"lun": int(match.group(1)), "type": None,
                        "size": None, "backing_store": None}
                target["luns"].append(item)
                continue
            field = _FIELD.match(body)
            if indent != 12 or item is None or not field:
                raise _bad("not a LUN field", number, line, target)
            key, value = field.group(1), (field.group(2) or "").strip()
            if key == "Type":
                item["type"] = value
            elif key == "Size":
                item["size"] = value.split(",")[0].strip()
            elif key == "Backing store path":
                item["backing_store"] = None if value == "None" else value
        elif section == "I_T nexus information":
            if indent == 8:
                if not _SESSION.match(body):
                    raise _bad("not an I_T nexus", number, line, target)
                item = {"initiator": None, "addresses": []}
                target["sessions"].append(item)
                continue
            if item is None or indent not in (12, 16):
                raise _bad("session field out of place", number, line,
                           target)
            initiator = _INITIATOR.match(body)
            if initiator:
                item["initiator"] = initiator.group(1)
                continue
            field = _FIELD.match(body)
            if not field:
                raise _bad("not a session field", number, line, target)
            if field.group(1) == "IP Address":
                item["addresses"].append((field.group(2) or "").strip())
        elif section == "Account information" and indent == 8:
            match = _ACCOUNT.match(body)
            if not match:
                raise _bad("not an account name", number, line, target)
            if not match.group(2):
                target["accounts"].append(match.group(1))
        elif section == "ACL information" and indent == 8:
            if not (iscsi_names.is_valid(body)
                    or _ADDRESS_RULE.match(body)):
                raise _bad("not an initiator name or address", number,
                           line, target)
            target["acls"].append(body)
        else:
            raise _bad("line out of place", number, line, target)
    return targets


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
