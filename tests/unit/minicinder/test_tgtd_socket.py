"""minicinder.volume.tgtd_socket: tgtadm's wire format, against a fake
tgtd listening on a unix socket (the real one is exercised by
tests/security/test_iscsi_cross_project.py)."""

import os
import socket
import struct
import threading

import pytest

from minicinder.volume import tgtd_socket


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
