"""Keystone's memcached is closed to everyone but root and itself, and the
cache it holds does not outlive a revocation.

memcached has no authentication, and keystone's cache (lib/keystone's
[cache], lib/memcached) holds validated tokens, revocation events and
role assignments: whoever reaches it can read them or plant entries
keystone would trust. The attack: a local user (here ``nobody``)
connects to it, or anyone connects over the network. memcached must
listen on its unix socket only, in a directory only its own user may
enter, and not run as root.

Then the reason memcached and not an in-process cache: keystone runs
several gunicorn workers, and a token revoked through one must be
refused by all of them at once, not when each one's cache expires.
"""

import os
import socket

import pytest
import requests

from tests.security import local_users as lu
from tests.tempest_style import auth

KEYSTONE_CONF = os.path.join(lu.CONF_DIR, "keystone", "keystone.conf")

# Runs as the other user: connect to the socket and send `stats`.
_CONNECT = r"""
import socket, sys
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.settimeout(5)
try:
    sock.connect(sys.argv[1])
    sock.sendall(b"stats\r\n")
    print("connected", sock.recv(64)[:10])
except PermissionError:
    print("denied")
except OSError as exc:
    print("error: %s" % exc)
"""


def _socket_path():
    servers = lu.ini(KEYSTONE_CONF, "cache", "memcache_servers") or ""
    if not servers.startswith("unix:"):
        pytest.fail("keystone's cache is not on a unix socket: %r"
                    % servers)
    return servers[len("unix:"):]


def _memcached_pid():
    path = os.path.join(lu.STATUS_DIR, "memcached.pid")
    if not os.path.exists(path):
        pytest.skip("stack.sh runs no memcached (keystone disabled)")
    with open(path) as handle:
        return int(handle.read().strip())


def _stats():
    """memcached's counters, asked over its socket (as root)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(5)
        sock.connect(_socket_path())
        sock.sendall(b"stats\r\n")
        answer = b""
        while not answer.endswith(b"END\r\n"):
            chunk = sock.recv(65536)
            assert chunk, "memcached closed the connection"
            answer += chunk
    return {parts[1]: parts[2] for parts in
            (line.split(" ", 2) for line in answer.decode().splitlines())
            if parts[0] == "STAT"}


def _socket_inodes(pid):
    inodes = set()
    fd_dir = "/proc/%d/fd" % pid
    for fd in os.listdir(fd_dir):
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except FileNotFoundError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    return inodes


def _inet_sockets(inodes):
    """The TCP and UDP sockets (IPv4 and IPv6) among ``inodes``."""
    found = []
    for table in ("tcp", "tcp6", "udp", "udp6"):
        with open("/proc/net/" + table) as handle:
            next(handle)
            for line in handle:
                fields = line.split()
                if fields[9] in inodes:
                    found.append((table, fields[1]))
    return found


def test_memcached_socket_refuses_other_local_users():
    path = _socket_path()
    directory = os.path.dirname(path)
    pid = _memcached_pid()
    assert lu.mode(path) & 0o077 == 0, oct(lu.mode(path))
    assert lu.mode(directory) & 0o077 == 0, oct(lu.mode(directory))
    # The attack itself: a real process as `nobody`.
    proc = lu.as_user(["/usr/bin/python3", "-c", _CONNECT, path])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "denied", proc.stdout
    # And memcached gave up root (it would hold any file it could open).
    with open("/proc/%d/status" % pid) as handle:
        uids = next(line for line in handle if line.startswith("Uid:"))
    assert uids.split()[1:] != ["0"] * 4, uids


def test_memcached_has_no_network_socket():
    """No TCP or UDP socket at all: not on 0.0.0.0, not even on
    127.0.0.1 (every local user reaches loopback)."""
    pid = _memcached_pid()
    inodes = _socket_inodes(pid)
    assert inodes, "memcached holds no socket"
    assert _inet_sockets(inodes) == []


def _token(conf):
    return auth.password_login(conf, conf.user).headers["X-Subject-Token"]


def _validations(conf, token, times):
    """The statuses of ``times`` validations, each on a new connection
    (so gunicorn's workers share them out)."""
    statuses = []
    for _ in range(times):
        statuses.append(requests.get(
            conf.auth_url + "/v3/auth/tokens?nocatalog",
            headers={"X-Auth-Token": token, "X-Subject-Token": token,
                     "Connection": "close"}, timeout=30).status_code)
    return statuses


def test_revoked_token_is_refused_by_every_keystone_worker(conf):
    """Validations fill keystone's cache (in memcached: its hits grow),
    then the owner revokes the token: no validation after that, whichever
    worker answers, finds it valid. With a per-worker cache
    (dogpile.cache.memory) a worker that did not handle the revocation
    would keep answering 200 from its own cache."""
    if not conf.auth_url:
        pytest.skip("the lab runs without keystone (noauth)")
    _memcached_pid()
    token = _token(conf)
    hits = int(_stats()["get_hits"])
    assert _validations(conf, token, 20) == [200] * 20
    assert int(_stats()["get_hits"]) > hits, "keystone does not use memcached"
    revoked = requests.delete(conf.auth_url + "/v3/auth/tokens", headers={
        "X-Auth-Token": token, "X-Subject-Token": token}, timeout=30)
    assert revoked.status_code == 204, revoked.text[:300]
    # (401: the token also authenticates the request; 404: not valid)
    assert set(_validations(conf, token, 20)) <= {401, 404}
