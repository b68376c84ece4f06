"""The strict parser of ``tgtadm --lld iscsi --mode target --op show``.

tgtd prints names it was given (ACL names, an initiator's alias)
unescaped, so a name with a newline in it can plant lines that look like
another target: :func:`parse_targets` and :func:`parse_target` accept a
line only in the shape its place allows and raise
:class:`UnexpectedOutput` for anything else, rather than act on a forged
line. Used by ``minicinder.volume.targets.tgt``, which re-exports both parsers
and the exception.
"""

import re

from minicinder.volume.targets import iscsi_names
from ministack import exception

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
