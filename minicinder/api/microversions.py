"""The volume microversions minicinder implements, named as upstream.

The maximum is the highest version whose behaviour is really implemented:
3.54 (``mode`` on attachment create). Versions in between that add a
route or view fields are honoured where they apply (3.7 ``cluster`` and
3.49 ``backend_state`` in ``os-services``, 3.12 ``volumes/summary`` and
its 3.36 ``metadata``, 3.13 group_id, 3.21 provider_id, 3.45
``with_count``, 3.48 shared_targets and service_uuid); versions that add
features not built here (snapshots, backups, groups, messages...) change
nothing in the routes served.

``MIN_VERSION``/``MAX_VERSION`` are the strings version discovery prints;
``MIN``/``MAX`` and the feature gates are parsed once here, at import,
because every request compares against them (parsing a version string is
a regex match, and a GET compared against five of them).
"""

from ministack import microversion

MIN_VERSION = "3.0"
MAX_VERSION = "3.54"
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
