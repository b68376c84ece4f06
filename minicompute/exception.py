"""Exceptions of the nova side (miniapi and minicompute).

This module is listed in ``ministack.rpc.ALLOWED_EXMODS``: an exception
raised by a minicompute RPC endpoint arrives in miniapi as the same class
(oslo.messaging rebuilds it from its kwargs), so miniapi maps it to HTTP
with ``exc.code`` exactly as if it had been raised locally.

Hierarchy (``code`` is the HTTP status the API answers with)::

    MinistackException
     ├── Invalid (400)
     │    ├── InvalidDevicePath, InvalidVolume, InvalidInstance...
     ├── Forbidden (403)
     │    └── TooManyDiskDevices
     ├── NotFound (404)
     │    ├── InstanceNotFound, VolumeNotFound, VolumeBDMNotFound,
     │    │   VolumeAttachmentNotFound, FlavorNotFound, ImageNotFound,
     │    │   InstanceActionNotFound, DeviceNotFound, DiskNotFound
     ├── Conflict (409)
     │    ├── InstanceInvalidState, DevicePathInUse,
     │    │   ComputeServiceUnavailable, UnexpectedTaskStateError,
     │    │   UnexpectedVMStateError
     └── NovaException (500)
          ├── DeviceDetachFailed, VolumeAttachFailed, CinderConnectionFailed,
          │   HypervisorUnavailable, InstanceBuildFailed...

Messages follow nova's wording so operators recognise them.
"""

from ministack.exception import Conflict
from ministack.exception import Forbidden
from ministack.exception import Invalid
from ministack.exception import MinistackException
from ministack.exception import NotFound


class NovaException(MinistackException):
    """A compute failure that is not the caller's fault (HTTP 500)."""

    msg_fmt = "An unknown exception occurred."


# --- 400 -------------------------------------------------------------------

class InvalidDevicePath(Invalid):
    msg_fmt = "The supplied device path (%(path)s) is invalid."


class InvalidVolume(Invalid):
    msg_fmt = "Invalid volume: %(reason)s"


class InvalidInstance(Invalid):
    msg_fmt = "Invalid instance: %(reason)s"


class CinderAPIVersionNotAvailable(Invalid):
    msg_fmt = "Nova does not support Cinder API version %(version)s"


# --- 403 -------------------------------------------------------------------

class TooManyDiskDevices(Forbidden):
    msg_fmt = ("The maximum allowed number of disk devices (%(maximum)d) to "
               "attach to a single instance has been exceeded.")


# --- 404 -------------------------------------------------------------------

class InstanceNotFound(NotFound):
    msg_fmt = "Instance %(instance_id)s could not be found."


class MetadataItemNotFound(NotFound):
    msg_fmt = "Metadata item was not found"


class VolumeNotFound(NotFound):
    msg_fmt = "Volume %(volume_id)s could not be found."


class VolumeBDMNotFound(NotFound):
    msg_fmt = "Instance %(instance_uuid)s is not attached to volume " \
              "%(volume_id)s."


class BDMNotFound(NotFound):
    msg_fmt = "No Block Device Mapping with id %(id)s."


class VolumeAttachmentNotFound(NotFound):
    msg_fmt = "Volume attachment %(attachment_id)s could not be found."


class FlavorNotFound(NotFound):
    msg_fmt = "Flavor %(flavor_id)s could not be found."


class FlavorAccessNotFound(NotFound):
    msg_fmt = "Flavor access not found for %(flavor_id)s / %(project_id)s " \
              "combination."


class FlavorExtraSpecsNotFound(NotFound):
    msg_fmt = "Flavor %(flavor_id)s has no extra specs with key " \
              "%(extra_specs_key)s."


class ConsoleNotAvailable(NotFound):
    msg_fmt = "Guest does not have a console available."


class ImageNotFound(NotFound):
    msg_fmt = "Image %(image_id)s could not be found."


class InstanceActionNotFound(NotFound):
    msg_fmt = "Action for request_id %(request_id)s on instance " \
              "%(instance_uuid)s not found"


class InstanceActionEventNotFound(NotFound):
    msg_fmt = "Event %(event)s not found for action id %(action_id)s"


class DeviceNotFound(NotFound):
    msg_fmt = "Device '%(device)s' not found."


class DomainNotFound(NotFound):
    msg_fmt = "Domain %(name)s not found (it went away)."


class DiskNotFound(NotFound):
    msg_fmt = "No disk at %(location)s"


class ComputeHostNotFound(NotFound):
    msg_fmt = "Compute host %(host)s could not be found."


class MigrationNotFound(NotFound):
    msg_fmt = "Migration %(migration_id)s could not be found."


class MigrationNotFoundByStatus(MigrationNotFound):
    msg_fmt = ("Migration not found for instance %(instance_id)s with "
               "status %(status)s.")


# --- 409 -------------------------------------------------------------------

class InstanceInvalidState(Conflict):
    msg_fmt = ("Cannot '%(method)s' instance %(instance_uuid)s while it is "
               "in %(attr)s %(state)s")


class DevicePathInUse(Conflict):
    msg_fmt = "The supplied device path (%(path)s) is in use."


class ComputeServiceUnavailable(Conflict):
    msg_fmt = "Compute service of %(host)s is unavailable at this time."


class UnexpectedTaskStateError(Conflict):
    msg_fmt = ("Conflict updating instance %(instance_uuid)s. "
               "Expected: %(expected)s. Actual: %(actual)s")


class UnexpectedVMStateError(Conflict):
    msg_fmt = ("Conflict updating instance %(instance_uuid)s. "
               "Expected vm_state: %(expected)s. Actual: %(actual)s")


class FlavorExists(Conflict):
    msg_fmt = "Flavor with name %(name)s already exists."


class FlavorIdExists(Conflict):
    msg_fmt = "Flavor with ID %(flavor_id)s already exists."


class FlavorAccessExists(Conflict):
    msg_fmt = "Flavor access already exists for flavor %(flavor_id)s and " \
              "project %(project_id)s combination."


class InstanceIsLocked(Conflict):
    msg_fmt = "Instance %(instance_uuid)s is locked"


# --- 500 -------------------------------------------------------------------

class DeviceDetachFailed(NovaException):
    msg_fmt = "Device detach failed for %(device)s: %(reason)s"


class VolumeAttachFailed(NovaException):
    msg_fmt = ("Volume %(volume_id)s could not be attached. "
               "Reason: %(reason)s")


class CinderConnectionFailed(NovaException):
    msg_fmt = "Connection to cinder host failed: %(reason)s"


class HypervisorUnavailable(NovaException):
    msg_fmt = "Connection to the hypervisor is broken on host: %(host)s"


class InternalError(NovaException):
    msg_fmt = "%(err)s"


class InstanceBuildFailed(NovaException):
    msg_fmt = "Build of instance %(instance_uuid)s failed: %(reason)s"


class VolumeNotCreated(NovaException):
    msg_fmt = ("Volume %(volume_id)s did not finish being created even after "
               "we waited %(seconds)s seconds or %(attempts)s attempts. And "
               "its status is %(volume_status)s.")


class RebuildVolumeBackedFailed(NovaException):
    msg_fmt = ("Failed to rebuild volume backed instance %(instance_uuid)s: "
               "%(reason)s")


class VolumeDriverNotFound(NovaException):
    msg_fmt = "Could not find a handler for %(driver_type)s volume."


class InstancePowerOnFailure(NovaException):
    msg_fmt = "Failed to power on instance: %(reason)s"


class InstancePowerOffFailure(NovaException):
    msg_fmt = "Failed to power off instance: %(reason)s"


# -- live migration (pre-checks: the API answers them with 400 below 2.34,
# and from 2.34 ends the migration in ``error`` instead) -

class MigrationPreCheckError(Invalid):
    msg_fmt = "Migration pre-check error: %(reason)s"


class UnableToMigrateToSelf(Invalid):
    msg_fmt = ("Unable to migrate instance (%(instance_id)s) to current "
               "host (%(host)s).")


class InvalidSharedStorage(Invalid):
    msg_fmt = "%(path)s is not on shared storage: %(reason)s"


class InvalidLocalStorage(Invalid):
    msg_fmt = "%(path)s is not on local storage: %(reason)s"


class NoValidHost(Invalid):
    msg_fmt = "No valid host was found. %(reason)s"


class DestinationDiskExists(Invalid):
    msg_fmt = ("The supplied disk path (%(path)s) already exists, it is "
               "expected not to exist.")


class LiveMigrationFailed(NovaException):
    msg_fmt = "Live migration of instance %(instance_uuid)s failed: " \
              "%(reason)s"


class InvalidMigrationState(Invalid):
    msg_fmt = ("Migration %(migration_id)s state of instance "
               "%(instance_uuid)s is %(state)s. Cannot %(method)s while the "
               "migration is in this state.")

class ResizeError(NovaException):
    msg_fmt = "Resize error: %(reason)s"
