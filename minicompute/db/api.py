"""Data access for the nova database, shared by miniapi and minicompute.

Every function takes the :class:`~ministack.context.RequestContext` first,
opens its own short transaction and returns *detached* ORM rows (the
sessionmaker uses ``expire_on_commit=False``), so callers read attributes
freely after the session is gone but must call an ``*_update`` function to
change anything. Nothing here caches: two daemons write the same rows.

Concurrency rules live in the data-access modules rather than in the
callers:

* ``instance_update`` is a compare-and-swap on ``task_state`` and/or
  ``vm_state`` (nova's ``instance.save(expected_task_state=[None])``): the
  UPDATE carries the expected values in its WHERE clause, so exactly one of
  two racing writers wins and the other gets ``UnexpectedTaskStateError``.
* Soft delete sets ``deleted`` to the row id (nova's ``SoftDeleteMixin``);
  every query only sees rows with ``deleted == 0``.
* Non-admin contexts only see instances of their own project.

Call :func:`configure` once per process with the engine before anything
else. This module is the facade: the functions live by concept in
instances (``instances.py``), block device mappings (``bdms.py``),
actions/events (``actions.py``), services (``services.py``), compute
nodes (``compute_nodes.py``), a server's metadata
(``instance_metadata.py``), migration records (``migration_records.py``)
and flavors (``flavors.py``, whose
extra-spec and access functions callers import from there), with
``to_dict`` in ``rows.py``; they are re-exported here so callers only
ever import ``minicompute.db.api``.
"""

from minicompute.db import session
from minicompute.db.actions import action_event_finish  # noqa: F401 (re-exported)
from minicompute.db.actions import action_event_start  # noqa: F401 (re-exported)
from minicompute.db.actions import action_events_get  # noqa: F401 (re-exported)
from minicompute.db.actions import action_events_running  # noqa: F401 (re-exported)
from minicompute.db.actions import action_finish  # noqa: F401 (re-exported)
from minicompute.db.actions import action_get_all  # noqa: F401 (re-exported)
from minicompute.db.actions import action_get_by_request_id  # noqa: F401 (re-exported)
from minicompute.db.actions import action_start  # noqa: F401 (re-exported)
from minicompute.db.bdms import bdm_create  # noqa: F401 (re-exported)
from minicompute.db.bdms import bdm_destroy  # noqa: F401 (re-exported)
from minicompute.db.bdms import bdm_get  # noqa: F401 (re-exported)
from minicompute.db.bdms import bdm_get_all_by_instance  # noqa: F401 (re-exported)
from minicompute.db.bdms import bdm_get_all_volumes  # noqa: F401 (re-exported)
from minicompute.db.bdms import bdm_get_by_uuid  # noqa: F401 (re-exported)
from minicompute.db.bdms import bdm_get_by_volume  # noqa: F401 (re-exported)
from minicompute.db.bdms import bdm_get_by_volume_and_instance  # noqa: F401 (re-exported)
from minicompute.db.bdms import bdm_instances_of_volume  # noqa: F401 (re-exported)
from minicompute.db.bdms import bdm_update  # noqa: F401 (re-exported)
from minicompute.db.compute_nodes import compute_node_get  # noqa: F401 (re-exported)
from minicompute.db.compute_nodes import compute_node_get_all  # noqa: F401 (re-exported)
from minicompute.db.compute_nodes import compute_node_report  # noqa: F401 (re-exported)
from minicompute.db.flavors import flavor_create  # noqa: F401 (re-exported)
from minicompute.db.flavors import flavor_destroy  # noqa: F401 (re-exported)
from minicompute.db.flavors import flavor_get  # noqa: F401 (re-exported)
from minicompute.db.flavors import flavor_get_all  # noqa: F401 (re-exported)
from minicompute.db.flavors import flavor_update  # noqa: F401 (re-exported)
from minicompute.db.instance_metadata import instance_metadata_delete  # noqa: F401 (re-exported)
from minicompute.db.instance_metadata import instance_metadata_get  # noqa: F401 (re-exported)
from minicompute.db.instance_metadata import instance_metadata_update  # noqa: F401 (re-exported)
from minicompute.db.instances import UNSET  # noqa: F401 (re-exported)
from minicompute.db.instances import instance_create  # noqa: F401 (re-exported)
from minicompute.db.instances import instance_destroy  # noqa: F401 (re-exported)
from minicompute.db.instances import instance_get  # noqa: F401 (re-exported)
from minicompute.db.instances import instance_get_all  # noqa: F401 (re-exported)
from minicompute.db.instances import instance_get_all_including_deleted  # noqa: F401 (re-exported)
from minicompute.db.instances import instance_get_dict  # noqa: F401 (re-exported)
from minicompute.db.instances import instance_get_including_deleted  # noqa: F401 (re-exported)
from minicompute.db.instances import instance_update  # noqa: F401 (re-exported)
from minicompute.db.migration_records import migration_create  # noqa: F401 (re-exported)
from minicompute.db.migration_records import migration_get  # noqa: F401 (re-exported)
from minicompute.db.migration_records import migration_get_all  # noqa: F401 (re-exported)
from minicompute.db.migration_records import (
    migration_get_by_instance_and_status,  # noqa: F401 (re-exported)
)
from minicompute.db.migration_records import (
    migration_get_in_progress_by_instance,  # noqa: F401 (re-exported)
)
from minicompute.db.migration_records import migration_update  # noqa: F401 (re-exported)
from minicompute.db.rows import to_dict  # noqa: F401 (re-exported)
from minicompute.db.services import service_destroy  # noqa: F401 (re-exported)
from minicompute.db.services import service_get_all  # noqa: F401 (re-exported)
from minicompute.db.services import service_get_by_host_and_binary  # noqa: F401 (re-exported)
from minicompute.db.services import service_heartbeat  # noqa: F401 (re-exported)
from minicompute.db.services import service_is_up  # noqa: F401 (re-exported)
from minicompute.db.services import service_liveness  # noqa: F401 (re-exported)
from minicompute.db.services import service_update  # noqa: F401 (re-exported)


def configure(engine):
    """Point this module at ``engine`` (call once at service start-up)."""
    session.configure(engine)
