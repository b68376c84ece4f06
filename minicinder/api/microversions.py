"""The volume microversions minicinder implements, named as upstream.

The maximum is the highest version whose behaviour is really implemented:
3.54 (``mode`` on attachment create). Versions in between that only add
view fields (3.13 group_id, 3.21 provider_id, 3.48 shared_targets and
service_uuid) are honoured in ``views.py``; versions that add features not
built here (snapshots, backups, groups, messages...) change nothing in the
routes served.
"""

MIN_VERSION = "3.0"
MAX_VERSION = "3.54"

GROUP_VOLUME = "3.13"
VOLUME_DETAIL_PROVIDER_ID = "3.21"
NEW_ATTACH = "3.27"
NEW_ATTACH_COMPLETION = "3.44"
VOLUME_SHARED_TARGETS_AND_SERVICE_FIELDS = "3.48"
MULTIATTACH_VOLUMES = "3.50"
ATTACHMENT_CREATE_MODE_ARG = "3.54"
