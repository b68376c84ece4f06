"""Queries on the cinder database.

Every function takes an open SQLAlchemy session (the caller owns the
transaction through ``ministack.db.session_scope``) and, where a user is
involved, the request context, so project scoping is applied in one place:
a project only ever sees its own volumes and attachments, an admin may
read any by id and lists everything only with ``all_tenants``.

State changes go through :func:`volume_transition` /
:func:`attachment_transition`: one ``UPDATE ... WHERE status IN (...)``
whose row count tells whether this request won (``cas.py``). Nothing
here is SQLite-specific; ``with_for_update`` is a no-op on SQLite (whose
writers are serialised anyway) and a row lock on MariaDB/PostgreSQL.

This module is the facade: volumes live in ``volumes.py``, attachments
and a detach's status recompute in ``attachments.py``; their functions
are re-exported here, with the JSON helpers of the text columns.
"""

import json

from minicinder.db.attachments import (  # noqa: F401 (re-exported)
    attachment_create, attachment_get, attachment_get_all,
    attachment_transition, attachment_update, attachment_volume_id,
    attachments_for_volume, volume_detached, volume_detached_remaining,
    volume_recompute_status)
from minicinder.db.volumes import (  # noqa: F401 (re-exported)
    volume_conditional_update, volume_create, volume_get, volume_get_all,
    volume_get_all_including_deleted, volume_glance_metadata_create,
    volume_list_select, volume_soft_delete, volume_transition,
    volume_update, volumes_for_host, volumes_rehost)


def dump_json(value):
    return None if value is None else json.dumps(value)


def load_json(text, default=None):
    return default if not text else json.loads(text)
