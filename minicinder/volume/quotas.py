"""Block storage quotas: limits per project, usage counted live.

Upstream's resources and defaults (``[DEFAULT] quota_*``), overridden per
project through ``os-quota-sets``. Usage is counted from the project's
live volumes inside the caller's transaction rather than kept in
``quota_usages``/``reservations`` tables, so it cannot drift; snapshots,
backups and groups do not exist here and are always 0 in use. Per-type
quotas (``volumes_<type>``...) are not kept.

Over a limit is 413 ``overLimit``, with upstream's messages.
"""

from minicinder import exception
from minicinder.db import quotas as db

# resource -> its [DEFAULT] option
RESOURCES = {
    "volumes": "quota_volumes",
    "snapshots": "quota_snapshots",
    "gigabytes": "quota_gigabytes",
    "backups": "quota_backups",
    "backup_gigabytes": "quota_backup_gigabytes",
    "groups": "quota_groups",
    "per_volume_gigabytes": "per_volume_size_limit",
}


def defaults(conf):
    return {name: getattr(conf, option)
            for name, option in RESOURCES.items()}


def limits(session, conf, project_id):
    """The project's limit for every resource."""
    values = defaults(conf)
    values.update({k: v for k, v in db.quota_get_all(session, project_id)
                   .items() if k in RESOURCES})
    return values


def usage(session, project_id):
    """``{resource: in_use}``."""
    count, size = db.volume_usage(session, project_id)
    in_use = dict.fromkeys(RESOURCES, 0)
    in_use.update(volumes=count, gigabytes=size)
    return in_use


def check_volume(session, conf, project_id, volumes=0, gigabytes=0,
                 size=None):
    """Refuse what would take the project over a limit.

    :param volumes: volumes to add; :param gigabytes: GiB to add;
    :param size: the size of the one volume concerned (per-volume limit;
        defaults to ``gigabytes``).
    :raises VolumeSizeExceedsLimit, VolumeLimitExceeded,
        VolumeSizeExceedsAvailableQuota: (413).
    """
    limit = limits(session, conf, project_id)
    size = gigabytes if size is None else size
    per_volume = limit["per_volume_gigabytes"]
    if per_volume >= 0 and size > per_volume:
        raise exception.VolumeSizeExceedsLimit(size=size, limit=per_volume)
    used = usage(session, project_id)
    if volumes and limit["volumes"] >= 0 and \
            used["volumes"] + volumes > limit["volumes"]:
        raise exception.VolumeLimitExceeded(allowed=limit["volumes"],
                                            name="volumes")
    if gigabytes and limit["gigabytes"] >= 0 and \
            used["gigabytes"] + gigabytes > limit["gigabytes"]:
        raise exception.VolumeSizeExceedsAvailableQuota(
            name="gigabytes", requested=gigabytes,
            quota=limit["gigabytes"], consumed=used["gigabytes"])
