"""The volume microversions minicinder implements, named as upstream.

The maximum is upstream's, 3.71 (``os-extend_volume_completion``).
Versions that add a route or view fields are honoured where they apply
(3.7 ``cluster`` and 3.49 ``backend_state`` in ``os-services``, 3.12
``volumes/summary`` and its 3.36 ``metadata``, 3.13 group_id, 3.21
provider_id, 3.42 the extend of an in-use volume, 3.45 ``with_count``,
3.48 shared_targets and service_uuid, 3.55 the ``volume-transfers``
API with ``no_snapshots``, 3.57 its history fields, 3.59 its paging,
3.60 time filters on volume lists, 3.61 cluster_name, 3.63
volume_type_id, 3.65 consumes_quota, 3.69 a tristate shared_targets,
3.71 ``os-extend_volume_completion``); versions that add features not
built here (snapshots, backups, groups, messages, the 3.62 default
types, ...) change nothing in the routes served; 3.68 adds ``os-reimage``. 3.64
shows ``encryption_key_id`` only for an encrypted volume (never, here)
and 3.70 lets encrypted volumes be transferred (none exist here).

``MIN_VERSION``/``MAX_VERSION`` are the strings version discovery prints;
``MIN``/``MAX`` and the feature gates are parsed once here, at import,
because every request compares against them (parsing a version string is
a regex match, and a GET compared against five of them).
"""

from ministack import microversion

MIN_VERSION = "3.0"
MAX_VERSION = "3.71"
MIN = microversion.APIVersion(MIN_VERSION)
MAX = microversion.APIVersion(MAX_VERSION)

VOLUME_SUMMARY = microversion.APIVersion("3.12")
GROUP_VOLUME = microversion.APIVersion("3.13")
VOLUME_DETAIL_PROVIDER_ID = microversion.APIVersion("3.21")
NEW_ATTACH = microversion.APIVersion("3.27")
VOLUME_SUMMARY_METADATA = microversion.APIVersion("3.36")
NEW_ATTACH_COMPLETION = microversion.APIVersion("3.44")
SUPPORT_COUNT_INFO = microversion.APIVersion("3.45")
VOLUME_SHARED_TARGETS_AND_SERVICE_FIELDS = microversion.APIVersion("3.48")
MULTIATTACH_VOLUMES = microversion.APIVersion("3.50")
ATTACHMENT_CREATE_MODE_ARG = microversion.APIVersion("3.54")
VOLUME_EXTEND_INUSE = microversion.APIVersion("3.42")
TRANSFER_WITH_SNAPSHOTS = microversion.APIVersion("3.55")
TRANSFER_WITH_HISTORY = microversion.APIVersion("3.57")
SUPPORT_TRANSFER_PAGINATION = microversion.APIVersion("3.59")
VOLUME_TIME_COMPARISON_FILTER = microversion.APIVersion("3.60")
VOLUME_CLUSTER_NAME = microversion.APIVersion("3.61")
VOLUME_TYPE_ID_IN_VOLUME_DETAIL = microversion.APIVersion("3.63")
ENCRYPTION_KEY_ID_IN_DETAILS = microversion.APIVersion("3.64")
USE_QUOTA = microversion.APIVersion("3.65")
SHARED_TARGETS_TRISTATE = microversion.APIVersion("3.69")
EXTEND_VOLUME_COMPLETION = microversion.APIVersion("3.71")
SUPPORT_REIMAGE_VOLUME = microversion.APIVersion("3.68")
