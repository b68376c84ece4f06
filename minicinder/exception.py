"""minicinder's exceptions: small ``msg_fmt`` subclasses of the shared base.

Hierarchy (``code`` is the HTTP status the API layer renders)::

    ministack.exception.MinistackException
     ├── Invalid (400)
     │    ├── InvalidVolume             a state precondition failed
     │    ├── InvalidVolumeAttachment
     │    ├── InvalidVolumeType
     │    ├── InvalidVolumeAttachMode   rw asked of a read-only volume
     │    ├── InvalidAuthKey            a transfer accepted with a wrong key
     │    └── InvalidConnector          connector lacks what the driver needs
     ├── Forbidden (403)                 PolicyNotAuthorized
     ├── NotFound (404)
     │    ├── VolumeNotFound / VolumeAttachmentNotFound / VolumeTypeNotFound
     │    ├── SnapshotNotFound / BackupNotFound / GroupNotFound /
     │    │   ConsistencyGroupNotFound  (none ever exist here)
     │    ├── VolumeMetadataNotFound / VolumeTypeExtraSpecsNotFound /
     │    │   VolumeTypeAccessNotFound / TransferNotFound /
     │    │   GlanceMetadataNotFound /
     │    │   ServiceNotFound
     │    └── VersionNotFoundForAPIMethod   route below its microversion
     ├── Conflict (409)                  ResourceConflict, VolumeTypeExists,
     │                                   VolumeTypeAccessExists,
     │                                   ConflictNovaUsingAttachment,
     │                                   ConflictNovaNotAsked
     ├── RequestTooLarge (413)
     ├── QuotaError (413)                VolumeLimitExceeded,
     │                                   VolumeSizeExceedsAvailableQuota
     ├── VolumeBackendError (500)        the driver failed (translated once)
     └── ComputeAPIUnavailable (503)     Nova could not be asked (raised by
                                         compute/nova.py; the deletion check
                                         turns it into ConflictNovaNotAsked)
"""

from ministack import exception as base
from ministack import wsgi


class InvalidVolume(base.Invalid):
    msg_fmt = "Invalid volume: %(reason)s"


class InvalidVolumeAttachment(base.Invalid):
    msg_fmt = "Invalid volume attachment: %(reason)s"


class InvalidVolumeType(base.Invalid):
    msg_fmt = "Invalid volume type: %(reason)s"


class InvalidVolumeAttachMode(base.Invalid):
    msg_fmt = ("Invalid attaching mode '%(mode)s' for volume "
               "%(volume_id)s.")


class InvalidAuthKey(base.Invalid):
    msg_fmt = "Attempt to transfer %(transfer_id)s with invalid auth key."


class InvalidConnector(base.Invalid):
    msg_fmt = "Connector doesn't have required information: %(missing)s"


class PolicyNotAuthorized(base.Forbidden):
    msg_fmt = "Policy doesn't allow %(action)s to be performed."


class VolumeNotFound(base.NotFound):
    msg_fmt = "Volume %(volume_id)s could not be found."


class VolumeAttachmentNotFound(base.NotFound):
    msg_fmt = "Volume attachment %(attachment_id)s could not be found."


class VolumeTypeNotFound(base.NotFound):
    msg_fmt = "Volume type %(volume_type_id)s could not be found."


class VolumeTypeNotFoundByName(VolumeTypeNotFound):
    msg_fmt = "Volume type with name %(volume_type_name)s could not be found."


class VolumeTypeExtraSpecsNotFound(base.NotFound):
    msg_fmt = ("Volume Type %(volume_type_id)s has no extra specs with key "
               "%(extra_specs_key)s.")


class VolumeTypeAccessNotFound(base.NotFound):
    msg_fmt = ("Volume type access not found for %(volume_type_id)s / "
               "%(project_id)s combination.")


class TransferNotFound(base.NotFound):
    msg_fmt = "Transfer %(transfer_id)s could not be found."


class SnapshotNotFound(base.NotFound):
    msg_fmt = "Snapshot %(snapshot_id)s could not be found."


class BackupNotFound(base.NotFound):
    msg_fmt = "Backup %(backup_id)s could not be found."


class GroupNotFound(base.NotFound):
    msg_fmt = "Group %(group_id)s could not be found."


class ConsistencyGroupNotFound(base.NotFound):
    msg_fmt = "ConsistencyGroup %(consistencygroup_id)s could not be found."


class VolumeMetadataNotFound(base.NotFound):
    msg_fmt = ("Volume %(volume_id)s has no metadata with key "
               "%(metadata_key)s.")


class GlanceMetadataNotFound(base.NotFound):
    msg_fmt = "Glance metadata for volume/snapshot %(id)s cannot be found."


class ServiceNotFound(base.NotFound):
    msg_fmt = "Service %(service_id)s could not be found."


class VersionNotFoundForAPIMethod(base.NotFound):
    # Upstream answers with an empty 404: the method "is simply not
    # implemented" at the requested microversion.
    msg_fmt = "The resource could not be found."


class ResourceConflict(base.Conflict):
    msg_fmt = "Conflict: %(reason)s"


class ReimageMultiattached(base.Conflict):
    msg_fmt = ("Cannot re-image a volume which is attached to more than one "
               "server.")


class ConflictNovaUsingAttachment(base.Conflict):
    # OSSA-2023-003 (bug 2004555): only Nova may tear down what it uses.
    msg_fmt = ("Detach volume from instance %(instance_id)s using the "
               "Compute API")


class ConflictNovaNotAsked(base.Conflict):
    # The OSSA-2023-003 check fails closed: when Nova cannot say whether it
    # uses the attachment, a user may not tear it down.
    msg_fmt = ("Cannot detach: Nova could not be asked whether instance "
               "%(instance_id)s uses attachment %(attachment_id)s "
               "(%(reason)s). Detach the volume using the Compute API or "
               "retry later.")


class VolumeTypeExists(base.Conflict):
    msg_fmt = "Volume Type %(name)s already exists."


class VolumeTypeAccessExists(base.Conflict):
    msg_fmt = ("Volume type access for %(volume_type_id)s / "
               "%(project_id)s combination already exists.")


class QuotaError(base.MinistackException):
    """Over quota: 413 with the ``overLimit`` fault, as upstream."""
    msg_fmt = "Quota exceeded: code=%(code)s"
    code = 413


class VolumeSizeExceedsAvailableQuota(QuotaError):
    msg_fmt = ("Requested volume or snapshot exceeds allowed %(name)s "
               "quota. Requested %(requested)sG, quota is %(quota)sG and "
               "%(consumed)sG has been consumed.")


class VolumeSizeExceedsLimit(QuotaError):
    msg_fmt = ("Requested volume size %(size)dG is larger than maximum "
               "allowed limit %(limit)dG.")


class VolumeLimitExceeded(QuotaError):
    msg_fmt = ("Maximum number of volumes allowed (%(allowed)d) exceeded "
               "for quota '%(name)s'.")


# The 413 of the body size limit, shared with the other REST services
# (oslo.middleware's message; raise it with ``limit=``).
RequestTooLarge = wsgi.RequestBodyTooLarge


class VolumeBackendError(base.MinistackException):
    msg_fmt = "Volume backend failed: %(reason)s"
    code = 500


class VolumeCannotExtendInPlace(VolumeBackendError):
    """The backend has no room to grow an attached volume where it is
    (upstream's scheduler answers "No valid backend" for that)."""
    msg_fmt = ("Volume %(volume_id)s cannot grow to %(new_size)s GiB "
               "while attached: %(reason)s")


class TargetUpdateFailed(VolumeBackendError):
    """The volume grew but its export still serves the old size
    (upstream's TargetUpdateFailed: logged, the extend stands)."""
    msg_fmt = "Failed to update target for volume %(volume_id)s: %(reason)s"


class ComputeAPIUnavailable(base.MinistackException):
    msg_fmt = "Nova could not be asked: %(reason)s"
    code = 503


class VolumeGroupNotFound(base.ConfigError):
    msg_fmt = ("Volume group %(vg)s does not exist (option [DEFAULT] "
               "volume_group); create it or run devstack/stack.sh.")


# Re-exported so callers need one import for every minicinder error.
InvalidInput = base.InvalidInput
Invalid = base.Invalid
NotFound = base.NotFound
