"""tgtd's management socket: what ``tgtadm`` sends, without a process.

First for the one request that carries a secret: ``tgtadm --mode account
--op new --password P`` would put a CHAP password in a process's argv,
which every local user can read in ``/proc/<pid>/cmdline``. Upstream
Cinder writes a root-only config file and runs ``tgt-admin --update``, but
tgt-admin itself runs ``tgtadm`` with the password on its command line.
So the account is created by talking to tgtd directly, the way tgtadm
does: one request on the unix socket ``/var/run/tgtd/socket.<control
port>`` (root-only; tgtd also refuses changes from a peer that is not
root).

Then for every other request (:func:`execute`): an attach made seven
``tgtadm`` processes, each on the attachment update's critical path.
:func:`execute` takes the same argv the executor would run
(``tgtadm --lld iscsi --mode target --op new --tid 1 ...``) and sends
the request tgtadm would, byte for byte (each kind checked against
``strace`` of tgtadm 1.0.85), so :mod:`minicinder.volume.targets.tgt` reads the
same and an operator's ``tgtadm --op show`` still shows everything.

The request is tgtadm's ``struct tgtadm_req`` (tgt 1.0.x, checked against
the bytes tgtadm 1.0.85 writes), followed by the parameters as
``key=value`` pairs joined by commas and a NUL; the answer is
``struct tgtadm_rsp {u32 err; u32 len;}`` and ``len - 8`` bytes of text.
"""

import logging
import re
import socket
import struct

from ministack import exception as ms_exception
from ministack import executor

LOG = logging.getLogger(__name__)

SOCKET_PATH = "/var/run/tgtd/socket.%d"

# tgtadm.h's enum tgtadm_mode and enum tgtadm_op.
MODES = {"system": 0, "target": 1, "logicalunit": 2, "portal": 3, "lld": 4,
         "session": 5, "connection": 6, "account": 7}
OPS = {"new": 0, "delete": 1, "show": 2, "bind": 3, "unbind": 4,
       "update": 5, "stats": 6, "start": 7, "stop": 8}
MODE_ACCOUNT = MODES["account"]
OP_NEW = OPS["new"]
# tgtadm's options that travel as ``key=value`` parameters, and the key.
PARAMETERS = {"--targetname": "targetname", "--backing-store": "path",
              "--initiator-name": "initiator-name", "--user": "user"}

# mode, op, lld[64], len, tid, sid, lun, cid, host_no, device_type,
# ac_dir, pack, force
_REQUEST = struct.Struct("<II64sIiQQIIIIII")
_RESPONSE = struct.Struct("<II")
_NO_LUN = 2 ** 64 - 1

# tgtadm_error.h: the codes tgtd answers with that matter here.
ERRORS = {1: "unknown error", 2: "out of memory", 3: "can't find the driver",
          4: "can't find the target", 5: "can't find the logical unit",
          6: "can't find the session", 7: "can't find the connection",
          8: "can't find the binding", 9: "this target already exists",
          10: "this binding already exists",
          11: "this logical unit number already exists",
          12: "this access control rule already exists",
          13: "this access control rule does not exist",
          14: "this account already exists",
          15: "can't find the account", 16: "too many accounts",
          17: "invalid request", 18: "this target already has an outgoing "
          "account", 19: "this target is still active",
          20: "this logical unit is still active",
          21: "this driver is busy", 22: "this operation isn't supported",
          23: "unknown parameter", 24: "this device has Prevent Removal set"}
# What tgtadm exits with when tgtd refuses a request (EINVAL).
REFUSED_EXIT_CODE = 22

# Parameters are split on ',' and '=' by tgtd: neither may appear in a value.
_VALUE = re.compile(r"[A-Za-z0-9._@:/-]{1,256}\Z")


class TgtdError(Exception):
    """tgtd refused the request (``code`` is tgtadm's error number)."""

    def __init__(self, code, request):
        self.code = code
        super().__init__("tgtd: %s (error %d) for %s" % (
            ERRORS.get(code, "error"), code, request))


def request(mode, op, params, tid=-1, control_port=0, timeout=10,
            lun=None, force=False, prefix="", suffix=""):
    """Send one management request to tgtd.

    :param params: ``{key: value}``; values are checked to contain none of
        tgtd's separators.
    :param prefix: and ``suffix``: around the parameter text (tgtadm's
        ``--params`` travel as ``targetOps k=v,k=v,``).
    :returns: the answer's text.
    :raises TgtdError: tgtd answered with an error.
    :raises OSError: tgtd is not running or not reachable.
    """
    for key, value in params.items():
        if not _VALUE.match(str(value)):
            raise ValueError("unsafe tgtd parameter %s" % key)
    # No parameters: tgtadm sends no parameter text at all.
    payload = ((prefix + ",".join("%s=%s" % item for item in params.items())
                + suffix).encode("ascii") + b"\0") if params else b""
    header = _REQUEST.pack(mode, op, b"iscsi", _REQUEST.size + len(payload),
                           tid, 0, _NO_LUN if lun is None else lun,
                           0, 0, 0, 0, 0, 1 if force else 0)
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
    # tgtd's text ends with the C string's NUL (tgtadm prints up to it).
    text = answer[_RESPONSE.size:length].split(b"\0", 1)[0]
    return text.decode("utf-8", "replace")


def new_account(user, password, control_port=0):
    """``tgtadm --mode account --op new``, with the password off argv."""
    request(MODE_ACCOUNT, OP_NEW, {"user": user, "password": password},
            control_port=control_port)


def execute(*argv, **kwargs):
    """:func:`send_command`, as a COMMAND span named as the command is
    (``tgtadm target new``) when the thread is traced."""
    return executor.traced(send_command, *argv, **kwargs)


def send_command(*argv, **kwargs):
    """Do what ``argv`` (``tgtadm --lld iscsi ...``, as the executor would
    run it) asks, over the socket; ``(stdout, "")`` as the executor.

    Only the options :mod:`minicinder.volume.targets.tgt` uses are known:
    ``--mode``, ``--op``, ``--tid``, ``--lun``, ``--force`` and
    :data:`PARAMETERS`. ``kwargs`` (the executor's) are ignored.

    :raises ProcessExecutionError: tgtd refused (exit code 22 and
        tgtadm's message, as tgtadm) or could not be reached (107).
    :raises ValueError: an option this function does not know.
    """
    argv = [str(part) for part in argv]
    if argv[:3] != ["tgtadm", "--lld", "iscsi"]:
        raise ValueError("not a tgtadm --lld iscsi command: %s" % argv[:3])
    options, params = {}, {}
    words = iter(argv[3:])
    for word in words:
        if word == "--force":
            options["force"] = True
        elif word in ("--mode", "--op", "--tid", "--lun"):
            options[word[2:]] = next(words)
        elif word in PARAMETERS:
            params[PARAMETERS[word]] = next(words)
        elif word == "--params":
            # tgtadm sends --params as "targetOps <params>," verbatim.
            for item in next(words).split(","):
                key, _, value = item.partition("=")
                params[key] = value
            options["raw_params"] = True
        else:
            raise ValueError("tgtadm option %r is not sent by this module"
                             % word)
    try:
        out = request(MODES[options["mode"]], OPS[options["op"]], params,
                      tid=int(options.get("tid", -1)),
                      lun=int(options["lun"]) if "lun" in options else None,
                      force=options.get("force", False), timeout=60,
                      prefix="targetOps " if options.get("raw_params")
                      else "", suffix="," if options.get("raw_params")
                      else "")
    except TgtdError as exc:
        LOG.warning("tgtd refused %s: %s", executor.masked(argv), exc)
        raise ms_exception.ProcessExecutionError(
            cmd=argv, exit_code=REFUSED_EXIT_CODE,
            stderr="tgtadm: %s" % ERRORS.get(exc.code, "error %d"
                                             % exc.code))
    except OSError as exc:
        # tgtadm exits 107 (ENOTCONN) when tgtd cannot be reached.
        raise ms_exception.ProcessExecutionError(
            cmd=argv, exit_code=107,
            stderr="tgtadm: can't send the request to the tgt daemon, "
                   "%s" % exc)
    return out, ""
