"""What an iSCSI name may look like (RFC 3720 §3.2.6, RFC 3980).

Initiator names reach ``tgtadm --initiator-name`` and come back, unescaped,
in ``tgtadm --op show``: a name with a newline in it can plant a line that
looks like another target. So every name that is bound to an ACL, or that
the API accepts in a connector, must be a well-formed iSCSI name:

* ``iqn.yyyy-mm.reversed.domain[:unique]``: after RFC 3722 stringprep the
  characters are ASCII letters, digits, ``-``, ``.`` and ``:`` (upper case
  is accepted: names are compared case-insensitively, and some initiators
  send it);
* ``eui.`` and 16 hex digits;
* ``naa.`` and 16 or 32 hex digits;

and at most 223 bytes long.
"""

import re

MAX_LENGTH = 223

PATTERN = (r"^(iqn\.[0-9]{4}-(0[1-9]|1[0-2])\.[A-Za-z0-9][A-Za-z0-9.-]*"
           r"(:[A-Za-z0-9.:-]*)?"
           r"|eui\.[0-9A-Fa-f]{16}"
           r"|naa\.([0-9A-Fa-f]{16}|[0-9A-Fa-f]{32}))\Z")
_NAME = re.compile(PATTERN)


def is_valid(name):
    """Whether ``name`` is a well-formed iSCSI name."""
    return (isinstance(name, str) and len(name) <= MAX_LENGTH
            and _NAME.match(name) is not None)
