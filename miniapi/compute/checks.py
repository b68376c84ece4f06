"""Preconditions shared by the API-phase operations.

* instance state guards (nova's ``@check_instance_state``), declared as
  data: the allowed vm_states and task_states are arguments, the error is
  always ``InstanceInvalidState`` (409) naming the offending attribute;
* compute service liveness from the heartbeat table (nova's
  ``check_instance_host(check_is_up=True)``): work for a down host is
  refused with 409 instead of waiting for an RPC timeout;
* the one quota ministack enforces, nova's default ``metadata_items``.
"""

import functools
import re

from minicompute import exception
from minicompute.db import api as db_api
from ministack import exception as ms_exception

COMPUTE_TOPIC = "compute"

#: nova's default ``[quota] metadata_items`` (``maxServerMeta`` in limits).
METADATA_ITEMS = 128

# nova/block_device.py: /dev/[x][prefix-letter][d]<letters>[digits]
_DEVICE_RE = re.compile(r"(^/dev/x{0,1}[a-z]{0,1}d{0,1})([a-z]+)[0-9]*$")


def check_instance_state(instance, method, vm_state=None, task_state=(None,)):
    """Raise InstanceInvalidState unless the instance may run ``method``.

    :param vm_state: allowed vm_states (None: any).
    :param task_state: allowed task_states (default: none in flight).
    """
    if vm_state is not None and instance.vm_state not in vm_state:
        raise exception.InstanceInvalidState(
            attr="vm_state", instance_uuid=instance.uuid,
            state=instance.vm_state, method=method)
    if task_state is not None and instance.task_state not in task_state:
        raise exception.InstanceInvalidState(
            attr="task_state", instance_uuid=instance.uuid,
            state=instance.task_state, method=method)


def guard(method, vm_state=None, task_state=(None,)):
    """Decorator form of :func:`check_instance_state`.

    The decorated API method takes ``(self, ctxt, instance, ...)``; the
    precondition then reads in the method header, as upstream's does.
    """
    def decorator(func):
        @functools.wraps(func)
        def wrapper(self, ctxt, instance, *args, **kwargs):
            check_instance_state(instance, method, vm_state, task_state)
            return func(self, ctxt, instance, *args, **kwargs)
        return wrapper
    return decorator


def check_device(device):
    """A requested device name must look like /dev/vdX (400 otherwise)."""
    if device is not None and not _DEVICE_RE.match(device):
        raise exception.InvalidDevicePath(path=device)


def host_status(ctxt, host, down_time):
    """UP, DOWN or "" (no host / unknown), as nova's ``host_status``."""
    if not host:
        return ""
    service = db_api.service_liveness(ctxt.elevated(), host, COMPUTE_TOPIC)
    if service is None:
        return "UNKNOWN"
    if not db_api.service_is_up(service, down_time):
        return "DOWN"
    return "MAINTENANCE" if service.disabled else "UP"


def check_host_up(ctxt, instance, down_time):
    """Refuse (409) work whose RPC would go to a down compute service."""
    if host_status(ctxt, instance.host, down_time) not in ("UP",
                                                           "MAINTENANCE"):
        raise exception.ComputeServiceUnavailable(host=instance.host)


def check_metadata_quota(metadata):
    """nova's ``_check_metadata_properties_quota``: at most
    :data:`METADATA_ITEMS` items, else 403 (``MetadataLimitExceeded``)."""
    if len(metadata or {}) > METADATA_ITEMS:
        raise ms_exception.Forbidden(
            message="Maximum number of metadata items exceeds %d"
                    % METADATA_ITEMS)
