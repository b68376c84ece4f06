"""Assembling the daemon: database, driver, manager, API, WSGI server.

:func:`build` is what ``ministack.service.run`` calls; every start-up
problem (unreachable database, missing tool, missing volume group) is
raised as a ``MinistackException`` naming the culprit, which ``run`` prints
as one line before exiting 1.
"""

import logging
import os

from minicinder import conf as cinder_conf
from minicinder.api import app as api_app
from minicinder.compute import nova
from minicinder.db import session as db_session
from minicinder.volume import actions as volume_actions
from minicinder.volume import api as volume_api
from minicinder.volume import attachments as attachment_api
from minicinder.volume import locks as volume_locks
from minicinder.volume import manager as volume_manager
from minicinder.volume import service_record
from minicinder.volume.drivers import fake as fake_driver
from ministack import config
from ministack import exception as ms_exception
from ministack import service
from ministack import workers as ms_workers
from ministack import wsgi_server
from ministack.trace import middleware as trace_middleware
from ministack.trace import profiler as trace_profiler

LOG = logging.getLogger(__name__)


def make_driver(conf):
    """The configured backend driver, checked for its prerequisites."""
    if conf.volume_driver == "fake":
        driver = fake_driver.FakeDriver(
            target_prefix=conf.target_prefix,
            portal="%s:%s" % (conf.target_ip_address, conf.target_port))
    else:
        # Imported lazily: the LVM driver needs root tools, fake does not.
        from minicinder.volume.drivers import lvm_driver
        driver = lvm_driver.LVMTgtDriver(conf)
    driver.check_for_setup_error()
    return driver


class CinderService(service.Service):
    """The REST API and the volume manager in one process."""

    def __init__(self, conf, database, driver, executor=None,
                 compute=None):
        """:param compute: the Nova adapter (``compute.nova.API``); built
        from ``[nova]`` when omitted (tests hand in a fake)."""
        self.conf = conf
        self.database = database
        self.manager = volume_manager.VolumeManager(
            database, driver, conf.host, executor=executor,
            workers=conf.volume_manager_workers)
        self.service_record = service_record.ServiceRecord(database, conf)
        self.service_record.register()
        compute = compute if compute is not None else nova.API(conf)
        self.manager.compute = compute
        # osprofiler's entry span (minicinder logs its own requests).
        self.app = trace_middleware.TraceMiddleware(api_app.create_app(
            conf,
            volume_api.VolumeAPI(database, self.manager, conf,
                                 service=self.service_record),
            attachment_api.AttachmentAPI(database, self.manager, compute),
            volume_actions.VolumeActions(database, self.manager, compute)))

    def start(self, stop_event):
        """Recover exports, watch them, serve until ``stop_event``.

        With ``osapi_volume_workers`` > 1 the API workers are forked first
        (before this process starts a thread, :mod:`ministack.workers`)
        and serve once the exports are recovered; this process keeps the
        recovery, the export check and the heartbeat, and supervises.
        """
        workers = None
        if self.conf.osapi_volume_workers > 1:
            workers = ms_workers.WorkerProcesses(
                self.app, self.conf.osapi_volume_listen,
                self.conf.osapi_volume_listen_port,
                self.conf.osapi_volume_workers,
                threads=self.conf.osapi_volume_threads, ident="minicinder",
                after_fork=self._after_fork, before_exit=self.stop)
            workers.start()
        try:
            self.manager.init_host()
            self.manager.start_export_check(
                self.conf.export_check_interval, stop_event)
            self.service_record.start_heartbeat(self.conf.report_interval,
                                                stop_event)
        except BaseException:
            if workers is not None:
                workers.stop()   # they never served
            raise
        if workers is not None:
            workers.ready()
            workers.wait(stop_event)
            if workers.failed:
                raise ms_exception.MinistackException(
                    "an API worker process exited")
            return
        wsgi_server.serve(self.app, self.conf.osapi_volume_listen,
                          self.conf.osapi_volume_listen_port,
                          threads=self.conf.osapi_volume_threads,
                          stop_event=stop_event, ident="minicinder")

    def _after_fork(self):
        """In an API worker: its own database connections and job pool
        (the parent's stay the parent's)."""
        self.database.after_fork()
        self.manager.after_fork()

    def stop(self):
        self.manager.stop()
        self.database.dispose()


def build(conf):
    """Open the database (migrating it to head), check the backend (the
    API then checks ``[keystone_authtoken]`` under keystone)."""
    # Every API thread and manager worker may read at once (+2 for
    # start-up recovery and the stop path).
    if conf.osapi_volume_workers > 1 and conf.volume_driver == "fake":
        raise ms_exception.ConfigError(reason=(
            "osapi_volume_workers = %d needs volume_driver = lvm: the fake "
            "driver keeps its volumes in one process's memory"
            % conf.osapi_volume_workers))
    trace_profiler.setup(conf, "cinder", "cinder-api")
    database = db_session.Database(
        config.database_url(conf, "cinder"), conf.database.connect_timeout,
        pool_size=conf.osapi_volume_threads + conf.volume_manager_workers + 2)
    database.upgrade()
    driver = make_driver(conf)
    if conf.osapi_volume_workers > 1:
        lock_path = cinder_conf.lock_path(conf)
        volume_locks.use_lock_files(lock_path)
        driver.share_state(os.path.join(lock_path, "shared"))
    if not conf.nova.endpoint:
        LOG.warning("[nova] endpoint is not set: Nova cannot be asked, so "
                    "only a service may detach an instance's attached "
                    "volume (OSSA-2023-003 without Nova)")
    return CinderService(conf, database, driver)
