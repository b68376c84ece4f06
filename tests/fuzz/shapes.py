"""The body each route expects, as upstream documents it, to fuzz near.

Purely random JSON stops at the first "expected an object with key
volume"; a body of the right shape with hostile values reaches the code
behind the schema (the size parser, the connector, the name column). So
for each route that takes a body there is a shape here: nested dicts and
lists whose leaves name a *kind* of value (``K("size")``); :func:`build`
turns a shape into a strategy where every field is, most of the time, a
value of its kind (a real id of a resource this run made, a plausible
size) and otherwise anything at all, with keys dropped and added; or,
for half the bodies, exactly the shape with plausible values, which the
API should accept, so the code past validation runs too.

A route with no shape here is still fuzzed, with random JSON (new routes
are found from the apps' URL maps); the report lists them so a shape can
be added.
"""

from hypothesis import strategies as st

from tests.fuzz import strategies as fz


class K:
    """A leaf: a value of kind ``name`` (see :func:`leaf_strategies`)."""

    def __init__(self, name):
        self.name = name


class Req(str):
    """A key that is always present (its value may still be hostile)."""


class OneOf:
    def __init__(self, *shapes):
        self.shapes = shapes


class ListOf:
    def __init__(self, shape):
        self.shape = shape


CONNECTOR = {
    "initiator": K("initiator"), "host": K("host"), "ip": K("ip"),
    "platform": K("text"), "os_type": K("text"), "multipath": K("bool"),
    "do_local_attach": K("bool"), "wwpns": ListOf(K("text")),
    "wwnns": K("any"), "nqn": K("text"), "uuid": K("uuid"),
    "system uuid": K("text"), "mountpoint": K("device"),
    "mode": K("mode"), "enforce_multipath": K("bool"),
}

_NONE = OneOf(None, {}, K("any"))

# Volume actions upstream has; the ones ministack lacks must be a 400.
VOLUME_ACTIONS = {
    "os-reserve": _NONE, "os-unreserve": _NONE,
    "os-begin_detaching": _NONE, "os-roll_detaching": _NONE,
    "os-initialize_connection": {Req("connector"): CONNECTOR},
    "os-terminate_connection": {Req("connector"): CONNECTOR},
    "os-attach": {"instance_uuid": K("server_id"), "host_name": K("host"),
                  Req("mountpoint"): K("device"), "mode": K("mode")},
    "os-detach": OneOf(None, {"attachment_id": K("attachment_id")}),
    "os-force_detach": OneOf(None, {"attachment_id": K("attachment_id"),
                                    "connector": OneOf(None, CONNECTOR)}),
    "os-reset_status": {"status": K("status"),
                        "attach_status": K("attach_status"),
                        "migration_status": K("text")},
    "os-extend": {Req("new_size"): K("size")},
    "os-retype": {Req("new_type"): K("type_ref"),
                  "migration_policy": K("text")},
    "os-set_bootable": {Req("bootable"): K("bool")},
    "os-update_readonly_flag": {Req("readonly"): K("bool")},
    "os-volume_upload_image": {"image_name": K("text")},
    "os-migrate_volume": {"host": K("host")},
    "os-force_delete": _NONE, "revert": {"snapshot_id": K("uuid")},
}

SERVER_ACTIONS = {
    "os-stop": OneOf(None, {}), "os-start": OneOf(None, {}),
    "reboot": {"type": K("text")}, "resize": {"flavorRef": K("flavor")},
    "confirmResize": None, "createImage": {"name": K("text")},
    "os-getConsoleOutput": {"length": K("size")}, "lock": None,
    "pause": None, "suspend": None, "unpause": None, "resume": None,
    "rebuild": {"imageRef": K("text")},
    "changePassword": {"adminPass": K("text")}, "forceDelete": None,
    "restore": None, "os-resetState": {"state": K("text")},
    "migrate": None, "shelve": None, "evacuate": None,
}


def _action_body(actions):
    """``{action: args}`` for a known action, or an unknown name."""
    return OneOf(*[{Req(name): shape} for name, shape in actions.items()],
                 K("action_pairs"))


# Neutron's resources, by the key of their body.
NETWORK_RESOURCES = ("network", "subnet", "subnetpool", "port", "router",
                     "floatingip", "security_group", "security_group_rule",
                     "trunk")


def _network_body():
    """``{"<resource>": {...}}`` with fields Neutron's resources have,
    for any resource: the network API's routes serve every collection
    (``/v2.0/<name>``), so the body may name another resource than the
    path does."""
    fields = {"name": K("name"), "description": K("text"),
              "project_id": K("project_id"), "tenant_id": K("project_id"),
              "admin_state_up": K("bool"), "shared": K("bool"),
              "network_id": K("uuid"), "security_group_id": K("uuid"),
              "direction": K("text"), "ethertype": K("text"),
              "protocol": K("text"), "cidr": K("ip"),
              "ip_version": K("size"), "tags": ListOf(K("text"))}
    return OneOf(*[{Req(resource): fields}
                   for resource in NETWORK_RESOURCES])


SHAPES = {
    # -- compute (nova v2.1) ------------------------------------------------
    ("POST", "/v2.1/servers"): {
        Req("server"): {
            "name": K("name"), "imageRef": K("image_ref"),
            "flavorRef": K("flavor"),
            "networks": OneOf("none", "auto", ListOf({"uuid": K("uuid"),
                                                      "port": K("uuid")})),
            "min_count": K("size"), "max_count": K("size"),
            "description": K("text"), "metadata": K("metadata"),
            "availability_zone": K("text"), "adminPass": K("text"),
            "key_name": K("text"), "user_data": K("text"),
            "config_drive": K("bool"), "hostname": K("text"),
            "tags": ListOf(K("text")), "accessIPv4": K("ip"),
            "accessIPv6": K("ip"), "OS-DCF:diskConfig": K("text"),
            "security_groups": ListOf({"name": K("text")}),
            "return_reservation_id": K("bool"),
            "block_device_mapping_v2": ListOf({
                "uuid": K("image_ref"), "source_type": K("text"),
                "destination_type": K("text"), "boot_index": K("size"),
                "delete_on_termination": K("bool"),
                "volume_size": K("size"), "device_name": K("device")}),
        },
        "os:scheduler_hints": K("any"),
    },
    ("PUT", "/v2.1/servers/<server_id>"): {
        Req("server"): {"name": K("text"), "description": K("text"),
                        "OS-DCF:diskConfig": K("text"),
                        "accessIPv4": K("ip"), "accessIPv6": K("ip")}},
    ("POST", "/v2.1/servers/<server_id>/metadata"): {
        Req("metadata"): K("metadata")},
    ("PUT", "/v2.1/servers/<server_id>/metadata"): {
        Req("metadata"): K("metadata")},
    ("PUT", "/v2.1/servers/<server_id>/metadata/<key>"): {
        Req("meta"): K("metadata")},
    ("POST", "/v2.1/servers/<server_id>/action"):
        _action_body(SERVER_ACTIONS),
    ("POST", "/v2.1/servers/<server_id>/os-volume_attachments"): {
        Req("volumeAttachment"): {
            Req("volumeId"): K("volume_id"), "device": K("device"),
            "tag": K("text"), "delete_on_termination": K("bool")}},
    ("PUT", "/v2.1/servers/<server_id>/os-volume_attachments/<volume_id>"): {
        Req("volumeAttachment"): {
            Req("volumeId"): K("volume_id"), "device": K("device"),
            "tag": K("text"), "delete_on_termination": K("bool"),
            "serverId": K("server_id"), "id": K("uuid")}},
    ("POST", "/v2.1/flavors"): {
        Req("flavor"): {
            Req("name"): K("name"), Req("ram"): K("size"),
            Req("vcpus"): K("size"), Req("disk"): K("size"),
            "id": K("text"), "swap": K("size"), "rxtx_factor": K("size"),
            "OS-FLV-EXT-DATA:ephemeral": K("size"),
            "os-flavor-access:is_public": K("bool"),
            "description": K("text")}},
    ("PUT", "/v2.1/flavors/<flavor_id>"): {
        Req("flavor"): {Req("description"): K("text")}},
    ("POST", "/v2.1/flavors/<flavor_id>/action"): OneOf(
        {Req("addTenantAccess"): {Req("tenant"): K("project_id")}},
        {Req("removeTenantAccess"): {Req("tenant"): K("project_id")}},
        K("action_pairs")),
    ("POST", "/v2.1/flavors/<flavor_id>/os-extra_specs"): {
        Req("extra_specs"): K("extra_specs")},
    ("PUT", "/v2.1/flavors/<flavor_id>/os-extra_specs/<key>"):
        K("extra_specs"),
    ("POST", "/v2.1/os-volumes"): {
        Req("volume"): {
            Req("size"): K("size"), "display_name": K("name"),
            "display_description": K("text"), "volume_type": K("type_ref"),
            "metadata": K("metadata"), "availability_zone": K("text"),
            "snapshot_id": K("uuid")}},
    ("PUT", "/v2.1/os-services/<service_id>"): {
        "status": K("text"), "disabled_reason": K("text"),
        "forced_down": K("bool")},

    # -- block storage (cinder v3) -----------------------------------------
    ("POST", "/v3/<project_id>/volumes"): {
        Req("volume"): {
            Req("size"): K("size"), "name": K("name"),
            "description": K("text"), "display_name": K("name"),
            "display_description": K("text"), "volume_type": K("type_ref"),
            "availability_zone": K("text"), "metadata": K("metadata"),
            "multiattach": K("bool"), "snapshot_id": K("uuid"),
            "source_volid": K("volume_id"), "consistencygroup_id": K("uuid"),
            "group_id": K("uuid"), "backup_id": K("uuid"),
            "imageRef": K("text")},
        "OS-SCH-HNT:scheduler_hints": K("any")},
    ("PUT", "/v3/<project_id>/volumes/<volume_id>"): {
        Req("volume"): {
            "name": K("text"), "description": K("text"),
            "display_name": K("text"), "display_description": K("text"),
            "metadata": K("metadata")}},
    ("POST", "/v3/<project_id>/volumes/<volume_id>/action"):
        _action_body(VOLUME_ACTIONS),
    ("POST", "/v3/<project_id>/types"): {
        Req("volume_type"): {
            Req("name"): K("name"), "description": K("text"),
            "os-volume-type-access:is_public": K("bool"),
            "extra_specs": K("extra_specs")}},
    ("POST", "/v3/<project_id>/types/<type_id>/extra_specs"): {
        Req("extra_specs"): K("extra_specs")},
    ("PUT", "/v3/<project_id>/types/<type_id>"): {
        Req("volume_type"): {"name": K("name"), "description": K("text"),
                             "is_public": K("bool")}},
    ("PUT", "/v3/<project_id>/types/<type_id>/extra_specs/<key>"):
        K("extra_specs"),
    ("POST", "/v3/<project_id>/volumes/<volume_id>/metadata"): {
        Req("metadata"): K("metadata")},
    ("PUT", "/v3/<project_id>/volumes/<volume_id>/metadata"): {
        Req("metadata"): K("metadata")},
    ("PUT", "/v3/<project_id>/volumes/<volume_id>/metadata/<key>"): {
        Req("meta"): K("metadata")},
    ("PUT", "/v3/<project_id>/os-services/<action>"): {
        "host": K("host"), "binary": K("text"),
        "disabled_reason": K("text"), "backend_name": K("text")},
    ("PUT", "/v3/<project_id>/os-quota-sets/<target>"): {
        Req("quota_set"): {"volumes": K("size"), "gigabytes": K("size"),
                           "snapshots": K("size"), "backups": K("size"),
                           "per_volume_gigabytes": K("size"),
                           "groups": K("size"), "tenant_id": K("text")}},
    ("POST", "/v3/<project_id>/attachments"): {
        Req("attachment"): {
            Req("volume_uuid"): K("volume_id"),
            "instance_uuid": K("server_id"),
            "connector": OneOf(None, CONNECTOR), "mode": K("mode")}},
    ("PUT", "/v3/<project_id>/attachments/<attachment_id>"): {
        Req("attachment"): {Req("connector"): CONNECTOR}},
    ("POST", "/v3/<project_id>/attachments/<attachment_id>/action"):
        OneOf({Req("os-complete"): _NONE}, K("action_pairs")),

    # -- network (neutron v2.0; miniapi's API that reports none) -----------
    ("POST", "/v2.0/<name>"): _network_body(),
    ("PUT", "/v2.0/<name>/<resource_id>"): _network_body(),

    # -- identity (keystone v3) --------------------------------------------
    ("POST", "/v3/auth/tokens"): {
        Req("auth"): {
            Req("identity"): {
                Req("methods"): ListOf(K("auth_method")),
                "password": {Req("user"): {
                    "id": K("user_id"), "name": K("username"),
                    "password": K("password"),
                    "domain": {"id": K("domain_id"),
                               "name": K("domain_name")}}},
                "token": {Req("id"): K("token")},
                "application_credential": {
                    "id": K("text"), "name": K("text"),
                    "secret": K("text"),
                    "user": {"id": K("user_id"), "name": K("username"),
                             "domain": OneOf(
                                 {"id": K("domain_id"),
                                  "name": K("domain_name")},
                                 K("any"))}},
            },
            "scope": OneOf(
                "unscoped",
                {Req("project"): {
                    "id": K("project_id"), "name": K("project_name"),
                    "domain": {"id": K("domain_id"),
                               "name": K("domain_name")}}},
                {Req("domain"): {"id": K("domain_id"),
                                 "name": K("domain_name")}},
                {Req("system"): {"all": K("bool")}},
                K("any")),
        }},
}


def build(shape, leaves, plain=False):
    """A strategy for ``shape`` with ``leaves`` (kind name -> strategy).

    ``plain``: exactly the shape, nothing else (with plausible leaves, a
    body the API should accept); otherwise a field is now and then
    anything at all and an object may get unknown keys.
    """
    def field(sub):
        inner = build(sub, leaves, plain)
        return inner if plain else fz.weighted(inner, fz.json_values, odds=6)

    if isinstance(shape, K):
        return leaves[shape.name]
    if isinstance(shape, OneOf):
        return st.one_of(*[build(s, leaves, plain) for s in shape.shapes])
    if isinstance(shape, ListOf):
        return st.lists(field(shape.shape), max_size=3)
    if isinstance(shape, dict):
        required = {str(k): field(v) for k, v in shape.items()
                    if isinstance(k, Req)}
        optional = {k: field(v) for k, v in shape.items()
                    if not isinstance(k, Req)}
        if plain and optional and not required:
            # An update with nothing in it is a 400 every time: one of
            # the fields, at least.
            return st.sampled_from(sorted(optional)).flatmap(
                lambda key: st.fixed_dictionaries(
                    {key: optional[key]},
                    optional={k: v for k, v in optional.items()
                              if k != key}))
        fixed = st.fixed_dictionaries(required, optional=optional)
        if plain:
            return fixed
        extra = st.dictionaries(fz.text, fz.json_values, max_size=2)
        return fz.weighted(fixed, st.builds(lambda a, b: {**b, **a}, fixed,
                                            extra), odds=5)
    return st.just(shape)


def for_route(method, rule):
    """The shape of ``method rule``'s body, or None."""
    return SHAPES.get((method, rule))
