"""No daemon or CLI of ministack loads oslo.service's eventlet backend or
prints eventlet's deprecation warning (it did at every command)."""

import os
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..",
                                    ".."))


def test_daemons_and_cli_import_without_eventlet_warning():
    code = ("import ministack_audit.cmd, miniapi.service, minicinder.service,"
            " minicompute.manager, oslo_messaging\n"
            "from oslo_service import backend, service\n"
            "print(backend.get_backend_type().value)\n")
    env = dict(os.environ, PYTHONPATH=REPO, PYTHONWARNINGS="default")
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "threading"
    assert "Eventlet is deprecated" not in done.stderr
