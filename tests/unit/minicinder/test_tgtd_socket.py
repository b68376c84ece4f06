"""minicinder.volume.targets.tgtd_socket: tgtadm's wire format, against a fake
tgtd listening on a unix socket (the real one is exercised by
tests/security/test_iscsi_cross_project.py)."""

import os
import socket
import struct
import threading

import pytest

from minicinder.volume.targets import tgtd_socket


@pytest.fixture
def fake_tgtd(tmp_path, monkeypatch):
    """A one-request-at-a-time tgtd: records requests, answers ``reply``."""
    path = str(tmp_path / "socket.%d")
    monkeypatch.setattr(tgtd_socket, "SOCKET_PATH", path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path % 0)
    server.listen(4)
    state = {"requests": [], "reply": (0, b"")}

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                header = conn.recv(120, socket.MSG_WAITALL)
                length = struct.unpack_from("<I", header, 72)[0]
                payload = conn.recv(length - 120, socket.MSG_WAITALL)
                state["requests"].append((header, payload))
                code, text = state["reply"]
                conn.sendall(struct.pack("<II", code, 8 + len(text)) + text)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield state
    server.close()
    os.unlink(path % 0)


def test_new_account_is_tgtadms_request(fake_tgtd):
    tgtd_socket.new_account("user1", "pass1")
    ((header, payload),) = fake_tgtd["requests"]
    mode, op, lld = struct.unpack_from("<II64s", header)
    length, tid = struct.unpack_from("<Ii", header, 72)
    assert (mode, op) == (tgtd_socket.MODE_ACCOUNT, tgtd_socket.OP_NEW)
    assert lld.rstrip(b"\0") == b"iscsi"
    assert tid == -1
    assert length == 120 + len(payload)
    assert payload == b"user=user1,password=pass1\0"


def test_an_error_answer_raises_with_tgtadms_words(fake_tgtd):
    fake_tgtd["reply"] = (14, b"")
    with pytest.raises(tgtd_socket.TgtdError,
                       match="this account already exists") as exc:
        tgtd_socket.new_account("user1", "pass1")
    assert exc.value.code == 14
    assert "pass1" not in str(exc.value)


@pytest.mark.parametrize("password", ["a,b", "a=b", "a b", "", "x\0y",
                                      "x" * 300])
def test_values_that_would_split_the_parameters_are_refused(
        fake_tgtd, password):
    with pytest.raises(ValueError):
        tgtd_socket.new_account("user1", password)
    assert fake_tgtd["requests"] == []


def test_no_tgtd_is_an_oserror(tmp_path, monkeypatch):
    monkeypatch.setattr(tgtd_socket, "SOCKET_PATH",
                        str(tmp_path / "absent.%d"))
    with pytest.raises(OSError):
        tgtd_socket.new_account("user1", "pass1")


# What tgtadm 1.0.85 writes for these commands (strace -e write -xx), as
# (mode, op, tid, lun, force) of the 120-byte header and the parameters.
# Every other header field is zero, lld is "iscsi" and len is 120 plus
# the parameters' length.
IQN = "iqn.2010-10.org.openstack:probe-x"
NO_LUN = 2 ** 64 - 1
TGTADM_WROTE = [
    (("--mode", "target", "--op", "new", "--tid", "990", "--targetname",
      IQN), (1, 0, 990, NO_LUN, 0), b"targetname=" + IQN.encode() + b"\0"),
    (("--mode", "logicalunit", "--op", "new", "--tid", "990", "--lun", "1",
      "--backing-store", "/tmp/tgtprobe.img"), (2, 0, 990, 1, 0),
     b"path=/tmp/tgtprobe.img\0"),
    (("--mode", "account", "--op", "show"), (7, 2, -1, NO_LUN, 0), b""),
    (("--mode", "target", "--op", "bind", "--tid", "990",
      "--initiator-name", "iqn.1993-08.org.debian:01:abc"),
     (1, 3, 990, NO_LUN, 0),
     b"initiator-name=iqn.1993-08.org.debian:01:abc\0"),
    (("--mode", "target", "--op", "unbind", "--tid", "990",
      "--initiator-name", "iqn.1993-08.org.debian:01:abc"),
     (1, 4, 990, NO_LUN, 0),
     b"initiator-name=iqn.1993-08.org.debian:01:abc\0"),
    (("--mode", "target", "--op", "show"), (1, 2, -1, NO_LUN, 0), b""),
    (("--mode", "target", "--op", "delete", "--force", "--tid", "990"),
     (1, 1, 990, NO_LUN, 1), b""),
    (("--mode", "account", "--op", "bind", "--tid", "990", "--user",
      "probeuser"), (7, 3, 990, NO_LUN, 0), b"user=probeuser\0"),
    (("--mode", "account", "--op", "delete", "--user", "probeuser"),
     (7, 1, -1, NO_LUN, 0), b"user=probeuser\0"),
    # issue 29: read from a listening socket.30 that tgtadm -C 30 wrote to
    (("--mode", "logicalunit", "--op", "update", "--tid", "7", "--lun", "1",
      "--params", "online=0,path=/dev/loop9"), (2, 5, 7, 1, 0),
     b"targetOps online=0,path=/dev/loop9,\0"),
]


def _expected_header(mode, op, tid, lun, force, params):
    return (struct.pack("<II", mode, op) + b"iscsi".ljust(64, b"\0")
            + struct.pack("<Ii", 120 + len(params), tid)
            + struct.pack("<QQ", 0, lun) + b"\0" * 20
            + struct.pack("<I", force))


@pytest.mark.parametrize("args, fields, params", TGTADM_WROTE,
                         ids=lambda v: " ".join(v[:4])
                         if isinstance(v, tuple) and isinstance(v[0], str)
                         else None)
def test_execute_sends_what_tgtadm_writes(fake_tgtd, args, fields, params):
    fake_tgtd["reply"] = (0, b"Target 1: x\n\0")   # tgtd's ends with NUL
    out, err = tgtd_socket.send_command("tgtadm", "--lld", "iscsi", *args)
    ((header, payload),) = fake_tgtd["requests"]
    assert header == _expected_header(*fields, params)
    assert payload == params
    assert (out, err) == ("Target 1: x\n", "")


def test_a_refusal_is_a_failed_tgtadm(fake_tgtd):
    """As tgtadm: exit 22 and its message (create_target retries on it)."""
    fake_tgtd["reply"] = (9, b"")
    with pytest.raises(tgtd_socket.ms_exception.ProcessExecutionError) as exc:
        tgtd_socket.send_command("tgtadm", "--lld", "iscsi", "--mode",
                                 "target", "--op", "new", "--tid", "1",
                                 "--targetname", IQN)
    assert exc.value.exit_code == 22
    assert exc.value.stderr == "tgtadm: this target already exists"


def test_no_tgtd_is_a_failed_tgtadm(tmp_path, monkeypatch):
    monkeypatch.setattr(tgtd_socket, "SOCKET_PATH",
                        str(tmp_path / "absent.%d"))
    with pytest.raises(tgtd_socket.ms_exception.ProcessExecutionError) as exc:
        tgtd_socket.send_command("tgtadm", "--lld", "iscsi", "--mode",
                                 "target", "--op", "show")
    assert exc.value.exit_code == 107


@pytest.mark.parametrize("argv", [
    ("tgtadm", "--lld", "iscsi", "--mode", "target", "--op", "new",
     "--password", "secret"),
    ("tgtadm", "--mode", "target", "--op", "show"),
    ("tgtadm", "--lld", "iser", "--mode", "target", "--op", "show"),
    ("tgtadm", "--lld", "iscsi", "--mode", "target", "--op", "bind",
     "--initiator-name", "iqn.x,initiator-address=ALL"),
])
def test_what_it_does_not_send(fake_tgtd, argv):
    """An option it does not know, another lld, or a value that would
    smuggle a second parameter past tgtd's ',' split."""
    with pytest.raises(ValueError):
        tgtd_socket.send_command(*argv)
    assert fake_tgtd["requests"] == []
