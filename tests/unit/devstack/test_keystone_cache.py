"""devstack/lib/memcached and lib/keystone's [cache]: keystone's cache in
a memcached that only root and memcached itself can reach.

The shell functions run in a real bash, as stack.sh runs them, on files
under tmp_path; no lab. The start/stop test runs a real memcached (root
only, and only where Debian's memcached is installed).
"""

import configparser
import os
import shutil
import subprocess

import pytest

DEVSTACK = os.path.abspath(os.path.join(os.path.dirname(__file__), "..",
                                        "..", "..", "devstack"))


def _bash(script, **env):
    """Run ``script`` after sourcing functions, lib/memcached and
    lib/keystone; return the finished process."""
    prelude = ('source "$TOP_DIR/functions"\n'
               'source "$TOP_DIR/lib/memcached"\n'
               'source "$TOP_DIR/lib/keystone"\n')
    return subprocess.run(
        ["bash", "-c", prelude + script],
        env=dict(os.environ, TOP_DIR=DEVSTACK, **env),
        capture_output=True, text=True, timeout=60)


def _keystone_conf(tmp_path, **env):
    done = _bash("configure_keystone",
                 KEYSTONE_CONF_DIR=str(tmp_path / "keystone"), **env)
    assert done.returncode == 0, done.stderr
    conf = configparser.ConfigParser(interpolation=None)
    conf.read(tmp_path / "keystone" / "keystone.conf")
    return conf


def test_keystone_caches_in_the_memcached_its_workers_share(tmp_path):
    """An in-process cache (dogpile.cache.memory) would give each
    gunicorn worker its own: a token revoked through one would still
    validate from the other's cache. memcached is shared."""
    conf = _keystone_conf(tmp_path)
    assert conf.getboolean("cache", "enabled") is True
    assert conf["cache"]["backend"] == "oslo_cache.memcache_pool"
    assert conf["cache"]["memcache_servers"] == \
        "unix:/run/ministack-memcached/memcached.sock"


def test_keystone_follows_a_moved_socket(tmp_path):
    conf = _keystone_conf(tmp_path,
                          MEMCACHED_SOCKET_DIR=str(tmp_path / "mc"))
    assert conf["cache"]["memcache_servers"] == \
        "unix:%s" % (tmp_path / "mc" / "memcached.sock")


def test_keystone_conf_needs_lib_memcached(tmp_path):
    """Without lib/memcached there is no socket to name: configure_keystone
    fails rather than write a cache URL that points nowhere."""
    done = subprocess.run(
        ["bash", "-c", 'source "$TOP_DIR/functions"\n'
         'source "$TOP_DIR/lib/keystone"\nconfigure_keystone'],
        env=dict(os.environ, TOP_DIR=DEVSTACK,
                 KEYSTONE_CONF_DIR=str(tmp_path / "keystone")),
        capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "lib/memcached is not sourced" in done.stderr


def test_keystone_venv_gets_the_memcached_client_pinned():
    done = _bash('echo "$KEYSTONE_PIP_PACKAGES"')
    assert "python-memcached==1.62" in done.stdout.split()


def test_memcached_listens_on_a_private_unix_socket_only():
    """-s (no TCP), -U 0 (no UDP), the socket 0700, and not as root."""
    done = _bash("memcached_command")
    argv = done.stdout.split("\n")[:-1]
    assert argv[0] == "memcached"
    opts = dict(zip(argv[1::2], argv[2::2], strict=True))
    assert opts == {"-s": "/run/ministack-memcached/memcached.sock",
                    "-a": "0700", "-U": "0", "-u": "memcache", "-m": "64"}
    assert not {"-l", "-p", "--listen", "--port"} & set(argv)


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("memcached"),
                    reason="needs root and Debian's memcached")
def test_start_is_idempotent_restarts_on_change_and_stop_cleans(tmp_path):
    """A second start keeps the running memcached; a new command line
    restarts it; stop ends it and removes its socket directory. (As
    root here: the memcache user cannot enter pytest's tmp_path.)"""
    sock_dir = tmp_path / "run" / "mc"
    env = dict(MEMCACHED_SOCKET_DIR=str(sock_dir), MEMCACHED_USER="root",
               STATUS_DIR=str(tmp_path / "status"),
               LOGDIR=str(tmp_path / "logs"), SERVICE_TIMEOUT="20",
               PYTHON="/usr/bin/python3")
    script = ('start_memcached >/dev/null\necho "$(read_pid memcached)"\n'
              'stat -c %a "$MEMCACHED_SOCKET_DIR" "$MEMCACHED_SOCKET"\n'
              'memcached_stats | grep -c "^STAT pid "\n'
              'start_memcached\necho "$(read_pid memcached)"\n'
              'MEMCACHED_MEMORY=32 start_memcached >/dev/null\n'
              'echo "$(read_pid memcached)"\n')
    try:
        done = _bash(script, **env)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        first, modes, stats, again, kept, restarted = (
            lines[0], lines[1:3], lines[3], lines[4], lines[5], lines[6])
        assert modes == ["700", "700"]
        assert stats == "1"
        assert "already running" in again
        assert kept == first
        assert restarted != first
        assert "-m 32" in open("/proc/%s/cmdline" % restarted).read() \
            .replace("\0", " ")
    finally:
        stopped = _bash("stop_memcached", **env)
    assert stopped.returncode == 0, stopped.stderr
    assert not sock_dir.exists()
    assert not (tmp_path / "status" / "memcached.pid").exists()
