"""``os-quota-sets`` and the absolute limits of ``GET /limits``.

Reading a project's quotas is for that project's members and for admins;
changing or deleting them is for admins (upstream's default policy).
"""

import logging

from minicinder import exception
from minicinder.volume import api as volume_api
from minicinder.volume import quotas

LOG = logging.getLogger(__name__)


def _may_read(ctx, project_id):
    if not ctx.is_admin and project_id != ctx.project_id:
        raise exception.PolicyNotAuthorized(
            action="volume_extension:quotas:show")


class QuotaAPI:

    def __init__(self, database, conf):
        self.database = database
        self.conf = conf

    def get(self, ctx, project_id, usage=False):
        """``{resource: limit}``, or with ``usage`` ``{resource:
        {"limit", "in_use", "reserved"}}``."""
        _may_read(ctx, project_id)
        with self.database.read() as session:
            limits = quotas.limits(session, self.conf, project_id)
            if not usage:
                return limits
            in_use = quotas.usage(session, project_id)
        return {name: {"limit": limit, "in_use": in_use[name],
                       "reserved": 0}
                for name, limit in limits.items()}

    def defaults(self, ctx, project_id):
        _may_read(ctx, project_id)
        return quotas.defaults(self.conf)

    def update(self, ctx, project_id, values, skip_validation=True):
        """Set the project's limits (each -1 or more). :returns: all its
        limits.

        :param skip_validation: False refuses a limit below what the
            project already uses (upstream's ``skip_validation``, which
            defaults to True: a limit may be set below the usage, and
            only new volumes are then refused).
        :raises InvalidInput: a limit below the current usage (400).
        """
        volume_api.require_admin(ctx, "volume_extension:quotas:update")
        with self.database.write() as session:
            in_use = quotas.usage(session, project_id)
            for name, limit in values.items():
                if not skip_validation and \
                        name != "per_volume_gigabytes" and limit != -1 and \
                        limit < in_use[name]:
                    raise exception.InvalidInput(
                        reason="Quota %s limit must be equal or greater "
                               "than existing resources. Current usage is "
                               "%s and the requested limit is %s."
                               % (name, in_use[name], limit))
            quotas.db.quota_set(session, project_id, values)
            limits = quotas.limits(session, self.conf, project_id)
        LOG.info("Quotas of project %s set: %s", project_id, values)
        return limits

    def delete(self, ctx, project_id):
        """Back to the defaults."""
        volume_api.require_admin(ctx, "volume_extension:quotas:delete")
        with self.database.write() as session:
            quotas.db.quota_destroy_all(session, project_id)
        LOG.info("Quotas of project %s reset to the defaults", project_id)

    def absolute_limits(self, ctx):
        """``GET /limits``' ``absolute`` block for the caller's project."""
        usage = self.get(ctx, ctx.project_id, usage=True)
        return {
            "maxTotalVolumes": usage["volumes"]["limit"],
            "maxTotalSnapshots": usage["snapshots"]["limit"],
            "maxTotalVolumeGigabytes": usage["gigabytes"]["limit"],
            "maxTotalBackups": usage["backups"]["limit"],
            "maxTotalBackupGigabytes": usage["backup_gigabytes"]["limit"],
            "totalVolumesUsed": usage["volumes"]["in_use"],
            "totalGigabytesUsed": usage["gigabytes"]["in_use"],
            "totalSnapshotsUsed": usage["snapshots"]["in_use"],
            "totalBackupsUsed": usage["backups"]["in_use"],
            "totalBackupGigabytesUsed":
                usage["backup_gigabytes"]["in_use"],
        }
