"""The API phase of a server's user metadata and access IPs.

Both are the user's own notes on the server, kept in the nova database
and never sent to the compute host (there is no metadata service or
config drive to carry them into the guest): ``/servers/{id}/metadata``
reads and changes the items (nova's ``update_instance_metadata`` and
``delete_instance_metadata``: a server with an operation in flight, or
not active, paused, suspended or stopped, is a 409), and ``accessIPv4``
and ``accessIPv6`` are set at create and update. The one quota
ministack enforces, nova's ``metadata_items`` (128), counts the items
the server would have after the change (403 beyond).
"""

import ipaddress

from miniapi.compute import checks
from minicompute import vm_states
from minicompute.db import api as db_api

#: nova's check on update_instance_metadata and delete_instance_metadata.
ALLOW_METADATA_CHANGE = [vm_states.ACTIVE, vm_states.PAUSED,
                         vm_states.SUSPENDED, vm_states.STOPPED]


def access_ip(value):
    """The address as nova's IPAddress field stores it (``::babe:dc0c:1602``
    for ``0000:...:babe:220.12.22.2``); None for none or "". The schema
    has checked the format."""
    if not value:
        return None
    return str(ipaddress.ip_address(value))


def access_ip_values(access_ip_v4=None, access_ip_v6=None, given=()):
    """The ``instances`` columns of the access IPs named in ``given``
    (``accessIPv4``, ``accessIPv6``): only those the request carried."""
    values = {}
    if "accessIPv4" in given:
        values["access_ip_v4"] = access_ip(access_ip_v4)
    if "accessIPv6" in given:
        values["access_ip_v6"] = access_ip(access_ip_v6)
    return values


class ServerMetadataOperations:
    """Server metadata; mixed into :class:`miniapi.compute.api.API`."""

    def get_instance_metadata(self, ctxt, instance):
        """The server's metadata, ``{key: value}``."""
        return db_api.instance_metadata_get(ctxt, instance.uuid)

    @checks.guard("update metadata", vm_state=ALLOW_METADATA_CHANGE)
    def update_instance_metadata(self, ctxt, instance, metadata,
                                 delete=False):
        """Merge ``metadata`` into the server's (POST, PUT of one key), or
        replace it (``delete``: PUT of the whole set).

        :returns: the server's metadata afterwards.
        :raises Forbidden: more than ``checks.METADATA_ITEMS`` items
            would result (403); nothing is changed.
        :raises InstanceInvalidState: 409, as the guard says.
        """
        if delete:
            result = dict(metadata)
        else:
            result = dict(db_api.instance_metadata_get(ctxt, instance.uuid))
            result.update(metadata)
        checks.check_metadata_quota(result)
        return db_api.instance_metadata_update(ctxt, instance.uuid,
                                               metadata, delete=delete)

    @checks.guard("delete metadata", vm_state=ALLOW_METADATA_CHANGE)
    def delete_instance_metadata(self, ctxt, instance, key):
        """Delete one item.

        :raises MetadataItemNotFound: no such key (404).
        :raises InstanceInvalidState: 409, as the guard says.
        """
        db_api.instance_metadata_delete(ctxt, instance.uuid, key)
