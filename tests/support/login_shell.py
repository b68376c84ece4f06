"""A command as an operator types it in a new root shell.

``login_shell(command)`` runs ``bash -lc command`` with a login
environment only: nothing of the test's own environment (no venv on
PATH, no OS_* variables, no MINISTACK_* settings) reaches it, as for
someone who just logged in on the lab. The tiers that run what the
README and docs/ tell people to type use it, so a command that works
only from inside the test suite cannot pass.
"""

import subprocess

LOGIN_ENV = {
    "HOME": "/root", "TERM": "dumb", "USER": "root", "LOGNAME": "root",
    "SHELL": "/bin/bash", "LANG": "C.UTF-8",
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
}


def login_shell(command, timeout=120, cwd="/root"):
    """``bash -lc command`` in ``cwd``; the CompletedProcess (text)."""
    return subprocess.run(["bash", "-lc", command], env=dict(LOGIN_ENV),
                          cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def checked(command, timeout=300):
    """``login_shell(command)`` that must exit 0; its standard output."""
    done = login_shell(command, timeout=timeout)
    assert done.returncode == 0, "%s -> %s\n%s\n%s" % (
        command, done.returncode, done.stdout[-3000:], done.stderr[-3000:])
    return done.stdout


def script(lines, repo):
    """A block of commands as a reader runs it: errexit and pipefail on,
    from the repository's top directory."""
    return "set -e -o pipefail\ncd %s\n%s" % (repo, lines)
