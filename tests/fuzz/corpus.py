"""Requests every run sends, before the random ones: the inputs that
broke the services before, so a regression is found every time, not by
chance (hypothesis runs them as explicit examples).

Each is a well-behaved request (``attack.sane_request``) with one
hostile part. The generic ones go to every route; the rest to the route
named.
"""

from tests.fuzz import attack
from tests.fuzz import lab as lab_mod
from tests.fuzz import strategies as fz

DIGITS = fz.Raw("9" * 5000)
LONE = "\ud800"

# Bodies no JSON route may answer with a 5xx (the random ones add
# NaN, 1e400, invalid UTF-8 and the rest).
BAD_BODIES = [
    fz.RawBody(b"[" * 100000),                       # RecursionError
    fz.RawBody(b'{"a": ' + b"9" * 5000 + b"}"),     # int digits limit
    fz.RawBody(b'{"\\ud800": "\\udfff"}'),
    fz.RawBody(b'{"a": "' + b"x" * 200000 + b'"}'),  # past 114688 bytes
]


# Paging parameters past every column type, on every list.
BIG = "1" + "0" * 100
BAD_QUERIES = ["?limit=" + BIG, "?offset=" + BIG, "?marker=" + BIG,
               "?limit=" + "9" * 5000]


def _connector(**odd):
    connector = {"initiator": "iqn.2004-10.org.fuzz:%s" % lab_mod.RUN,
                 "host": "fuzz-%s" % lab_mod.RUN, "ip": "127.0.0.1",
                 "multipath": False, "platform": "x86_64",
                 "os_type": "linux2"}
    connector.update(odd)
    return connector


_ODD_CONNECTORS = [_connector(initiator=["a"]), _connector(initiator=5),
                   _connector(initiator={"a": 1}), _connector(ip=["1"]),
                   _connector(host=LONE), _connector(multipath="yes"),
                   _connector(initiator="iqn.2004-10.org.fuzz:a\nb")]


def _app_credential(user):
    return {"auth": {"identity": {
        "methods": ["application_credential"],
        "application_credential": {"name": "fuzz", "secret": "fuzz",
                                   "user": user}}}}


def _password(user):
    return {"auth": {"identity": {"methods": ["password"],
                                  "password": {"user": user}}}}


def _server(**odd):
    server = {"name": "server", "imageRef": "fuzz-no-such-image",
              "flavorRef": "42", "networks": "none"}
    server.update(odd)
    return {"server": server}


def _mapping(**odd):
    mapping = {"uuid": "fuzz-no-such-image", "source_type": "image",
               "destination_type": "volume", "volume_size": 1,
               "boot_index": 0}
    mapping.update(odd)
    return mapping


# Block device mappings (boot from volume) that must each be a 400: none
# may reach Cinder or a compute host.
_ODD_MAPPINGS = [
    _mapping(volume_size=DIGITS), _mapping(volume_size="9" * 5000),
    _mapping(volume_size=-1), _mapping(volume_size=1.5),
    _mapping(boot_index=DIGITS), _mapping(boot_index="9" * 5000),
    _mapping(boot_index=LONE), _mapping(boot_index=[0]),
    _mapping(uuid=LONE), _mapping(uuid=""), _mapping(device_name=LONE),
    _mapping(disk_bus=LONE), _mapping(volume_type=LONE),
    _mapping(delete_on_termination=LONE), _mapping(volume_size=None),
    _mapping(source_type="blank"), _mapping(source_type="snapshot"),
    _mapping(source_type="volume", uuid="0" * 36),
    _mapping(destination_type="local"), _mapping(boot_index=1),
    {"source_type": LONE}, {}]


BODIES = {
    ("POST", "/v3/<project_id>/volumes"): [
        {"volume": {"size": DIGITS}}, {"volume": {"size": "9" * 5000}},
        {"volume": {"size": 1, "name": LONE}}, {"volume": {"size": True}},
        {"volume": {"size": 1.5}}, {"volume": {"size": "\u0661"}},
        {"volume": {"size": 1, "metadata": {LONE: LONE}}},
        {"volume": {"size": 1, "volume_type": LONE}}],
    ("PUT", "/v3/<project_id>/volumes/<volume_id>"): [
        {"volume": {"name": LONE}}, {"volume": {"description": LONE}},
        {"volume": {"metadata": {LONE: "x"}}}],
    ("POST", "/v3/<project_id>/volumes/<volume_id>/action"): [
        {"os-terminate_connection": {"connector": c}}
        for c in _ODD_CONNECTORS] + [
        {"os-initialize_connection": {"connector": c}}
        for c in _ODD_CONNECTORS] + [
        {"os-attach": {"mountpoint": "/dev/vdb", "instance_uuid": ["x"]}},
        {"os-reset_status": {"status": ["x"]}},
        {"os-extend": {"new_size": DIGITS}},
        {"os-force_detach": {"connector": _ODD_CONNECTORS[0]}},
        {"os-detach": {"attachment_id": LONE}}],
    ("POST", "/v3/<project_id>/attachments"): [
        {"attachment": {"volume_uuid": "$volume", "instance_uuid": "$server",
                        "connector": c}}
        for c in _ODD_CONNECTORS],
    ("PUT", "/v3/<project_id>/attachments/<attachment_id>"): [
        {"attachment": {"connector": c}} for c in _ODD_CONNECTORS],
    ("POST", "/v3/<project_id>/types"): [
        {"volume_type": {"name": LONE}},
        {"volume_type": {"name": "x", "extra_specs": {LONE: "x"}}},
        {"volume_type": {"name": "x", "description": LONE}}],
    ("POST", "/v3/<project_id>/types/<type_id>/extra_specs"): [
        {"extra_specs": {LONE: LONE}}],
    ("POST", "/v2.1/servers"): [
        _server(min_count=DIGITS), _server(max_count=DIGITS),
        _server(min_count="9" * 5000), _server(flavorRef=DIGITS),
        _server(name=LONE), _server(description=LONE),
        _server(metadata={LONE: LONE}), _server(min_count=True)] + [
        _server(imageRef="", block_device_mapping_v2=[m])
        for m in _ODD_MAPPINGS],
    ("PUT", "/v2.1/servers/<server_id>"): [
        {"server": {"name": LONE}}, {"server": {"description": LONE}}],
    ("POST", "/v2.1/servers/<server_id>/action"): [
        {LONE: None}, {"os-stop": LONE}, {"os-start": DIGITS}],
    ("POST", "/v2.1/servers/<server_id>/os-volume_attachments"): [
        {"volumeAttachment": {"volumeId": LONE}},
        {"volumeAttachment": {"volumeId": "$volume", "device": LONE}},
        {"volumeAttachment": {"volumeId": "$volume", "tag": LONE}}],
    ("PUT", "/v2.1/os-services/<service_id>"): [
        {"status": LONE}, {"forced_down": DIGITS},
        {"status": "disabled", "disabled_reason": LONE}],
    ("POST", "/v3/auth/tokens"): [
        _app_credential({"name": "demo", "domain": "Default"}),
        _app_credential({"name": ["demo"], "domain": {"name": "Default"}}),
        _app_credential({"id": {"a": 1}}),
        _app_credential(LONE),
        _password({"name": ["demo"], "password": "x",
                   "domain": {"name": "Default"}}),
        _password({"name": "demo", "password": ["x"],
                   "domain": "Default"}),
        _password({"name": LONE, "password": LONE,
                   "domain": {"name": LONE}}),
        {"auth": {"identity": {"methods": "password"}}},
        {"auth": {"identity": {"methods": [LONE]}}},
        {"auth": {"identity": {"methods": ["token"],
                               "token": {"id": ["x"]}}}}],
}


def _headers(route):
    service = attack.SERVICE[route.group]
    major = {"compute": "2", "volume": "3"}.get(route.group, "1")
    found = [{"OpenStack-API-Version": "%s %s.%s" % (service, major,
                                                     "9" * 5000)},
             {"OpenStack-API-Version": "%s %s" % (service, "9" * 5000)},
             {"OpenStack-API-Version": "%s %s.\u0661" % (service, major)},
             {"X-Auth-Token": "x" * 5000}, {"X-Auth-Token": "x" * 9000},
             {"X-Service-Token": "x" * 9000}, {"X-Auth-Token": None}]
    if route.group == "compute":
        found.append({"OpenStack-API-Version": None,
                      "X-OpenStack-Nova-API-Version": "2." + "9" * 5000})
    if route.group == "identity":
        found += [{"X-Subject-Token": LONE}, {"X-Subject-Token": "9" * 5000}]
    return found


def _resolve(value, lab):
    """``"$volume"`` and ``"$server"``: the run's first of that kind."""
    if isinstance(value, str) and value in ("$volume", "$server"):
        pool = lab.pool(value[1:])
        return pool[0] if pool else "fuzz-%s-none" % lab_mod.RUN
    if isinstance(value, dict):
        return {k: _resolve(v, lab) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, lab) for v in value]
    return value


# Routes only an admin gets past the policy check of: their bodies are
# sent as admin too.
ADMIN_ROUTES = {
    ("POST", "/v3/<project_id>/types"),
    ("POST", "/v3/<project_id>/types/<type_id>/extra_specs"),
    ("POST", "/v3/<project_id>/volumes/<volume_id>/action"),
    ("POST", "/v2.1/flavors"), ("PUT", "/v2.1/os-services/<service_id>"),
}

_HEADERS_SENT = set()   # groups that had the full header corpus


def requests_for(lab, route):
    """The corpus of ``route``, as Requests.

    The headers are read by the same middleware on every route: all of
    them go to the group's first route, the first one to the rest.
    Lists (and every GET not naming one resource) get the bad paging
    parameters. Every body route gets the bad bodies and its own ones
    (as demo; as admin too where only an admin passes the policy).
    """
    headers = _headers(route)
    if route.group in _HEADERS_SENT:
        headers = headers[:1]
    _HEADERS_SENT.add(route.group)
    found = [attack.sane_request(lab, route, headers=h) for h in headers]
    if route.method == "GET" and route.collection and \
            route.group != "identity":
        found += [attack.sane_request(lab, route, query=q)
                  for q in BAD_QUERIES]
    if route.method in ("POST", "PUT", "PATCH"):
        found += [attack.sane_request(lab, route, body)
                  for body in BAD_BODIES]
        for body in BODIES.get((route.method, route.rule), []):
            body = _resolve(body, lab)
            found.append(attack.sane_request(lab, route, body))
            if (route.method, route.rule) in ADMIN_ROUTES:
                found.append(attack.sane_request(lab, route, body,
                                                 who="admin"))
    return found
