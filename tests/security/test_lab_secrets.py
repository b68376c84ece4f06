"""The lab's passwords are its own, kept in root-only files, and its APIs
listen only on the host address the lab was configured with.

The attack: someone who read devstack's source (the old built-in
passwords ``secretadmin``, ``secretdemo``, ``secretservice``,
``secretrabbit``, ``secretdatabase``) logs in to keystone, RabbitMQ or
the database; or someone on the network reaches the APIs through an
address the lab never meant to offer; or a local user finds a password
in a world-readable file or in another process's argv
(``/proc/<pid>/cmdline`` is readable by everyone).
"""

import os
import re
import subprocess
import urllib.parse

import kombu
import pytest
import requests

from tests.security import local_users as lu

DEVSTACK = os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "devstack")
OLD_DEFAULTS = {"ADMIN_PASSWORD": "secretadmin",
                "DEMO_PASSWORD": "secretdemo",
                "SERVICE_PASSWORD": "secretservice",
                "RABBIT_PASSWORD": "secretrabbit",
                "DATABASE_PASSWORD": "secretdatabase"}


def _passwords_file():
    values = {}
    with open(lu.PASSWORDS_FILE) as handle:
        for line in handle:
            line = line.strip()
            if line and not line.startswith("#"):
                name, _, value = line.partition("=")
                values[name] = value
    return values


def _lab_secrets(conf):
    """Every password the deployed lab uses, wherever it is kept."""
    secrets = set(_passwords_file().values())
    secrets |= {conf.user.password, conf.admin.password}
    url = urllib.parse.urlsplit(lu.ini(
        os.path.join(lu.CONF_DIR, "minicompute.conf"), "DEFAULT",
        "transport_url"))
    secrets.add(urllib.parse.unquote(url.password or ""))
    secrets.add(lu.ini(os.path.join(lu.CONF_DIR, "minicompute.conf"),
                       "service_user", "password") or "")
    for name in ("miniapi", "minicinder"):
        secrets.add(lu.ini(os.path.join(lu.CONF_DIR, name + ".conf"),
                           "keystone_authtoken", "password") or "")
    return {s for s in secrets if s}


def _token_status(conf, user, project, password):
    body = {"auth": {
        "identity": {"methods": ["password"], "password": {"user": {
            "name": user, "password": password,
            "domain": {"name": "Default"}}}},
        "scope": {"project": {"name": project,
                              "domain": {"name": "Default"}}}}}
    return requests.post(conf.auth_url + "/v3/auth/tokens", json=body,
                         timeout=30).status_code


@pytest.fixture(scope="module")
def keystone(conf):
    if not conf.auth_url:
        pytest.skip("the lab runs without keystone (noauth)")
    return conf


@pytest.mark.parametrize("user,project,password", [
    ("admin", "admin", "secretadmin"),
    ("demo", "demo", "secretdemo"),
    ("nova", "service", "secretservice"),
])
def test_old_default_passwords_are_refused(keystone, user, project,
                                           password):
    assert _token_status(keystone, user, project, password) == 401


def test_the_lab_passwords_work(keystone):
    """The control: keystone answers and the configured accounts log in,
    so the 401s above are refusals of the password, not an outage."""
    assert _token_status(keystone, "demo", "demo",
                         keystone.user.password) == 201
    assert _token_status(keystone, "admin", "admin",
                         keystone.admin.password) == 201
    service = lu.ini(os.path.join(lu.CONF_DIR, "minicompute.conf"),
                     "service_user", "password")
    assert _token_status(keystone, "nova", "service", service) == 201
    assert _token_status(keystone, "cinder", "service", service) == 201


def _amqp_login(url):
    parts = urllib.parse.urlsplit(url)
    with kombu.Connection(
            hostname=parts.hostname, port=parts.port or 5672,
            userid=urllib.parse.unquote(parts.username),
            password=urllib.parse.unquote(parts.password or ""),
            virtual_host=parts.path.lstrip("/") or "/",
            connect_timeout=10) as conn:
        conn.connect()


def test_old_rabbit_password_is_refused():
    url = lu.ini(os.path.join(lu.CONF_DIR, "minicompute.conf"), "DEFAULT",
                 "transport_url")
    _amqp_login(url)  # the control: the broker is up, the lab's works
    parts = urllib.parse.urlsplit(url)
    old = url.replace("%s@" % parts.netloc.split("@")[0],
                      "%s:secretrabbit@" % parts.username, 1)
    with pytest.raises(Exception) as err:
        _amqp_login(old)
    assert "ACCESS_REFUSED" in str(err.value) or \
        "AccessRefused" in type(err.value).__name__, repr(err.value)


def test_old_database_password_is_refused():
    url = lu.ini(os.path.join(lu.CONF_DIR, "minicompute.conf"), "database",
                 "connection")
    if url.startswith("sqlite"):
        pytest.skip("SQLite: no database server, no password")
    import sqlalchemy as sa
    parts = urllib.parse.urlsplit(url)
    old = url.replace(":%s@" % parts.password, ":secretdatabase@", 1)
    sa.create_engine(url).connect().close()  # the control
    with pytest.raises(sa.exc.OperationalError):
        sa.create_engine(old).connect().close()


def test_passwords_file_is_root_only_and_complete():
    assert lu.owner(lu.PASSWORDS_FILE) == ("root", "root")
    assert lu.mode(lu.PASSWORDS_FILE) == 0o600
    values = _passwords_file()
    if not values:
        pytest.skip("local.conf sets every password: none generated")
    # The old defaults' names, and osprofiler's HMAC key (never had one).
    assert set(values) <= set(OLD_DEFAULTS) | {"OSPROFILER_HMAC_KEY"}
    for name, value in values.items():
        assert value != OLD_DEFAULTS.get(name), name
        # They go into transport and database URLs and YAML as they are.
        assert re.fullmatch(r"[A-Za-z0-9]{24,}", value), name


def test_client_files_use_the_recorded_passwords(conf):
    """clouds.yaml, tempest.conf and the daemons agree with the
    passwords file (unless local.conf set a password itself)."""
    import yaml
    values = _passwords_file()
    with open(lu.CLOUDS_YAML) as handle:
        clouds = yaml.safe_load(handle)["clouds"]
    if "DEMO_PASSWORD" in values:
        assert clouds["ministack"]["auth"]["password"] == \
            values["DEMO_PASSWORD"] == conf.user.password
    if "ADMIN_PASSWORD" in values:
        assert clouds["ministack-admin"]["auth"]["password"] == \
            values["ADMIN_PASSWORD"] == conf.admin.password
    if "RABBIT_PASSWORD" in values:
        for name in ("miniapi", "minicompute"):
            url = lu.ini(os.path.join(lu.CONF_DIR, name + ".conf"),
                         "DEFAULT", "transport_url")
            assert urllib.parse.urlsplit(url).password == \
                values["RABBIT_PASSWORD"], name


def _generate(passwords_file, env=None):
    """stackrc's password step then stack.sh's save, in a subshell, with
    a private passwords file; returns the values it settled on."""
    script = (
        'source "$TOP_DIR/functions" && source "$TOP_DIR/stackrc" && '
        'save_passwords && for v in ADMIN_PASSWORD DEMO_PASSWORD '
        'SERVICE_PASSWORD RABBIT_PASSWORD DATABASE_PASSWORD; do '
        'echo "$v=${!v}"; done')
    clean = {k: v for k, v in os.environ.items()
             if k not in OLD_DEFAULTS and k != "TRANSPORT_URL"}
    proc = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, timeout=60,
        env=dict(clean, TOP_DIR=DEVSTACK, PASSWORDS_FILE=str(passwords_file),
                 **(env or {})))
    assert proc.returncode == 0, proc.stderr
    return dict(line.split("=", 1) for line in proc.stdout.split())


def test_generated_passwords_are_kept_across_runs(tmp_path):
    path = tmp_path / "passwords"
    first = _generate(path)
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert all(first.values())
    assert not set(first.values()) & set(OLD_DEFAULTS.values())
    assert len(set(first.values())) == len(first)
    assert _generate(path) == first
    # A password set in local.conf (or the environment) wins, and never
    # lands in the passwords file.
    mine = _generate(path, {"ADMIN_PASSWORD": "fromlocalconf"})
    assert mine == dict(first, ADMIN_PASSWORD="fromlocalconf")
    assert "fromlocalconf" not in path.read_text()


def test_no_password_in_any_process_argv(conf):
    """``/proc/<pid>/cmdline`` is world-readable."""
    secrets = _lab_secrets(conf)
    leaks = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as handle:
                argv = handle.read().decode(errors="replace")
        except OSError:
            continue
        if any(secret in argv for secret in secrets):
            leaks.append("%s: %s" % (pid, argv.split("\0")[0]))
    assert leaks == []


# Runs as nobody: every file it can read under the given roots, searched
# for any of the secrets (given on stdin, never in argv).
_FIND_SECRETS = r"""
import json, os, sys
secrets = [s.encode() for s in json.load(sys.stdin)]
roots, skip = sys.argv[1:-1], sys.argv[-1]
hits = []
for root in roots:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames
                       if os.path.join(dirpath, d) != skip]
        for name in filenames:
            path = os.path.join(dirpath, name)
            try:
                if not os.path.isfile(path) or \
                        os.path.getsize(path) > 20 * 2**20:
                    continue
                with open(path, "rb") as handle:
                    data = handle.read()
            except OSError:
                continue
            if any(s in data for s in secrets):
                hits.append(path)
print(json.dumps(hits))
"""


def test_no_password_in_a_file_another_user_can_read(conf):
    import json
    proc = lu.as_user(
        ["/usr/bin/python3", "-c", _FIND_SECRETS, "/etc", lu.DEST,
         lu.DATA_DIR, "/var/log", "/var/lib/rabbitmq",
         os.path.join(lu.DEST, "venv")],
        stdin=json.dumps(sorted(_lab_secrets(conf))))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


# --- where the APIs listen --------------------------------------------------

def _listeners():
    """``{port: {address...}}`` of every listening TCP socket."""
    import ipaddress
    out = {}
    for name, width in (("/proc/net/tcp", 4), ("/proc/net/tcp6", 16)):
        try:
            with open(name) as handle:
                lines = handle.readlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] != "0A":  # TCP_LISTEN
                continue
            addr_hex, port_hex = fields[1].split(":")
            raw = bytes.fromhex(addr_hex)
            # /proc prints each 32-bit word in host (little-endian) order.
            raw = b"".join(raw[i:i + 4][::-1] for i in range(0, width, 4))
            address = str(ipaddress.ip_address(raw))
            out.setdefault(int(port_hex, 16), set()).add(address)
    return out


def _api_sockets():
    """``{name: (address, port)}`` the lab's configs ask for."""
    api = os.path.join(lu.CONF_DIR, "miniapi.conf")
    cinder = os.path.join(lu.CONF_DIR, "minicinder.conf")
    found = {
        "compute": (lu.ini(api, "api", "listen", "0.0.0.0"),
                    int(lu.ini(api, "api", "listen_port", "8774"))),
        "volume": (lu.ini(cinder, "DEFAULT", "osapi_volume_listen",
                          "0.0.0.0"),
                   int(lu.ini(cinder, "DEFAULT", "osapi_volume_listen_port",
                              "8776")))}
    image_port = int(lu.ini(api, "api", "image_listen_port", "0"))
    if image_port:
        found["image"] = (found["compute"][0], image_port)
    network_port = int(lu.ini(api, "api", "network_listen_port", "0"))
    if network_port:
        found["network"] = (found["compute"][0], network_port)
    # The journey page (traces name every project's ids): the host only.
    trace_port = int(lu.ini(api, "trace", "listen_port", "0"))
    if trace_port:
        found["journey page"] = (lu.ini(api, "trace", "listen", "127.0.0.1"),
                                 trace_port)
    # Keystone (gunicorn, lib/keystone) listens where clients reach it.
    identity = lu.ini(api, "keystone_authtoken", "www_authenticate_uri")
    if identity:
        url = urllib.parse.urlsplit(identity)
        found["identity"] = (url.hostname, url.port or 5000)
    return found


def test_apis_listen_on_the_configured_host_address_only():
    sockets = _api_sockets()
    assert {"compute", "volume", "image", "network", "identity"} <= \
        set(sockets)
    listeners = _listeners()
    wrong = {}
    for name, (address, port) in sockets.items():
        if address in ("0.0.0.0", "::", "") or \
                listeners.get(port) != {address}:
            wrong[name] = (address, port, sorted(listeners.get(port, ())))
    assert wrong == {}


def test_apis_unreachable_through_other_local_addresses():
    """Connect to each API port through this host's other addresses (its
    network interfaces): refused."""
    import socket
    proc = subprocess.run(["ip", "-o", "addr", "show"], capture_output=True,
                          text=True, check=True)
    addresses = {line.split()[3].split("/")[0]
                 for line in proc.stdout.splitlines()
                 if line.split()[2] == "inet"}
    sockets = _api_sockets()
    others = addresses - {address for address, _ in sockets.values()}
    if not others:
        pytest.skip("this host has no other IPv4 address")
    reached = []
    for address in sorted(others):
        for name, (_, port) in sockets.items():
            with socket.socket() as sock:
                sock.settimeout(5)
                if sock.connect_ex((address, port)) == 0:
                    reached.append("%s %s:%d" % (name, address, port))
    assert reached == []


def test_broker_listens_on_its_host_only():
    """AMQP on the transport URL's host, and the node's Erlang
    distribution port (AMQP port + 20000, only rabbitmqctl uses it) on
    loopback: neither on every interface."""
    url = urllib.parse.urlsplit(lu.ini(
        os.path.join(lu.CONF_DIR, "minicompute.conf"), "DEFAULT",
        "transport_url"))
    port = url.port or 5672
    listeners = _listeners()
    assert listeners.get(port) == {url.hostname}
    assert listeners.get(port + 20000, set()) <= {"127.0.0.1", "::1"}
