"""A real stack tuned for fault tests (the recovery tier's, also run on a
database server by tests/functional/recovery/test_database_restart.py).

A private stack (tests/support/private_stack.py) like
tests/functional/minicompute's (real RabbitMQ, SQLite, LVM/tgt,
libvirt), with settings that make faults quick to observe:

* miniapi's ``rpc_call_timeout`` is 8 s (recovery path 3);
* minicinder checks its exports every 2 s (rebuilt after a tgtd restart);
* the RPC queues are durable (ministack's default ``amqp_durable_queues``);
* minicompute detaches with 2 attempts of 4 s (path 4), gives Cinder
  10 s per request with one retry, and reconciles every 3 s with a 10 s
  grace.

:meth:`Stack.arm_fault` arms one of the seed's failures through the
stack's own compute API (``/v2.1/os-ministack-faults``, the mechanism
``ministack-fault`` drives on the lab: held in minicompute's memory, one
shot by default). :meth:`Stack.audit` runs ``ministack-audit --json`` on
this stack's configs.
"""

import contextlib
import json
import subprocess

from tests.support import daemons
from tests.support import journey
from tests.support import private_stack


class Stack(dict):
    """The daemons plus helpers to fault them."""

    def restart(self, name, timeout=90):
        """Start daemon ``name`` again with its config (after a stop)."""
        old = self[name]
        if name == "compute":
            marker = len(old.log())

            def ready(daemon):
                return "serving topic" in daemon.log()[marker:]
        else:
            ready = daemons.http_ready("/")
        self[name] = daemons.restart_daemon(old, ready, timeout)
        return self[name]

    def arm_fault(self, name, volume_id=None, server_id=None,
                  seconds=None):
        """Arm fault ``name`` (``minicompute.faults.catalog``) as an admin
        arms it; returns the armed fault."""
        fault = {"name": name}
        for key, value in (("volume_id", volume_id),
                           ("server_id", server_id),
                           ("for_seconds", seconds)):
            if value is not None:
                fault[key] = value
        resp = self["nova"].req("POST", "/os-ministack-faults",
                                json={"fault": fault})
        assert resp.status_code == 200, resp.text
        return resp.json()["fault"]

    def audit(self, *extra):
        """``ministack-audit --json`` on this stack: (rc, report)."""
        proc = subprocess.run(
            [daemons.binary_path("ministack-audit"), "--json",
             "--own-loops-only", "--compute-config",
             self["compute"].conf_path, "--cinder-config",
             self["cinder"].conf_path, *extra],
            capture_output=True, text=True, timeout=300)
        assert proc.returncode != 3, proc.stderr
        try:
            return proc.returncode, json.loads(proc.stdout)
        except ValueError:
            raise AssertionError("ministack-audit exited %s without a "
                                 "report: %s" % (proc.returncode,
                                                 proc.stderr[-3000:]))


@contextlib.contextmanager
def fault_stack(tmp, prefix, databases=None):
    """A private stack with the settings above, as a :class:`Stack`.

    :param databases: ``{"nova": url, "cinder": url}`` to run on a
        database server instead of the default SQLite files.
    """
    ps = private_stack.PrivateStack(tmp, prefix)
    if databases:
        ps.nova_db, ps.cinder_db = databases["nova"], databases["cinder"]
    stack = Stack(run=ps.run, tag=ps.tag, host=ps.host, image=ps.image,
                  nova_db=ps.nova_db, cinder_db=ps.cinder_db,
                  name_template=ps.name_template,
                  state=str(ps.state))
    try:
        cinder = ps.start_cinder({"DEFAULT": {"export_check_interval": 2}})
        endpoint = ps.endpoint(cinder)
        api = ps.start_api(cinder, {"DEFAULT": {"rpc_call_timeout": 8}})
        compute = ps.start_compute(endpoint, {
            "compute": {"report_interval": 5, "reconcile_interval": 3,
                        "reconcile_grace": 10},
            "libvirt": {"device_detach_attempts": 2,
                        "device_detach_timeout": 4},
            "cinder": {"http_timeout": 10, "http_retries": 1}})
        stack.update(cinder=cinder, api=api, compute=compute,
                     cinder_api=journey.Cinder(cinder.url),
                     nova=journey.Nova(api.url),
                     probe=journey.Probe(ps.nova_db, ps.name_template))
        yield stack
    finally:
        if "probe" in stack:
            stack["probe"].close()
        # a test may have restarted a daemon: stop the current ones too
        ps.cleanup([stack[name] for name in ("compute", "api", "cinder")
                    if name in stack])
