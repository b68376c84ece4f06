"""Scheduler hints on create, with two compute hosts (host1, host2).

``os:scheduler_hints`` (or its alias ``OS-SCH-HNT:scheduler_hints``) as
nova's API and its SameHostFilter / DifferentHostFilter treat them, at
every microversion: ``same_host`` keeps the hosts of the named servers,
``different_host`` avoids them, each a server id or a list of ids; a
hint nobody can meet is the server in ERROR with "No valid host"; an
unknown id is on no host; a forced host skips the filters; ``group``
names a server group, and there are none (400). The hints are what
``openstack server create --hint same_host=ID`` sends (a list when the
hint is given twice).
"""

import pytest

from miniapi.api import validation
from miniapi.api.schemas import servers as schemas
from minicompute.db import api as db_api
from ministack import exception
from ministack.microversion import APIVersion
from tests.unit.miniapi import tempest_schemas as ts
from tests.unit.miniapi.test_scheduling import _disable
from tests.unit.miniapi.test_scheduling import _down
from tests.unit.miniapi.test_scheduling import _instances
from tests.unit.miniapi.test_scheduling import _no_valid_host
from tests.unit.miniapi.test_scheduling import _osc_body
from tests.unit.miniapi.test_scheduling import _placed
from tests.unit.miniapi.test_scheduling import _server

UNKNOWN = "9a3c1f7e-2b4d-4e6f-8a1b-3c5d7e9f1a2b"
HINTS = "os:scheduler_hints"
ALIAS = "OS-SCH-HNT:scheduler_hints"


def _boot(api, name="vm", version="2.74", token=None, hints=None,
          key=HINTS, extra=None, **server):
    body = _osc_body(name, **server)
    if hints is not None:
        body[key] = hints
    body.update(extra or {})
    return api.post("/v2.1/servers", body, version=version, token=token)


def _on(api, host, name="first", token=None):
    """A server put on ``host`` (admin, 2.74 ``host``); its id."""
    status, body, _ = _boot(api, name, host=host)
    assert _placed(api, status, body)[0] == host
    return body["server"]["id"]


def _host(api, *response):
    return _placed(api, *response)[0]


# -- same_host ---------------------------------------------------------------

def test_same_host_lands_with_the_named_server(api, compute, compute2):
    """host1 is emptier, the hint wins; the build goes to host2."""
    first = _on(api, "host2")
    status, body, _ = _boot(api, "second", hints={"same_host": first})
    assert _host(api, status, body) == "host2"
    kwargs = compute2.wait_for_cast("build_and_run_instance",
                                    body["server"]["id"])
    assert kwargs["instance"]["host"] == "host2"
    assert not compute.wait_for_casts(1, body["server"]["id"], timeout=0.2)


def test_same_host_as_a_list(api, compute, compute2):
    first = _on(api, "host2")
    assert _host(api, *_boot(api, hints={"same_host": [first]})) == "host2"


def test_same_host_list_of_servers_on_both_hosts(api, compute, compute2):
    """Any host with one of them; the emptier wins (host1)."""
    on2 = [_on(api, "host2", "a"), _on(api, "host2", "b")]
    on1 = _on(api, "host1", "c")
    assert _host(api, *_boot(api, hints={"same_host": on2 + [on1]})) == \
        "host1"
    assert _host(api, *_boot(api, hints={"same_host": on2})) == "host2"


@pytest.mark.parametrize("value", [UNKNOWN, [UNKNOWN], "not-a-uuid",
                                   UNKNOWN.upper()])
def test_same_host_unknown_server_is_no_valid_host(api, compute, compute2,
                                                   value):
    """Upstream's API does not look the server up: no host has it. The
    schema takes any string for same_host (``items`` checks a list's)."""
    _no_valid_host(api, *_boot(api, hints={"same_host": value}))


def test_same_host_of_a_deleted_or_unplaced_server(api, compute, compute2,
                                                   admin_ctxt):
    first = _on(api, "host2")
    db_api.instance_destroy(admin_ctxt, first)
    _no_valid_host(api, *_boot(api, hints={"same_host": first}))
    _disable(admin_ctxt, "host1")
    _disable(admin_ctxt, "host2")
    unplaced = _no_valid_host(api, *_boot(api, "unplaced"))["id"]
    db_api.service_update(admin_ctxt, db_api.service_get_by_host_and_binary(
        admin_ctxt, "host1", "nova-compute").uuid, {"disabled": False})
    _no_valid_host(api, *_boot(api, hints={"same_host": unplaced}))


def test_same_host_whose_host_is_down_is_no_valid_host(
        api, compute, compute2, admin_ctxt):
    first = _on(api, "host2")
    _down(admin_ctxt, "host2")
    _no_valid_host(api, *_boot(api, hints={"same_host": first}))


def test_same_host_and_a_requested_host_elsewhere(api, compute, compute2):
    """2.74's host is filtered like any other: both must hold."""
    first = _on(api, "host2")
    _no_valid_host(api, *_boot(api, host="host1",
                               hints={"same_host": first}))
    assert _host(api, *_boot(api, host="host2",
                             hints={"same_host": first})) == "host2"


def test_same_host_sees_every_project(api, compute, compute2):
    """The scheduler counts every instance of a host (upstream's host
    state), whoever asks: a user's hint may name another project's
    server."""
    first = _on(api, "host2")  # the admin's project
    status, body, _ = _boot(api, token="u2:p2", version="2.1",
                            hints={"same_host": first})
    assert status == 202, body
    assert _host(api, status, body) == "host2"


# -- different_host -----------------------------------------------------------

def test_different_host_avoids_the_named_server(api, compute, compute2):
    """host1 is emptier at first; the hint sends the server elsewhere."""
    first = _on(api, "host1")
    _on(api, "host2", "b")
    _on(api, "host2", "c")
    status, body, _ = _boot(api, "second", hints={"different_host": first})
    assert _host(api, status, body) == "host2"
    compute2.wait_for_cast("build_and_run_instance", body["server"]["id"])


def test_different_host_as_a_list(api, compute, compute2):
    first = _on(api, "host2")
    _on(api, "host1", "b")
    assert _host(api, *_boot(api, hints={"different_host": [first]})) == \
        "host1"


def test_different_host_of_servers_on_every_host_is_no_valid_host(
        api, compute, compute2, admin_ctxt):
    hosts = [_on(api, "host1", "a"), _on(api, "host2", "b")]
    server = _no_valid_host(api, *_boot(api, hints={"different_host": hosts}))
    assert not compute.wait_for_casts(1, server["id"], timeout=0.2)
    assert not compute2.wait_for_casts(1, server["id"], timeout=0.2)
    assert len(_instances(admin_ctxt)) == 3


@pytest.mark.parametrize("value", [UNKNOWN, [UNKNOWN], [UNKNOWN.upper()]])
def test_different_host_unknown_server_is_no_constraint(api, compute,
                                                        compute2, value):
    _on(api, "host2")
    assert _host(api, *_boot(api, hints={"different_host": value})) == \
        "host1"


def test_different_host_and_the_only_host_left(api, compute, compute2,
                                               admin_ctxt):
    first = _on(api, "host2")
    _down(admin_ctxt, "host1")
    _no_valid_host(api, *_boot(api, hints={"different_host": first}))


def test_same_and_different_host_together(api, compute, compute2):
    a = _on(api, "host1", "a")
    b = _on(api, "host2", "b")
    assert _host(api, *_boot(api, hints={"same_host": [a, b],
                                         "different_host": a})) == "host2"
    _no_valid_host(api, *_boot(api, hints={"same_host": a,
                                           "different_host": a}))


# -- every microversion, both names, forced hosts ---------------------------

@pytest.mark.parametrize("version", ["2.1", "2.19", "2.73", "2.74", "2.90",
                                     "2.96"])
@pytest.mark.parametrize("key", [HINTS, ALIAS])
def test_hints_at_every_microversion(api, compute, compute2, version, key):
    first = _on(api, "host2")
    assert _host(api, *_boot(api, "same", version=version, key=key,
                             hints={"same_host": first})) == "host2"
    assert _host(api, *_boot(api, "other", version=version, key=key,
                             hints={"different_host": [first]})) == "host1"


def test_os_scheduler_hints_wins_over_the_alias(api, compute, compute2):
    """nova reads ``os:scheduler_hints`` when it is there, even empty."""
    first = _on(api, "host2")
    _on(api, "host2", "b")
    extra = {ALIAS: {"same_host": first}}
    assert _host(api, *_boot(api, hints={}, extra=extra)) == "host1"
    assert _host(api, *_boot(api, hints={"different_host": first},
                             extra=extra)) == "host1"
    assert _host(api, *_boot(api, key=ALIAS,
                             hints={"same_host": first})) == "host2"


@pytest.mark.parametrize("hints", [
    {}, {"same_host": ""}, {"same_host": []}, {"different_host": []},
    {"same_host": [], "different_host": []}])
def test_empty_hints_ask_for_nothing(api, compute, compute2, hints):
    _on(api, "host2")
    assert _host(api, *_boot(api, hints=hints)) == "host1"


@pytest.mark.parametrize("zone", ["nova:host1", "nova::host1",
                                  "nova:host1:host1"])
def test_a_forced_host_skips_the_hints(api, compute, compute2, zone):
    """Upstream's host manager returns forced hosts unfiltered."""
    first = _on(api, "host1")
    assert _host(api, *_boot(api, version="2.1", availability_zone=zone,
                             hints={"different_host": first})) == "host1"
    other = _on(api, "host2", "other")
    assert _host(api, *_boot(api, version="2.1", availability_zone=zone,
                             hints={"same_host": other})) == "host1"


@pytest.mark.parametrize("hints", [
    {"query": '[">=", "$free_ram_mb", 1024]'},
    {"query": {"op": "x"}},
    {"build_near_host_ip": "192.0.2.1", "cidr": "/24"},
    {"target_cell": "cell1"}, {"different_cell": ["cell1"]},
    {"something_else": {"any": ["thing"]}}, {"_nova_check_type": True}])
def test_hints_of_filters_not_run_are_ignored(api, compute, compute2,
                                              hints):
    """Upstream ignores the hints of filters it is not configured with
    (JsonFilter, SimpleCIDRAffinityFilter, cells): so does ministack."""
    _on(api, "host2")
    assert _host(api, *_boot(api, hints=hints)) == "host1"


# -- group: there are no server groups ----------------------------------------

@pytest.mark.parametrize("key", [HINTS, ALIAS])
def test_group_hint_is_400(api, compute, compute2, admin_ctxt, key):
    """nova's InstanceGroupNotFound (400): ministack has no server
    groups, so every group is unknown; nothing is created."""
    status, body, _ = _boot(api, key=key, token="u1:p1", version="2.1",
                            hints={"group": UNKNOWN,
                                   "same_host": UNKNOWN})
    assert status == 400, body
    assert body["badRequest"]["message"] == \
        "Instance group %s could not be found." % UNKNOWN
    assert _instances(admin_ctxt) == []


def test_bad_flavor_before_the_group(api, compute, admin_ctxt):
    status, body, _ = _boot(api, flavorRef="nope",
                            hints={"group": UNKNOWN})
    assert status == 400, body
    assert "Instance group" not in body["badRequest"]["message"]


# -- the schema ---------------------------------------------------------------

def _create_schema_error(version, hints, key=HINTS):
    body = _osc_body("vm")
    body[key] = hints
    try:
        validation.validate(body, schemas.create(APIVersion(version)))
    except exception.Invalid as exc:
        return exc.format_message()
    return None


@pytest.mark.parametrize("version", ["2.1", "2.74", "2.96"])
@pytest.mark.parametrize("key", [HINTS, ALIAS])
@pytest.mark.parametrize("hints", [
    {}, {"same_host": UNKNOWN}, {"same_host": "anything"},
    {"same_host": ""}, {"same_host": []}, {"same_host": [UNKNOWN, UNKNOWN]},
    {"different_host": UNKNOWN}, {"different_host": []},
    {"different_host": [UNKNOWN]}, {"group": UNKNOWN},
    {"query": "[]"}, {"query": {}}, {"target_cell": "c"},
    {"different_cell": "c"}, {"different_cell": ["c"]},
    {"build_near_host_ip": "192.0.2.1"},
    {"build_near_host_ip": "2001:db8::1"}, {"cidr": "/24"},
    {"unknown": None}])
def test_hints_schema_accepts(version, key, hints):
    assert _create_schema_error(version, hints, key) is None


@pytest.mark.parametrize("hints,message", [
    ({"same_host": 1}, "Invalid input for field/attribute same_host. "
                       "Value: 1. 1 is not of type 'string', 'array'"),
    ({"same_host": None}, "Invalid input for field/attribute same_host. "
                          "Value: null. None is not of type 'string', "
                          "'array'"),
    ({"same_host": ["nope"]}, "Invalid input for field/attribute 0. "
                              "Value: \"nope\". 'nope' is not a 'uuid'"),
    ({"same_host": [UNKNOWN, 7]}, "Invalid input for field/attribute 1. "
                                  "Value: 7. 7 is not of type 'string'"),
    ({"same_host": [UNKNOWN.replace("-", "")]}, None),
    ({"different_host": "nope"},
     "Invalid input for field/attribute different_host. Value: \"nope\". "
     "'nope' is not valid under any of the given schemas"),
    ({"different_host": ""}, None),
    ({"different_host": ["nope"]}, None),
    ({"different_host": {"id": UNKNOWN}}, None),
    ({"group": "nope"}, "Invalid input for field/attribute group. Value: "
                        "\"nope\". 'nope' is not a 'uuid'"),
    ({"group": [UNKNOWN]}, None),
    ({"query": 1}, None),
    ({"build_near_host_ip": "192.0.2"}, None),
    ({"cidr": "24"}, None),
    ({"target_cell": ""}, None),
    ({"different_cell": [1]}, None),
])
def test_hints_schema_refuses(hints, message):
    for version in ("2.1", "2.96"):
        for key in (HINTS, ALIAS):
            got = _create_schema_error(version, hints, key)
            assert got is not None, (version, key, hints)
            if message:
                assert got == message


@pytest.mark.parametrize("hints", [None, [], "same_host", 1])
def test_hints_must_be_an_object(hints):
    assert _create_schema_error("2.1", hints) is not None


def test_refused_hints_create_nothing(api, compute, compute2, admin_ctxt):
    status, body, _ = _boot(api, hints={"different_host": "nope"})
    assert status == 400, body
    assert body["badRequest"]["message"].startswith(
        "Invalid input for field/attribute different_host.")
    assert _instances(admin_ctxt) == []


def test_hints_are_not_server_properties(api, compute, admin_ctxt):
    """The hints sit beside ``server``, not inside it."""
    status, body, _ = _boot(api, **{HINTS: {"same_host": UNKNOWN}})
    assert status == 400, body
    assert body["badRequest"]["message"] == \
        "Additional properties are not allowed ('%s' was unexpected)" % HINTS


def test_hinted_server_shows_its_host(api, compute, compute2):
    first = _on(api, "host2")
    status, body, _ = _boot(api, hints={"same_host": first})
    server = _server(api, body["server"]["id"])
    assert server["OS-EXT-SRV-ATTR:hypervisor_hostname"] == "host2"
    assert server["hostId"] == _server(api, first)["hostId"]


@pytest.mark.parametrize("version", ["2.1", "2.74", "2.96"])
def test_hinted_creates_pass_tempest_schemas(api, compute, compute2,
                                             version):
    """What ServersOnMultiNodesTest reads: the create response, and the
    server (placed, or in ERROR for a hint nobody meets)."""
    ts.require_tempest()
    first = _on(api, "host2")
    for hints in ({"same_host": first}, {"different_host": [first]},
                  {"same_host": UNKNOWN}):
        status, body, _ = _boot(api, version=version, hints=hints)
        ts.check(ts.fixed_module("v2_1.servers").create_server_with_admin_pass,
                 status, body)
        status, body, _ = api.get("/v2.1/servers/" + body["server"]["id"],
                                  version=version)
        ts.check_client("servers_client", "get_server", version, status,
                        body)
