"""How a ministack daemon starts and stops.

Every ``cmd/<daemon>.py`` is three lines: it calls :func:`run` with its
oslo.config project name and a ``build`` function. ``run`` parses the
config, sets up oslo.log, builds the service, installs SIGTERM/SIGINT
handlers and waits. Any start-up problem (a bad config file, an unreachable
broker or database, a missing system tool) is printed as one line and the
daemon exits 1: no traceback.
"""

import os
import signal
import sys
import threading

from oslo_config import cfg
from oslo_log import log as logging

from ministack import config
from ministack import exception
from ministack import log_safety
from ministack import memtrace

LOG = logging.getLogger(__name__)
#: Seconds a service's stop() may take before the daemon exits without
#: it (below devstack's stop_process, which kills after 30 s).
STOP_TIMEOUT = 20


class Service:
    """What ``build`` returns: something with ``start()`` and ``stop()``.

    ``start`` may block (a WSGI server) or return (an RPC server running in
    its own threads); ``run`` copes with both.
    """

    def start(self, stop_event):
        raise NotImplementedError

    def stop(self):
        pass


def _stop(service, project, timeout):
    """``service.stop()``, given ``timeout`` seconds; False if it is still
    not done (e.g. oslo.messaging's cleanup retrying a broker that moved
    away: a daemon told to stop once hung there for good, its supervisor
    killed, the daemon left running without it)."""
    done = threading.Event()

    def stop():
        try:
            service.stop()
        except Exception:
            LOG.exception("%s: stopping failed", project)
        finally:
            done.set()

    threading.Thread(target=stop, name="stop", daemon=True).start()
    return done.wait(timeout)


def run(project, build, argv=None, conf=None, register_opts=None,
        stop_timeout=STOP_TIMEOUT, _exit=os._exit):
    """Parse config, build the service with ``build(conf)`` and serve it.

    :param project: oslo.config project name (``minicinder``...).
    :param build: callable taking the ConfigOpts and returning a Service.
    :param register_opts: callable registering the daemon's own options.
    :param stop_timeout: seconds the service's ``stop()`` may take; then
        the process exits at once (``_exit``, threads and all) with 1.
    :returns: the process exit code.
    """
    conf = conf or cfg.ConfigOpts()
    argv = sys.argv[1:] if argv is None else argv
    config.register_common_opts(conf)
    if register_opts:
        register_opts(conf)
    try:
        config.parse_args(conf, argv, project)
    except exception.ConfigError as exc:
        print("%s: %s" % (project, exc.format_message()), file=sys.stderr)
        return 1
    logging.setup(conf, project)
    log_safety.install()
    if memtrace.install(project):
        LOG.info("tracemalloc on: SIGUSR2 writes a snapshot report to %s",
                 os.environ[memtrace.ENV])
    stop_event = threading.Event()

    def _on_signal(signum, _frame):
        LOG.info("Caught %s, stopping", signal.Signals(signum).name)
        stop_event.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    try:
        service = build(conf)
    except exception.MinistackException as exc:
        LOG.error("%s cannot start: %s", project, exc.format_message())
        print("%s: %s" % (project, exc.format_message()), file=sys.stderr)
        return 1
    LOG.info("%s starting", project)
    code = 0
    try:
        service.start(stop_event)
        # start() returns at once for RPC services; wait for the signal.
        while not stop_event.wait(1):
            pass
    except exception.MinistackException as exc:
        # A failure while serving (an API worker process died): one line,
        # exit 1, and the supervisor starts the daemon again.
        LOG.error("%s failed: %s", project, exc.format_message())
        code = 1
    finally:
        LOG.info("%s stopping", project)
        stopped = _stop(service, project, stop_timeout)
    if not stopped:
        LOG.error("%s: stop not done after %ss; exiting without it",
                  project, stop_timeout)
        _flush_logs()
        _exit(1)
        return 1
    LOG.info("%s stopped", project)
    return code


def _flush_logs():
    """Write out what the log handlers hold (os._exit skips it)."""
    import logging as std_logging
    for handler in std_logging.getLogger().handlers:
        try:
            handler.flush()
        except Exception:       # a closed stream: nothing to write to
            pass
