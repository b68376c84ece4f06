"""tgtd's management socket, for the one request that carries a secret.

``tgtadm --mode account --op new --password P`` would put a CHAP password
in a process's argv, which every local user can read in
``/proc/<pid>/cmdline``. Upstream Cinder writes a root-only config file
and runs ``tgt-admin --update``, but tgt-admin itself runs ``tgtadm`` with
the password on its command line. So the account is created by talking to
tgtd directly, the way tgtadm does: one request on the unix socket
``/var/run/tgtd/socket.<control port>`` (root-only; tgtd also refuses
changes from a peer that is not root).

The request is tgtadm's ``struct tgtadm_req`` (tgt 1.0.x, checked against
the bytes tgtadm 1.0.85 writes), followed by the parameters as
``key=value`` pairs joined by commas and a NUL; the answer is
``struct tgtadm_rsp {u32 err; u32 len;}`` and ``len - 8`` bytes of text.
"""

import re
import socket
import struct

SOCKET_PATH = "/var/run/tgtd/socket.%d"

MODE_ACCOUNT = 7
OP_NEW = 0

# mode, op, lld[64], len, tid, sid, lun, cid, host_no, device_type,
# ac_dir, pack, force
_REQUEST = struct.Struct("<II64sIiQQIIIIII")
_RESPONSE = struct.Struct("<II")
_NO_LUN = 2 ** 64 - 1

# tgtadm_error.h: the codes tgtd answers with that matter here.
ERRORS = {1: "unknown error", 2: "out of memory", 3: "can't find the driver",
          4: "can't find the target", 14: "this account already exists",
          15: "can't find the account", 16: "too many accounts",
          17: "invalid request"}

# Parameters are split on ',' and '=' by tgtd: neither may appear in a value.
_VALUE = re.compile(r"[A-Za-z0-9._@:-]{1,256}\Z")


class TgtdError(Exception):
    """tgtd refused the request (``code`` is tgtadm's error number)."""

    def __init__(self, code, request):
        self.code = code
        super().__init__("tgtd: %s (error %d) for %s" % (
            ERRORS.get(code, "error"), code, request))


def request(mode, op, params, tid=-1, control_port=0, timeout=10):
    """Send one management request to tgtd.

    :param params: ``{key: value}``; values are checked to contain none of
        tgtd's separators.
    :returns: the answer's text.
    :raises TgtdError: tgtd answered with an error.
    :raises OSError: tgtd is not running or not reachable.
    """
    for key, value in params.items():
        if not _VALUE.match(str(value)):
            raise ValueError("unsafe tgtd parameter %s" % key)
    payload = (",".join("%s=%s" % item for item in params.items())
               .encode("ascii") + b"\0")
    header = _REQUEST.pack(mode, op, b"iscsi", _REQUEST.size + len(payload),
                           tid, 0, _NO_LUN, 0, 0, 0, 0, 0, 0)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(SOCKET_PATH % control_port)
        sock.sendall(header + payload)
        answer = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    if len(answer) < _RESPONSE.size:
        raise OSError("tgtd closed the management socket without answering")
    code, length = _RESPONSE.unpack_from(answer)
    if code:
        raise TgtdError(code, "mode %d op %d" % (mode, op))
    return answer[_RESPONSE.size:length].decode("utf-8", "replace")


def new_account(user, password, control_port=0):
    """``tgtadm --mode account --op new``, with the password off argv."""
    request(MODE_ACCOUNT, OP_NEW, {"user": user, "password": password},
            control_port=control_port)
