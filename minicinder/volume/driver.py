"""The contract between the volume manager and a storage backend.

A driver owns everything outside the database: carving and wiping the
block device, the iSCSI export and its access list. It receives plain
:class:`VolumeRef` snapshots, never ORM rows, and returns what must be
persisted (``provider_auth``, ``provider_location``) as a dict, so the
manager stays the only writer of the database (lesson 1: smart managers,
dumb drivers).

Errors: a driver raises :class:`minicinder.exception.VolumeBackendError`
(wrapping the command that failed) or
:class:`minicinder.exception.InvalidConnector`; library and command
exceptions never escape it.
"""

import abc
import dataclasses
import secrets
import string

from minicinder import exception
from minicinder.volume.targets import iscsi_names


@dataclasses.dataclass(frozen=True)
class VolumeRef:
    """What a driver may know about a volume."""

    id: str
    size: int
    provider_auth: str | None = None
    provider_location: str | None = None

    @classmethod
    def from_model(cls, volume):
        return cls(id=volume.id, size=volume.size,
                   provider_auth=volume.provider_auth,
                   provider_location=volume.provider_location)


def generate_chap(length=16):
    """Fresh per-volume CHAP credentials: ``(username, password)``."""
    alphabet = string.ascii_letters + string.digits
    user = "".join(secrets.choice(alphabet) for _ in range(20))
    password = "".join(secrets.choice(alphabet) for _ in range(length))
    return user, password


def parse_provider_auth(provider_auth):
    """``"CHAP user pass"`` -> ``(user, pass)``, or None when unset."""
    if not provider_auth:
        return None
    method, user, password = provider_auth.split(" ", 2)
    if method != "CHAP":
        return None
    return user, password


def require_initiator(connector):
    """The connector's iSCSI initiator name, which the ACL admits.

    :raises InvalidConnector: the connector has none, or not a
        well-formed iSCSI name (the API refuses those first).
    """
    from minicinder import exception
    initiator = (connector or {}).get("initiator")
    if not iscsi_names.is_valid(initiator):
        raise exception.InvalidConnector(missing="initiator")
    return initiator


def recorded_tid(provider_location):
    """The target id in ``"<portal>,<tid> <iqn> <lun>"``, or None."""
    try:
        return int(provider_location.split(" ", 1)[0].rsplit(",", 1)[1])
    except (AttributeError, IndexError, ValueError):
        return None


class VolumeDriver(abc.ABC):
    """What the manager needs from a backend."""

    @abc.abstractmethod
    def check_for_setup_error(self):
        """Raise a ConfigError / MissingTool naming what is missing."""

    def share_state(self, path):
        """Several processes drive this backend (API workers): what one
        learns and others may reuse goes in directory ``path`` (root
        only). Nothing by default."""
        return None

    @abc.abstractmethod
    def create_volume(self, volume):
        """Create the block device for ``volume`` (size in GiB).

        :returns: dict of columns to persist (may be empty).
        """

    @abc.abstractmethod
    def create_cloned_volume(self, volume, src_vref):
        """Create ``volume``'s device (``volume.size`` GiB, at least the
        source's) holding a copy of ``src_vref``'s data. On failure
        nothing of the new device is left.

        :returns: dict of columns to persist (may be empty).
        """

    @abc.abstractmethod
    def delete_volume(self, volume):
        """Remove any export, wipe the data, then remove the device.

        Deleting a volume whose device is already gone succeeds.
        """

    @abc.abstractmethod
    def copy_image_to_volume(self, volume, image):
        """Write ``image``'s disk (a ``ministack.images`` record: ``disk``
        path, ``disk_format``) onto the new volume's device, as raw."""

    @abc.abstractmethod
    def extend_volume(self, volume, new_size):
        """Grow ``volume``'s device to ``new_size`` GiB (larger than
        ``volume.size``), keeping its data. Any export is removed first
        (it serves the old device); the next connection exports the grown
        one.

        :returns: model updates (``provider_location: None``).
        """

    def extend_attached_volume(self, volume, new_size):
        """Grow ``volume``'s device to ``new_size`` GiB while a guest uses
        it: in place, the export kept and told the new size (3.42).

        :raises VolumeCannotExtendInPlace: no room to grow where it is
            (nothing changed).
        :raises TargetUpdateFailed: the device grew, the export did not.
        """
        raise exception.VolumeCannotExtendInPlace(
            volume_id=volume.id, new_size=new_size,
            reason="the driver cannot extend attached volumes")

    @abc.abstractmethod
    def create_export(self, volume):
        """Export ``volume`` (idempotent). CHAP credentials are reused from
        ``volume.provider_auth`` or generated.

        :returns: ``{"provider_location": ..., "provider_auth": ...}``.
        """

    @abc.abstractmethod
    def remove_export(self, volume):
        """Tear the export down (idempotent)."""

    @abc.abstractmethod
    def ensure_export(self, volume, initiators):
        """Rebuild the export and its ACL at start-up (idempotent).

        :returns: dict of columns to persist (``provider_location`` when
            the rebuilt export differs from the record), may be empty.
        """

    @abc.abstractmethod
    def missing_exports(self, expected):
        """Which exports the backend has lost, in one look at it.

        :param expected: ``[(VolumeRef, initiators)]`` of the volumes the
            database says are exported.
        :returns: the VolumeRefs whose target, LUN, CHAP account or an
            admitted initiator is missing (extra initiators are not
            reported: legacy connections are not recorded).
        """

    @abc.abstractmethod
    def initialize_connection(self, volume, connector):
        """Admit ``connector['initiator']`` and describe the connection.

        :returns: ``{"driver_volume_type": ..., "data": {...}}``.
        :raises InvalidConnector: no initiator in the connector.
        """

    @abc.abstractmethod
    def terminate_connection(self, volume, connector):
        """Revoke ``connector['initiator']`` (idempotent)."""
