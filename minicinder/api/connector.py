"""The connector: what a host tells Cinder about itself, validated.

A connector is os-brick's ``get_connector_properties()`` (plus nova's
``mountpoint``). Upstream Cinder passes it to the driver unchecked; here
every field os-brick defines is checked against its shape before anything
reaches the backend, because its ``initiator`` ends up in a ``tgtadm``
ACL (see :mod:`minicinder.volume.targets.iscsi_names`). A field with the wrong
shape is a 400 that names it.

Fields os-brick may add in later releases are accepted when they are
plain values: a short string without control characters, a number, a
boolean, null, or a list of such strings.
"""

from minicinder.volume.targets import iscsi_names

_text = {"type": "string", "maxLength": 255,
         "pattern": r"^[^\x00-\x1f\x7f]*\Z"}
_nullable_text = dict(_text, type=["string", "null"])
_hostname = {"type": "string", "minLength": 1, "maxLength": 255,
             "pattern": r"^[A-Za-z0-9][A-Za-z0-9_.-]*\Z"}
_ip = {"anyOf": [{"type": "null"}, {"type": "string", "format": "ipv4"},
                 {"type": "string", "format": "ipv6"}]}
_boolean = {"type": "boolean"}
_uuid = {"type": ["string", "null"], "format": "uuid"}
# os-brick's "uuid" is the root filesystem's (blkid): vfat's look like
# "ABCD-1234", so only its characters are checked.
_fs_uuid = {"type": ["string", "null"], "maxLength": 64,
            "pattern": r"^[A-Za-z0-9-]*\Z"}
# os-brick's "system uuid" is the firmware's (sysfs' product_uuid, or
# dmidecode's answer): a UUID, or what dmidecode prints where the firmware
# has none, "Not Settable" or "Not Present" (QEMU without -uuid).
_system_uuid = {"type": ["string", "null"], "maxLength": 64,
                "pattern": r"^[A-Za-z0-9 -]*\Z"}
_hex_list = {"type": "array", "maxItems": 64,
             "items": {"type": "string", "pattern": r"^[0-9A-Fa-f]{16}\Z"}}
_plain = {"anyOf": [_text, {"type": ["number", "boolean", "null"]},
                    {"type": "array", "maxItems": 64, "items": _text}]}

connector = {
    "type": "object",
    "properties": {
        "initiator": {"type": "string", "maxLength": iscsi_names.MAX_LENGTH,
                      "pattern": iscsi_names.PATTERN},
        "host": _hostname,
        "ip": _ip,
        "host_ips": {"type": "array", "maxItems": 64, "items": _ip},
        "multipath": _boolean,
        "enforce_multipath": _boolean,
        "do_local_attach": _boolean,
        "nvme_native_multipath": _boolean,
        "platform": {"type": "string", "maxLength": 64,
                     "pattern": r"^[A-Za-z0-9_.-]*\Z"},
        "os_type": {"type": "string", "maxLength": 64,
                    "pattern": r"^[A-Za-z0-9_.-]*\Z"},
        "wwpns": _hex_list,
        "wwnns": _hex_list,
        "nqn": {"type": "string", "maxLength": 223,
                "pattern": r"^nqn\.[A-Za-z0-9.:-]+\Z"},
        "uuid": _fs_uuid,
        "system uuid": _system_uuid,
        "nvme_hostid": _uuid,
        "found_dsc": _nullable_text,
        "sdc_guid": _nullable_text,
        "mountpoint": {"type": ["string", "null"], "maxLength": 255,
                       "pattern": r"^/dev/[A-Za-z0-9/_-]+\Z"},
        "mode": {"type": ["string", "null"], "enum": ["rw", "ro", None]},
    },
    "additionalProperties": _plain,
    "propertyNames": {"maxLength": 255, "pattern": r"^[^\x00-\x1f\x7f]+\Z"},
    "maxProperties": 64,
}

nullable_connector = dict(connector, type=["object", "null"])
