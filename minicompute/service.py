"""Assemble and run one compute host: RPC server, heartbeat, driver.

``build(conf)`` does every start-up check before anything is served, each
failure being one readable line (``ministack.service.run`` prints it and
exits 1): the database and the broker must answer, the hypervisor must be
reachable and the tools the driver shells out to must exist. Then
:class:`ComputeService` serves topic ``compute`` as server ``[DEFAULT]
host`` and writes a heartbeat into ``services`` every ``[compute]
report_interval`` seconds, which is how miniapi knows this host is up,
each followed by the node's facts into ``compute_nodes`` (the resource
tracker), which is what os-hypervisors shows and the API schedules to.

The pieces are injectable (``transport``, ``driver``, ``volume_api``), so
unit tests run the same service on ``fake:/`` with the fake driver.

The service also holds this host's armed faults (``minicompute.faults``:
``ministack-fault``), in memory only: it serves their RPC endpoint next
to the manager, and lets the fault points of the attach and detach flows
(``minicompute.faults.points``) fire them. With nothing armed a point is
one dictionary lookup; a restarted host has nothing armed.
"""

import threading

from oslo_log import log as logging
import oslo_messaging as messaging

from minicompute import live_migration
from minicompute import manager
from minicompute import pause_suspend
from minicompute import reconcile
from minicompute import resize
from minicompute import resource_tracker
from minicompute import rpcapi
from minicompute import shelve
from minicompute import shelved_offload
from minicompute.db import api as db_api
from minicompute.faults import endpoint as fault_endpoint
from minicompute.faults import points as fault_points
from minicompute.faults import registry as fault_registry
from minicompute.volume import cinder
from ministack import config
from ministack import context
from ministack import db
from ministack import rpc
from ministack.trace import profiler as trace_profiler

LOG = logging.getLogger(__name__)

BINARY = "nova-compute"


class ComputeService:
    """The RPC server and heartbeat of one compute host."""

    def __init__(self, conf, transport, driver, volume_api):
        self.conf = conf
        self.transport = transport
        self._stop = threading.Event()
        self.faults = fault_registry.ArmedFaults(
            conf.host, on_shot=self._drop_fault_everywhere)
        self._fault_rpcapi = rpcapi.ComputeAPI(transport)
        fault_points.serve(self.faults, conf, self._stop)
        self.driver = driver
        self.manager = manager.ComputeManager(conf, driver, volume_api)
        self.reconciler = reconcile.Reconciler(conf, self.manager)
        self.resource_tracker = resource_tracker.ResourceTracker(conf,
                                                                 driver)
        target = messaging.Target(topic=rpcapi.RPC_TOPIC, server=conf.host)
        shelving = shelve.ShelveEndpoint(self.manager)
        self.shelved_offloader = shelved_offload.ShelvedOffloader(
            conf, conf.host, shelving.shelve_offload_instance)
        self.server = rpc.get_server(transport, target, [
            self.manager, fault_endpoint.FaultEndpoint(self.faults),
            shelving,
            resize.ResizeEndpoint(self.manager, rpcapi.ComputeAPI(transport)),
            pause_suspend.PauseSuspendEndpoint(conf.host, driver,
                                               self.manager.load_instance),
            live_migration.LiveMigrationEndpoint(
                conf, driver, volume_api, self.manager.load_instance,
                rpcapi.ComputeAPI(transport))])
        self._heartbeat_thread = None
        self._reconcile_thread = None

    def _drop_fault_everywhere(self, armed):
        """A one-shot fault fired here: the other hosts drop their copy."""
        self._fault_rpcapi.drop_fault_everywhere(
            context.get_admin_context(), armed.id,
            "dropped: fired on host %s" % self.conf.host)

    def heartbeat(self):
        """One heartbeat; failures are logged, never fatal."""
        try:
            db_api.service_heartbeat(context.get_admin_context(),
                                     self.conf.host, BINARY,
                                     rpcapi.RPC_TOPIC)
        except Exception:
            LOG.exception("Heartbeat into the services table failed")

    def update_available_resource(self):
        """One report of the node's facts; failures are logged, never
        fatal (the heartbeat goes on: the host stays up)."""
        try:
            self.resource_tracker.update_available_resource(
                context.get_admin_context())
        except Exception:
            LOG.exception("Reporting the node into compute_nodes failed")

    def _heartbeat_loop(self):
        while not self._stop.wait(self.conf.compute.report_interval):
            self.heartbeat()
            self.update_available_resource()

    def reconcile(self):
        """One reconciler run; failures are logged, never fatal."""
        try:
            return self.reconciler.run(fix=True)
        except Exception:
            LOG.exception("Reconciler run failed")
            return []

    def _reconcile_loop(self):
        while not self._stop.wait(self.conf.compute.reconcile_interval):
            self.reconcile()

    def offload_shelved(self):
        """One poll for shelved servers to offload; failures are logged,
        never fatal."""
        try:
            return self.shelved_offloader.run()
        except Exception:
            LOG.exception("Polling shelved servers failed")
            return []

    def _shelved_loop(self):
        while not self._stop.wait(self.conf.shelved_poll_interval):
            self.offload_shelved()

    def start(self, stop_event=None):
        self.driver.init_host(self.conf.host)
        # Before the server listens: whatever is still "running" on this
        # host was running in a process that died.
        try:
            self.reconciler.recover_interrupted()
        except Exception:
            LOG.exception("Start-up recovery failed")
        # Also before the server listens, so the first run never races
        # the casts that waited in the queue while this host was down.
        self.reconcile()
        self.server.start()
        # First heartbeat only once the RPC server listens: a host that is
        # "up" in the services table must be able to take a call. Its
        # node comes next (linked to that service row): from then on the
        # API lists the hypervisor and may schedule to it.
        self.heartbeat()
        self.update_available_resource()
        self._heartbeat_thread = threading.Thread(
            target=self._heartbeat_loop, name="heartbeat", daemon=True)
        self._heartbeat_thread.start()
        # Guests that should run but were shut off by a host restart boot
        # in the background (each waits for its agent).
        threading.Thread(
            target=self._resume_guests, name="resume-guests",
            daemon=True).start()
        if self.conf.compute.reconcile_interval:
            self._reconcile_thread = threading.Thread(
                target=self._reconcile_loop, name="reconciler", daemon=True)
            self._reconcile_thread.start()
        if self.conf.shelved_offload_time > 0 and \
                self.conf.shelved_poll_interval > 0:
            threading.Thread(target=self._shelved_loop,
                             name="shelved-offload", daemon=True).start()
        LOG.info("minicompute serving topic %s as host %s",
                 rpcapi.RPC_TOPIC, self.conf.host)

    def _resume_guests(self):
        try:
            self.manager.resume_guests_state(context.get_admin_context(),
                                             self.conf.host)
        except Exception:
            LOG.exception("Resuming guests failed")

    def stop(self):
        self._stop.set()
        try:
            self.server.stop()
            self.server.wait()
        except Exception:
            LOG.exception("Error stopping the RPC server")
        self.driver.cleanup_host()
        fault_points.withdraw(self.faults)
        if self._heartbeat_thread is not None:
            self._heartbeat_thread.join(timeout=5)


def load_driver(conf):
    """The libvirt driver (imported lazily: unit tests never need it)."""
    from minicompute.virt.libvirt import driver as libvirt_driver
    return libvirt_driver.LibvirtDriver(conf)


def build(conf):
    """Check every dependency, then return a ready ComputeService.

    :raises ConfigError: the database or broker cannot be reached.
    :raises MissingTool: a required system command is missing.
    :raises HypervisorUnavailable: libvirt cannot be reached.
    """
    trace_profiler.setup(conf, "nova", "nova-compute")
    engine = db.make_engine(config.database_url(conf, "nova"),
                            connect_timeout=conf.database.connect_timeout)
    db_api.configure(engine)
    transport = rpc.get_transport(conf)
    rpc.check_broker(transport)
    driver = load_driver(conf)
    driver.check_host()  # tools + libvirt reachable: fail before serving
    return ComputeService(conf, transport, driver, cinder.API(conf))
