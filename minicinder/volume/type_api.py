"""What a request may do to volume types, their extra specs and their
access lists.

Reading follows visibility: a public type is everyone's, a private one
its access list's projects' and the admins'. Changing anything is for
admins (upstream's default policy).
"""

import logging
import uuid

from minicinder import exception
from minicinder.db import types as types_db

LOG = logging.getLogger(__name__)

MULTIATTACH_SPEC = "multiattach"


def require_admin(ctx, action):
    if not ctx.is_admin:
        raise exception.PolicyNotAuthorized(action=action)


class VolumeTypeAPI:
    """The volume types API, on the service's database and config."""

    def __init__(self, database, conf):
        self.database = database
        self.conf = conf

    def get(self, ctx, type_id):
        """:raises VolumeTypeNotFound: missing, or private and ``ctx`` is
        not an admin."""
        with self.database.read() as session:
            return types_db.volume_type_get_by_name_or_id(
                session, type_id, include_private=ctx.is_admin,
                project_id=ctx.project_id)

    def get_default(self, ctx):
        """The configured default type, shown to everyone (upstream reads
        it with an admin context)."""
        with self.database.read() as session:
            return types_db.volume_type_get_by_name_or_id(
                session, self.conf.default_volume_type)

    def get_all(self, ctx):
        with self.database.read() as session:
            return types_db.volume_type_get_all(session, ctx.is_admin,
                                                ctx.project_id)

    def create(self, ctx, name, description=None, is_public=True,
                    extra_specs=None):
        require_admin(ctx, "volume_extension:types_manage")
        with self.database.write() as session:
            return types_db.volume_type_create(session, {
                "id": str(uuid.uuid4()), "name": name,
                "description": description, "is_public": is_public,
            }, extra_specs or {})

    def delete(self, ctx, type_id):
        require_admin(ctx, "volume_extension:types_manage")
        with self.database.write() as session:
            vtype = types_db.volume_type_get(session, type_id)
            if vtype.name == self.conf.default_volume_type:
                raise exception.InvalidInput(
                    reason="Default volume type can not be deleted")
            if types_db.volume_type_in_use(session, type_id):
                raise exception.InvalidVolumeType(
                    reason="Volume Type %s deletion is not allowed with "
                           "volumes present with the type." % type_id)
            types_db.volume_type_destroy(session, type_id)

    def set_extra_specs(self, ctx, type_id, extra_specs):
        require_admin(ctx, "volume_extension:types_extra_specs:create")
        with self.database.write() as session:
            types_db.volume_type_get(session, type_id)
            if types_db.volume_type_in_use(session, type_id) and \
                    MULTIATTACH_SPEC in extra_specs:
                raise exception.InvalidVolumeType(
                    reason="multiattach cannot change while volumes of "
                           "type %s exist." % type_id)
            types_db.volume_type_extra_specs_update(session, type_id,
                                                    extra_specs)
        return self.get(ctx, type_id)

    def access_list(self, ctx, type_id):
        """:raises VolumeTypeAccessNotFound: a public type has no list
        (404, as upstream)."""
        require_admin(ctx, "volume_extension:volume_type_access")
        with self.database.read() as session:
            vtype = types_db.volume_type_get(session, type_id)
            if vtype.is_public:
                raise exception.VolumeTypeAccessNotFound(
                    volume_type_id=type_id, project_id="*")
            return types_db.volume_type_access_get_all(session, type_id)

    def access_change(self, ctx, type_id, project_id, add):
        require_admin(ctx, "volume_extension:volume_type_access:%s"
                      % ("addProjectAccess" if add else
                         "removeProjectAccess"))
        with self.database.write() as session:
            types_db.volume_type_get(session, type_id)
            if add:
                types_db.volume_type_access_add(session, type_id,
                                                project_id)
            else:
                types_db.volume_type_access_remove(session, type_id,
                                                   project_id)
        LOG.info("Project %s %s access to volume type %s", project_id,
                 "given" if add else "denied", type_id)

    def update(self, ctx, type_id, name=None, description=None,
                    is_public=None):
        """Rename, re-describe or publish/hide a type.

        :raises InvalidInput: the default type renamed (its name is
            configuration, 400).
        :raises VolumeTypeExists: the new name is taken (409).
        """
        require_admin(ctx, "volume_extension:types_manage")
        with self.database.write() as session:
            vtype = types_db.volume_type_get(session, type_id)
            if name is not None and name != vtype.name and \
                    vtype.name == self.conf.default_volume_type:
                raise exception.InvalidInput(
                    reason="The default volume type %s cannot be renamed "
                           "([DEFAULT] default_volume_type names it)."
                           % vtype.name)
            values = {key: value for key, value in (
                ("name", name), ("description", description),
                ("is_public", is_public)) if value is not None}
            types_db.volume_type_update(session, type_id, values)
        return self.get(ctx, type_id)

    def delete_extra_spec(self, ctx, type_id, key):
        """:raises VolumeTypeExtraSpecsNotFound:"""
        require_admin(ctx, "volume_extension:types_extra_specs:delete")
        with self.database.write() as session:
            types_db.volume_type_get(session, type_id)
            if key == MULTIATTACH_SPEC and \
                    types_db.volume_type_in_use(session, type_id):
                raise exception.InvalidVolumeType(
                    reason="multiattach cannot change while volumes of "
                           "type %s exist." % type_id)
            if not types_db.volume_type_extra_spec_delete(session, type_id,
                                                          key):
                raise exception.VolumeTypeExtraSpecsNotFound(
                    volume_type_id=type_id, extra_specs_key=key)
