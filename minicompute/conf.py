"""Configuration options of minicompute (the nova-compute agent).

Groups:

* ``[compute]``: the service heartbeat and per-instance limits.
* ``[libvirt]``: how the hypervisor is reached and how volumes are plugged.
* ``[cinder]``: how Cinder (minicinder) is reached. miniapi registers this
  group too (``miniapi.conf``), because the Cinder adapter
  ``minicompute/volume/cinder.py`` is shared by both daemons.

Nothing reads an option at import time; ``register_opts(conf)`` is called
by the daemon (``minicompute.cmd.compute``) and by tests on their own
``ConfigOpts``.
"""

from oslo_config import cfg

from ministack import rpc

compute_group = cfg.OptGroup("compute", title="Compute host options")
libvirt_group = cfg.OptGroup("libvirt", title="Libvirt driver options")
cinder_group = cfg.OptGroup("cinder", title="Cinder client options")

default_opts = [
    cfg.IntOpt("reimage_timeout_per_gb", default=20, min=1,
               help="""
Seconds per GiB of the image that a rebuild of a volume-backed server
(compute API 2.93) waits for Cinder's ``volume-reimaged`` event after asking
it to re-image the root volume (``os-reimage``). The image's size is rounded
up to whole GiB. When the event does not come in time (Cinder sends none when
the re-image fails) the server goes to ERROR.
"""),
    cfg.IntOpt("shelved_offload_time", default=0, min=-1,
               help="""
What a shelve of an image-backed server does once its snapshot is taken,
as nova's option of the same name.

Possible values:

* 0: offload at once (upstream's default): the guest is destroyed, its
  volumes' attachments are parked without a connector, and the server
  has no host (``SHELVED_OFFLOADED``).
* -1: never offload: the guest stays defined, powered off (``SHELVED``);
  an admin may offload it with ``shelveOffload``.
* a positive number: the server stays ``SHELVED`` and the host offloads
  it once it has been shelved that many seconds (checked every
  ``shelved_poll_interval`` seconds).

A volume-backed server is always offloaded at once, whatever the value.

Related options:

* shelved_poll_interval
"""),
    cfg.IntOpt("shelved_poll_interval", default=3600,
               help="""
Seconds between the host's checks for shelved servers to offload (nova's
``_poll_shelved_instances``), when ``shelved_offload_time`` is positive.
0 or a negative number: never check.

Related options:

* shelved_offload_time
"""),
]

compute_opts = [
    cfg.IntOpt("report_interval", default=10, min=1,
               help="""
Seconds between two heartbeats of this service into the ``services`` table.

miniapi considers a compute host down (and refuses to send it work) when
its last heartbeat is older than miniapi's ``[api] service_down_time``.

Related options:

* ``[api] service_down_time`` in miniapi must be well above this.
"""),
    cfg.IntOpt("max_disk_devices_to_attach", default=-1, min=-1,
               help="""
Maximum number of disk devices (root disk included) one instance may have.

Possible values:

* -1: unlimited (upstream's default); the virtio name space still ends
  at /dev/vdzz.
* a positive number: reserving one more device fails with
  TooManyDiskDevices (HTTP 403).
"""),
    cfg.IntOpt("build_timeout", default=120, min=1,
               help="""
Seconds a new instance has to boot far enough for its guest agent to answer
before the build fails and the instance goes to ERROR.
"""),
    cfg.IntOpt("reconcile_interval", default=60, min=0,
               help="""
Seconds between two runs of the reconciler, which cross-checks this host's
BDMs, Cinder's attachments and the guests' disks (the checks of
``ministack-audit``) and repairs what is safe to repair. 0 disables the
periodic run; the start-up run always happens.

Related options:

* reconcile_grace
"""),
    cfg.IntOpt("reconcile_grace", default=120, min=0,
               help="""
Seconds a half-made attach (a BDM still without its Cinder attachment, an
attachment still without its BDM, a volume detaching with no detach in
flight) is left alone before the reconciler treats it as abandoned.

Must be well above ``[DEFAULT] rpc_call_timeout`` of miniapi: the API
phase of an attach lasts up to that long.
"""),
    cfg.IntOpt("block_device_allocate_retries", default=60, min=0,
               help="""
How many times, after the first look, the build checks whether a volume it
asked Cinder to create (from an image or blank, for a server booted from
volume) is ``available``, before it gives up and the build fails (nova's
option of that name).

Related options:

* block_device_allocate_retries_interval
"""),
    cfg.IntOpt("block_device_allocate_retries_interval", default=3, min=0,
               help="""
Seconds between two checks of a volume the build is waiting for.

Related options:

* block_device_allocate_retries
"""),
    cfg.StrOpt("instances_path", default="$state_path/instances",
               help="""
Directory holding one sub-directory per instance (its qcow2 overlay).
"""),
]


libvirt_opts = [
    cfg.StrOpt("connection_uri", default="qemu:///system",
               help="""
libvirt URI of the hypervisor this host manages.
"""),
    cfg.StrOpt("virt_type", default="kvm", choices=["kvm", "qemu"],
               help="""
Domain type of the guests.

Possible values:

* kvm: hardware virtualisation (needs /dev/kvm)
* qemu: TCG emulation, slower but works anywhere

Related options:

* devstack writes the right value for this machine (probed into
  /var/lib/ministack/virt_type).
"""),
    cfg.StrOpt("iscsi_initiator", default="auto",
               choices=["auto", "kernel", "qemu"],
               help="""
Which iSCSI initiator connects Cinder's iSCSI volumes.

Possible values:

* kernel: os-brick logs in with open-iscsi and the guest gets a block
  device (upstream's default path).
* qemu: QEMU's built-in libiscsi initiator connects the LUN straight into
  the guest (``<disk type='network'>``), CHAP through a libvirt secret.
* auto: kernel when iscsiadm and the iscsi_tcp module work, else qemu.
"""),
    cfg.IntOpt("device_detach_attempts", default=8, min=1,
               help="""
How many times a device detach is asked of the guest before the detach
fails with DeviceDetachFailed (and Cinder's volume is rolled back to
in-use).

Related options:

* device_detach_timeout
"""),
    cfg.IntOpt("device_detach_timeout", default=20, min=1,
               help="""
Seconds to wait for libvirt's device-removed event after each detach
request before asking again.

Related options:

* device_detach_attempts
"""),
    cfg.StrOpt("live_migration_peer_uri",
               help="""
libvirt URI by which another compute host's libvirtd (the source of a
live migration, peer to peer) reaches this host's libvirtd. Unset: this
host's ``connection_uri``, right when every host has its own machine.

Possible values:

* ``qemu+unix:///system?socket=PATH``: hosts on one machine, each
  libvirtd in its own mount namespace
* ``qemu+tcp://HOST/system``: hosts on separate machines
"""),
    cfg.StrOpt("live_migration_inbound_addr",
               help="""
Address the source's QEMU sends a live migration's memory and disks to
on this host (nova's option of the same name). Unset: ``my_ip``.
"""),
    cfg.IntOpt("wait_soft_reboot_seconds", default=120, min=1,
               help="""
Seconds a SOFT reboot waits for the guest to shut down after the ACPI
power button (nova's option of the same name). A guest still running
then is rebooted HARD (powered off and on).
"""),
]

cinder_opts = [
    cfg.StrOpt("endpoint_template",
               default="http://127.0.0.1:8776/v3/%(project_id)s",
               help="""
URL of the Cinder v3 API, ``%(project_id)s`` being the caller's project.

Possible values:

* ``http://<host>:8776/v3/%(project_id)s``
"""),
    cfg.StrOpt("auth_strategy", default="noauth",
               choices=[("noauth", "send the caller's identity as noauth "
                                   "headers (X-Auth-Token: user:project)"),
                        ("keystone", "forward the caller's token, plus the "
                                     "[service_user] token as "
                                     "X-Service-Token")],
               help="""
How calls to Cinder are authenticated. Must match minicinder's
``auth_strategy``.

Related options:

* ``[service_user]`` (the service account sending X-Service-Token; used
  alone for the host's own periodic work, which has no user token).
"""),
    cfg.IntOpt("http_timeout", default=60, min=1,
               help="Seconds a single HTTP request to Cinder may take."),
    cfg.IntOpt("http_retries", default=3, min=0,
               help="""
How many times a Cinder call that failed with a connection error, 500 or
504 is retried (attachment update and delete are idempotent; see
https://bugs.launchpad.net/nova/+bug/1978444).
"""),
]


def register_opts(conf):
    """Register minicompute's options (and the RPC options) on ``conf``."""
    for group, opts in list_opts():
        if group == "DEFAULT":
            conf.register_opts(opts)
        else:
            _register_group(conf, group, opts)


def register_cinder_opts(conf):
    """Only the ``[cinder]`` group (for users of the Cinder adapter)."""
    _register_group(conf, cinder_group, cinder_opts)


def _register_group(conf, group, opts):
    # A fresh OptGroup per ConfigOpts: register_group() only shallow-copies
    # the group, so sharing one module-level OptGroup would share its
    # options' overrides between ConfigOpts instances (e.g. across tests).
    conf.register_group(cfg.OptGroup(group.name, title=group.title))
    conf.register_opts(opts, group=group.name)


def list_opts():
    """For oslo-config-generator (entry point ``minicompute``)."""
    return [("DEFAULT", default_opts),
            (compute_group, compute_opts),
            (libvirt_group, libvirt_opts),
            (cinder_group, cinder_opts)] + rpc.list_opts()
