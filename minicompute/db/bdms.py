"""Block device mappings: a volume's attachment to an instance, as nova
records it (the compute host creates one per attach and soft-deletes it
on detach).

``connection_info`` may be given as a dict to :func:`bdm_create` and
:func:`bdm_update`; it is stored as JSON. Every read is one prebuilt Core
select whose rows become model objects in no session (``rows.unbound``):
no ORM load, one read path. Change a row with :func:`bdm_update` or
:func:`bdm_destroy`, never through a session. Part of
``minicompute.db.api``, which re-exports every public function here.
"""

import json
import uuid as uuidlib

import sqlalchemy as sa

from minicompute import exception
from minicompute.db import models
from minicompute.db.rows import json_friendly as _json_friendly
from minicompute.db.rows import unbound as _unbound
from minicompute.db.session import begin as _begin
from ministack import db

_BDMS = models.BlockDeviceMapping.__table__


def _read_one(statement, params):
    with _begin() as conn:
        row = conn.execute(statement, params).one_or_none()
    return None if row is None else _unbound(models.BlockDeviceMapping, row)


def _read_all(statement, params=None):
    with _begin() as conn:
        rows = conn.execute(statement, params or {}).all()
    return [_unbound(models.BlockDeviceMapping, row) for row in rows]


def bdm_create(ctxt, values):
    """Create a BDM row; ``uuid`` is generated when not given.

    ``connection_info`` may be given as a dict; it is stored as JSON.
    One Core INSERT of every column (the model's defaults filled in
    here), no ORM flush: the compute host creates one per attach.

    :returns: the new BDM, in no session (as :func:`bdm_get`'s).
    """
    values = dict(values)
    values.setdefault("uuid", str(uuidlib.uuid4()))
    if isinstance(values.get("connection_info"), dict):
        values["connection_info"] = json.dumps(values["connection_info"])
    row = db.with_defaults(_BDMS, values)
    with _begin() as conn:
        row["id"] = conn.execute(_BDMS.insert(), row).inserted_primary_key[0]
    return models.BlockDeviceMapping(**row)


_LIVE = sa.select(_BDMS).where(_BDMS.c.deleted == 0)
_BDM_BY_ID = _LIVE.where(_BDMS.c.id == sa.bindparam("b_id"))
_BDM_BY_UUID = _LIVE.where(_BDMS.c.uuid == sa.bindparam("b_uuid"))
_BDM_BY_VOLUME_AND_INSTANCE = (
    _LIVE.where(_BDMS.c.volume_id == sa.bindparam("b_volume_id"),
                _BDMS.c.instance_uuid == sa.bindparam("b_instance_uuid"))
    .order_by(_BDMS.c.id.desc()).limit(1))
_BDMS_OF_VOLUME = (
    _LIVE.where(_BDMS.c.volume_id == sa.bindparam("b_volume_id"))
    .order_by(_BDMS.c.id))
_BDMS_OF_VOLUMES = (
    _LIVE.where(_BDMS.c.destination_type == "volume",
                _BDMS.c.volume_id.isnot(None))
    .order_by(_BDMS.c.id))


def bdm_get(ctxt, bdm_id):
    """The live BDM with primary key ``bdm_id``, in no session.

    :raises BDMNotFound:
    """
    bdm = _read_one(_BDM_BY_ID, {"b_id": bdm_id})
    if bdm is None:
        raise exception.BDMNotFound(id=bdm_id)
    return bdm


def bdm_get_by_uuid(ctxt, uuid):
    """The live BDM ``uuid``.

    :raises BDMNotFound:
    """
    bdm = _read_one(_BDM_BY_UUID, {"b_uuid": uuid})
    if bdm is None:
        raise exception.BDMNotFound(id=uuid)
    return bdm


def bdm_get_by_volume_and_instance(ctxt, volume_id, instance_uuid):
    """The live BDM attaching ``volume_id`` to ``instance_uuid``.

    :raises VolumeBDMNotFound: the volume is not attached to the instance.
    """
    bdm = _read_one(_BDM_BY_VOLUME_AND_INSTANCE, {
        "b_volume_id": volume_id, "b_instance_uuid": instance_uuid})
    if bdm is None:
        raise exception.VolumeBDMNotFound(volume_id=volume_id,
                                          instance_uuid=instance_uuid)
    return bdm


def bdm_get_by_volume(ctxt, volume_id):
    """Every live BDM of ``volume_id`` (several when multiattached)."""
    return _read_all(_BDMS_OF_VOLUME, {"b_volume_id": volume_id})


_BDM_INSTANCES_OF_VOLUME = (
    sa.select(_BDMS.c.instance_uuid)
    .where(_BDMS.c.volume_id == sa.bindparam("b_volume_id"),
           _BDMS.c.deleted == 0)
    .order_by(_BDMS.c.id))


def bdm_instances_of_volume(ctxt, volume_id):
    """The instance uuid of every live BDM of ``volume_id``, in BDM id
    order: what the API's already-attached check reads of
    :func:`bdm_get_by_volume`, by one Core select."""
    with _begin() as conn:
        return list(conn.execute(_BDM_INSTANCES_OF_VOLUME,
                                 {"b_volume_id": volume_id}).scalars())


_BDMS_OF_INSTANCE = (
    sa.select(_BDMS)
    .where(_BDMS.c.instance_uuid == sa.bindparam("b_instance_uuid"),
           _BDMS.c.deleted == 0)
    .order_by(_BDMS.c.id))


def bdm_get_all_by_instance(ctxt, instance_uuid):
    """Every live BDM of ``instance_uuid``, in creation order (every
    reserve reads them)."""
    return _read_all(_BDMS_OF_INSTANCE, {"b_instance_uuid": instance_uuid})


def bdm_get_all_volumes(ctxt):
    """Every live BDM of a Cinder volume, of every instance, in id order
    (``ministack-audit``'s nova ledger)."""
    return _read_all(_BDMS_OF_VOLUMES)


def bdm_update(ctxt, bdm_id, values, reload=True):
    """Update live BDM ``bdm_id`` and return it (in no session).

    :param reload: False: do not read the row back; return the columns
        written (``updated_at`` among them), JSON-friendly as
        :func:`to_dict`'s, for a caller that holds the rest of the row
        (the API's attach, the compute host's writes of
        ``connection_info``).
    :raises BDMNotFound:
    """
    values = dict(values)
    if isinstance(values.get("connection_info"), dict):
        values["connection_info"] = json.dumps(values["connection_info"])
    values["updated_at"] = db.utcnow()
    statement = _BDMS.update().where(
        _BDMS.c.id == bdm_id, _BDMS.c.deleted == 0).values(values)
    with _begin() as conn:
        if not conn.execute(statement).rowcount:
            raise exception.BDMNotFound(id=bdm_id)
        if reload:
            row = conn.execute(_BDM_BY_ID, {"b_id": bdm_id}).one()
    if not reload:
        return _json_friendly(values.items())
    return _unbound(models.BlockDeviceMapping, row)


# Soft delete in one statement (deleted = id), no load and flush of the row.
_BDM_DESTROY = (
    _BDMS.update().where(_BDMS.c.id == sa.bindparam("b_id"),
                         _BDMS.c.deleted == 0)
    .values(deleted=_BDMS.c.id, deleted_at=sa.bindparam("b_now"),
            updated_at=sa.bindparam("b_now")))


def bdm_destroy(ctxt, bdm_id):
    """Soft-delete BDM ``bdm_id``; a BDM already gone is not an error."""
    with _begin() as conn:
        conn.execute(_BDM_DESTROY, {"b_id": bdm_id, "b_now": db.utcnow()})
