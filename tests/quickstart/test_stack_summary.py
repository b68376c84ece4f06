"""The lines stack.sh's summary tells people to type, run as printed.

The summary ends with what to try next (``try:``), how to get
credentials (``clients:``), the journey and the audit. They are read from
the last summary in stack.sh's log, as a person reads them off the
terminal, and run verbatim in a new root login shell: a command that
only works from inside the test suite, or a path that moved, fails here.
"""

import json
import os
import re

import pytest

from tests.support import login_shell

STACK_LOG = "/opt/stack/logs/stack.sh.log"
LABEL = re.compile(r"^    ([a-zA-Z][a-zA-Z .]*):\s+(\S.*)$")
CONTINUED = re.compile(r"^ {19}(\S.*)$")


def _summary():
    """The last summary: {label: [lines]}."""
    if not os.path.exists(STACK_LOG):
        pytest.skip("no stack.sh log (%s): deploy the lab first" % STACK_LOG)
    with open(STACK_LOG, errors="replace") as handle:
        lines = handle.read().splitlines()
    starts = [i for i, line in enumerate(lines)
              if "ministack lab is up" in line]
    assert starts, "stack.sh's log has no summary"
    summary, label = {}, None
    for line in lines[starts[-1] + 1:]:
        labelled, continued = LABEL.match(line), CONTINUED.match(line)
        if labelled:
            label = labelled.group(1)
            summary[label] = [labelled.group(2)]
        elif continued and label:
            summary[label].append(continued.group(1))
        elif not line.startswith("    "):
            break                       # the summary ended (journey, ...)
    return summary


def _run(commands, timeout=300):
    done = login_shell.login_shell("set -e -o pipefail\n" + commands,
                                   timeout=timeout)
    assert done.returncode == 0, (commands, done.stdout[-2000:],
                                  done.stderr[-2000:])
    return done.stdout


def test_the_try_lines_run_as_printed():
    tries = _summary()["try"]
    assert any(line.startswith("openstack ") for line in tries), tries
    out = _run("\n".join(tries))
    # The curl line's answer: the compute API's server list, demo's in it.
    servers = json.loads(out.strip().splitlines()[-1])["servers"]
    assert "demo" in [server["name"] for server in servers]


def test_the_clients_line_sources_openrc_as_printed():
    clients = " ".join(_summary()["clients"])
    sourced = re.search(r"source (\S+/openrc) admin admin \(or demo demo\)",
                        clients)
    assert sourced, clients
    for names in ("admin admin", "demo demo"):
        out = _run("source %s %s\nopenstack token issue -f value -c id"
                   % (sourced.group(1), names))
        assert out.strip()
    for client in clients.split(";")[0].split()[:-2]:
        _run("command -v %s" % client)


def test_the_journey_line_runs_the_journey():
    out = _run(_summary()["the journey"][0], timeout=600)
    assert "journey complete in " in out


def test_the_audit_line_finds_no_divergence():
    done = login_shell.login_shell(_summary()["audit"][0], timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "no divergence" in done.stdout + done.stderr


def test_the_files_it_names_exist():
    summary = _summary()
    _run("ls %s" % summary["logs"][0])         # brace expansion, as typed
    assert os.path.exists(summary["stack.sh log"][0])
    assert os.path.exists(summary["passwords"][0].split()[0])
    for path in summary["credentials"][0].split()[:1] + \
            summary["credentials"][-1].split(", "):
        assert os.path.exists(path), path
