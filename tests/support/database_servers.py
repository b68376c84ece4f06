"""Private, throwaway database servers for functional tests (fixtures).

``postgresql_urls`` and ``mariadb_urls`` each start a server of their own
in a temporary directory on a free port (never the system instance: the
lab may be using the machine), create the ``keystone``, ``nova`` and
``cinder`` databases (lib/database's) and a password-authenticated
``ministack`` user, and return ``{"keystone": url, "nova": url, "cinder":
url, "restart": callable}``: the URLs the
daemons would have in ``[database] connection``, and a way to restart the
server under them (every connection dropped). ``sqlite_urls`` is the
default deployment's files, as a baseline.

Import the fixtures into a test module to use them. A missing server
binary skips with the Debian package to install (``devstack/lib/packages``
installs both for CI).
"""

import os
import shutil
import subprocess
import tempfile
import uuid

import pytest
import sqlalchemy as sa

from ministack import executor
from tests.support import waiting
from tests.support.daemons import free_port

PG_BIN = "/usr/lib/postgresql/15/bin"
PASSWORD = "secret-" + uuid.uuid4().hex[:8]


def _wait_for(probe, timeout, what, log=None):
    try:
        waiting.wait_for(what, probe, timeout=timeout, interval=0.2,
                         ignoring=Exception)   # retried until the deadline
        return
    except waiting.WaitTimeout as timed_out:
        last = timed_out.error or timed_out.value
    tail = ""
    if log and os.path.exists(log):
        with open(log, errors="replace") as f:
            tail = "".join(f.readlines()[-20:])
    pytest.fail("%s not ready after %ss (%s)\n%s" % (what, timeout, last,
                                                     tail))


def _admin_execute(url, statements, **connect_args):
    engine = sa.create_engine(url, isolation_level="AUTOCOMMIT",
                              connect_args=connect_args)
    try:
        with engine.connect() as conn:
            for statement in statements:
                conn.exec_driver_sql(statement)
    finally:
        engine.dispose()


# --- PostgreSQL ---------------------------------------------------------


@pytest.fixture(scope="module")
def postgresql_urls(request):
    """A private PostgreSQL 15 cluster: local socket trust for the
    superuser, scram passwords over TCP (what the daemons use)."""
    if not os.path.exists(os.path.join(PG_BIN, "initdb")):
        pytest.skip("PostgreSQL 15 server not installed: apt-get install "
                    "postgresql")
    tmp = tempfile.mkdtemp(prefix="ministack-pg-")
    data = os.path.join(tmp, "data")
    log = os.path.join(tmp, "postgres.log")
    port = free_port()
    as_pg = ("runuser", "-u", "postgres", "--")

    def _stop():
        if os.path.exists(os.path.join(data, "postmaster.pid")):
            executor.execute(*as_pg, PG_BIN + "/pg_ctl", "-D", data, "-m",
                             "immediate", "-w", "stop",
                             check_exit_code=False, timeout=60)
        shutil.rmtree(tmp, ignore_errors=True)

    request.addfinalizer(_stop)
    shutil.chown(tmp, "postgres", "postgres")
    executor.execute(*as_pg, PG_BIN + "/initdb", "-D", data, "-U",
                     "postgres", "-E", "UTF8", "--auth-local=trust",
                     "--auth-host=scram-sha-256", timeout=120)
    options = ("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off"
               % (port, tmp))
    executor.execute(*as_pg, PG_BIN + "/pg_ctl", "-D", data, "-l", log,
                     "-o", options, "-w", "-t", "60", "start", timeout=90)
    admin = "postgresql+psycopg://postgres@/postgres?host=%s&port=%d" % (
        tmp, port)
    _admin_execute(admin, [
        "CREATE ROLE ministack LOGIN PASSWORD '%s'" % PASSWORD,
        "CREATE DATABASE keystone OWNER ministack",
        "CREATE DATABASE nova OWNER ministack",
        "CREATE DATABASE cinder OWNER ministack",
    ])
    base = "postgresql+psycopg://ministack:%s@127.0.0.1:%d/" % (PASSWORD,
                                                                port)

    def restart():
        """Stop the server (dropping every connection) and start it."""
        executor.execute(*as_pg, PG_BIN + "/pg_ctl", "-D", data, "-l", log,
                         "-o", options, "-m", "fast", "-w", "-t", "60",
                         "restart", timeout=120)

    return {"keystone": base + "keystone", "nova": base + "nova",
            "cinder": base + "cinder", "restart": restart}


# --- MariaDB ------------------------------------------------------------


def _first_binary(*names):
    for name in names:
        path = shutil.which(name) or (
            "/usr/sbin/" + name if os.path.exists("/usr/sbin/" + name)
            else None)
        if path:
            return path
    return None


@pytest.fixture(scope="module")
def mariadb_urls(request):
    """A private mariadbd on its own datadir, socket and port."""
    server = _first_binary("mariadbd", "mysqld")
    install_db = _first_binary("mariadb-install-db", "mysql_install_db")
    if not server or not install_db:
        pytest.skip("MariaDB server not installed: apt-get install "
                    "mariadb-server")
    tmp = tempfile.mkdtemp(prefix="ministack-mariadb-")
    data = os.path.join(tmp, "data")
    sock = os.path.join(tmp, "mysqld.sock")
    log = os.path.join(tmp, "mariadb.err")
    port = free_port()
    server_proc = []    # the running mariadbd (restart() replaces it)

    def _stop_server():
        proc = server_proc.pop() if server_proc else None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)

    def _stop():
        _stop_server()
        shutil.rmtree(tmp, ignore_errors=True)

    request.addfinalizer(_stop)
    # --no-defaults keeps /etc/mysql (the system instance's config) out.
    executor.execute(install_db, "--no-defaults", "--datadir=" + data,
                     "--user=root", "--auth-root-authentication-method=normal",
                     "--skip-test-db", timeout=180)
    admin = "mysql+pymysql://root@localhost/?unix_socket=%s" % sock

    def _start_server():
        # A long-running server has no executor equivalent: Popen, stopped
        # by the finalizer above.
        proc = subprocess.Popen(
            [server, "--no-defaults", "--datadir=" + data,
             "--socket=" + sock, "--port=%d" % port,
             "--bind-address=127.0.0.1", "--user=root",
             "--pid-file=" + os.path.join(tmp, "mariadbd.pid"),
             "--log-error=" + log, "--skip-name-resolve",
             "--innodb-flush-log-at-trx-commit=2"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        server_proc.append(proc)

        def _up():
            if proc.poll() is not None:
                pytest.fail("mariadbd exited with %s" % proc.returncode)
            _admin_execute(admin, ["SELECT 1"])
            return True

        _wait_for(_up, 60, "mariadbd", log)

    def restart():
        """Stop the server (dropping every connection) and start it."""
        _stop_server()
        _start_server()

    _start_server()
    _admin_execute(admin, [
        "CREATE USER 'ministack'@'127.0.0.1' IDENTIFIED BY '%s'" % PASSWORD,
        "CREATE DATABASE keystone CHARACTER SET utf8mb4",
        "CREATE DATABASE nova CHARACTER SET utf8mb4",
        "CREATE DATABASE cinder CHARACTER SET utf8mb4",
        "GRANT ALL ON keystone.* TO 'ministack'@'127.0.0.1'",
        "GRANT ALL ON nova.* TO 'ministack'@'127.0.0.1'",
        "GRANT ALL ON cinder.* TO 'ministack'@'127.0.0.1'",
    ])
    base = "mysql+pymysql://ministack:%s@127.0.0.1:%d/" % (PASSWORD, port)
    return {"keystone": base + "keystone?charset=utf8mb4",
            "nova": base + "nova?charset=utf8mb4",
            "cinder": base + "cinder?charset=utf8mb4", "restart": restart}


# --- SQLite (the default deployment), as the baseline --------------------


@pytest.fixture(scope="module")
def sqlite_urls(tmp_path_factory):
    """Files, as devstack's default sqlite:///$DATA_DIR/<db>.sqlite."""
    tmp = tmp_path_factory.mktemp("sqlite")
    return {"keystone": "sqlite:///%s/keystone.sqlite" % tmp,
            "nova": "sqlite:///%s/nova.sqlite" % tmp,
            "cinder": "sqlite:///%s/cinder.sqlite" % tmp}


