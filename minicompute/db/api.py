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
nodes (``compute_nodes.py``) and flavors (``flavors.py``, whose
extra-spec and access functions callers import from there), with
``to_dict`` in ``rows.py``; they are re-exported here so callers only
ever import ``minicompute.db.api``.
"""

from minicompute.db import session
from minicompute.db.actions import (  # noqa: F401 (re-exported)
    action_event_finish, action_event_start, action_events_get,
    action_events_running, action_finish, action_get_all,
    action_get_by_request_id, action_start)
from minicompute.db.bdms import (  # noqa: F401 (re-exported)
    bdm_create, bdm_destroy, bdm_get, bdm_get_all_by_instance,
    bdm_get_all_volumes, bdm_get_by_uuid, bdm_get_by_volume,
    bdm_get_by_volume_and_instance, bdm_instances_of_volume, bdm_update)
from minicompute.db.compute_nodes import (  # noqa: F401 (re-exported)
    compute_node_get, compute_node_get_all, compute_node_report)
from minicompute.db.flavors import (  # noqa: F401 (re-exported)
    flavor_create, flavor_destroy, flavor_get, flavor_get_all,
    flavor_update)
from minicompute.db.instances import (  # noqa: F401 (re-exported)
    UNSET, instance_create, instance_destroy, instance_get,
    instance_get_all, instance_get_all_including_deleted, instance_get_dict,
    instance_get_including_deleted, instance_update)
from minicompute.db.rows import to_dict  # noqa: F401 (re-exported)
from minicompute.db.services import (  # noqa: F401 (re-exported)
    service_destroy, service_get_all, service_get_by_host_and_binary,
    service_heartbeat, service_is_up, service_liveness, service_update)


def configure(engine):
    """Point this module at ``engine`` (call once at service start-up)."""
    session.configure(engine)
