"""The step-through's data (ministack_course/state.py, course.py): the
state of the volume, its attachment, connection_info and the BDM after
each hop, derived from the trace and the request results alone (unknown
when the trace does not show it), the failure and its recovery steps,
and what the seed says of each step, on the fixture traces: an attach,
a detach, a detach the guest refuses and an attach whose driver attach
fails."""

import copy

import pytest

from ministack_course import course
from ministack_course import state
from ministack_course import web
from tests.support import journey_traces as traces


def _view(trace):
    return web.view(trace)["trace"]


def _hop(trace, ident):
    return {hop["id"]: hop for hop in trace["hops"]}[ident]


def _values(trace, ident):
    return {name: field["value"]
            for name, field in _hop(trace, ident)["state"].items()}


def _without_sql(trace):
    trace = copy.deepcopy(trace)
    trace["hops"] = [hop for hop in trace["hops"] if hop["kind"] != "DB"]
    return trace


def test_the_attach_handshake_moves_the_volume_step_by_step():
    trace = _view(traces.attach_trace())
    first = _hop(trace, "hop-01")["state"]
    assert first["volume"] == {
        "value": "unknown", "known": False, "hop_id": None,
        "why": "Cinder has not answered a call that sets it yet"}
    assert first["attachment"]["value"] == "not created yet"
    # reserve_block_device_name's handler created the BDM.
    assert _values(trace, "hop-04")["bdm"] == "created (no connection_info)"
    # attachment_create answered 200: reserved, an attachment reserved.
    after = _hop(trace, "hop-06")
    assert after["changed"] == ["volume", "attachment"]
    assert _values(trace, "hop-06") == {
        "volume": "reserved", "attachment": "reserved (no connector)",
        "connection_info": "none yet",
        "bdm": "created (no connection_info)"}
    assert after["state"]["volume"]["why"] == \
        "REST POST /v3/{project}/attachments (+77.9 ms) answered 200"
    assert after["state"]["volume"]["hop_id"] == "hop-06"
    # attachment_update with the connector: attaching, connection_info.
    assert _values(trace, "hop-10") == {
        "volume": "attaching", "attachment": "attaching (connector set)",
        "connection_info": "returned by attachment_update",
        "bdm": "created (connection_info not saved yet)"}
    # The driver attach changes none of them.
    assert _hop(trace, "hop-14")["changed"] == []
    # The save hop (SQL traced): connection_info on the BDM.
    assert _values(trace, "hop-16")["bdm"] == \
        "created (connection_info saved)"
    assert _values(trace, "hop-16")["connection_info"] == "saved on the BDM"
    # os-complete 204: in-use, attached.
    assert _values(trace, "hop-17")["volume"] == "in-use"
    assert _values(trace, "hop-17")["attachment"] == "attached"
    assert trace["failure"] is None
    # A REST call's server side has its client's state.
    assert _hop(trace, "hop-17-srv")["state"] == _hop(trace,
                                                      "hop-17")["state"]


def test_without_sql_the_bdm_save_is_unknown():
    """A lab trace has no SQL hops: whether connection_info reached the
    BDM is not in it, so the page says unknown, and why."""
    trace = _view(_without_sql(traces.attach_trace()))
    bdm = _hop(trace, "hop-10")["state"]["bdm"]
    assert bdm["value"] == "created (connection_info saved: unknown)"
    assert bdm["known"] is False
    assert "OSPROFILER_TRACE_SQLALCHEMY=True" in bdm["why"]
    end = _hop(trace, "hop-17")["state"]
    assert end["bdm"]["known"] is False
    assert end["connection_info"]["value"] == "returned by attachment_update"
    assert end["volume"]["value"] == "in-use"


def test_the_detach_unwinds_the_attachment():
    trace = _view(traces.detach_trace())
    assert {field["value"] for field in _hop(trace, "hop-01")["state"]
            .values() if not field["known"]} == {"unknown"}
    assert _values(trace, "hop-01")["bdm"] == "exists (nova-api found it)"
    begin = _values(trace, "hop-03")
    assert (begin["volume"], begin["attachment"]) == ("detaching", "attached")
    assert "begins detaching only an attached volume" in \
        _hop(trace, "hop-03")["state"]["attachment"]["why"]
    assert _values(trace, "hop-07")["connection_info"] == \
        "read from the BDM (driver_detach unplugs with it)"
    delete = _hop(trace, "hop-12")
    assert delete["changed"] == ["volume", "attachment", "bdm"]
    assert _values(trace, "hop-12")["volume"] == "available"
    assert _values(trace, "hop-12")["attachment"] == "deleted"
    assert "multiattach" in delete["state"]["volume"]["why"]
    # No SQL traced: the BDM's destroy is not in the trace.
    assert delete["state"]["bdm"]["value"] == "unknown"
    assert "destroys the BDM last" in delete["state"]["bdm"]["why"]
    assert trace["failure"] is None
    assert not [hop for hop in trace["hops"] if hop["course"]["recovery"]]


def test_a_refused_detach_is_rolled_back_by_roll_detaching():
    trace = _view(traces.failed_detach_trace())
    failure = trace["failure"]
    # The first failure with no failed hop inside it: the second unplug
    # attempt (the compute's handler failed because of it).
    assert failure["hop_id"] == "hop-06"
    assert failure["path"] == "guest-refuses"
    assert failure["title"] == \
        "Guest refuses to release the disk on detach"
    assert failure["steps"] == [{"step": "os-roll_detaching",
                                 "hop_id": "hop-07", "note": None}]
    assert "labels" not in failure
    assert _hop(trace, "hop-06")["course"]["failure"] is True
    assert _hop(trace, "hop-04")["course"]["failure"] is False
    assert _hop(trace, "hop-07")["course"]["recovery"] == \
        "os-roll_detaching"
    assert _hop(trace, "hop-06")["changed"] == []
    end = _values(trace, "hop-07")
    assert end["volume"] == "in-use"
    assert end["bdm"] == "kept"


def test_a_failed_driver_attach_is_undone_as_the_seed_draws_it():
    trace = _view(traces.failed_attach_trace())
    failure = trace["failure"]
    assert failure["hop_id"] == "hop-15"
    assert failure["step"] == "virDomainAttachDeviceFlags"
    assert failure["path"] == "driver-attach"
    assert failure["title"] == course.RECOVERY_PATHS["driver-attach"][0]
    assert [(step["step"], step["hop_id"]) for step in failure["steps"]] == [
        ("disconnect", "hop-16"), ("secret removed", "hop-17"),
        ("attachment_delete", "hop-18"), ("bdm.destroy", "hop-20")]
    recovery = {hop["id"]: hop["course"]["recovery"]
                for hop in trace["hops"] if hop["course"]["recovery"]}
    # The tgt command under attachment_delete is part of it.
    assert recovery["hop-19"] == "attachment_delete"
    assert "hop-15" not in recovery and "hop-08" not in recovery
    # Before the failure: connected, not saved; it changes nothing.
    assert _values(trace, "hop-15")["volume"] == "attaching"
    assert _hop(trace, "hop-15")["changed"] == []
    # attachment_delete: the volume available again; the BDM destroyed.
    assert _values(trace, "hop-18")["volume"] == "available"
    assert _values(trace, "hop-18")["attachment"] == "deleted"
    assert _values(trace, "hop-20")["bdm"] == "destroyed"


def test_a_failed_attachs_undo_steps_are_its_recovery_phase():
    """On the page and in ``ministack-trace show``: the undo steps after
    the failure, whatever phase their hop had (the BDM's destroy is the
    handler's, attachment_delete was labelled complete), are the phase
    ``recovery``, after the attach's four; what failed keeps its own."""
    page = web.view(traces.failed_attach_trace())
    shown = state.recovery_phase(traces.failed_attach_trace())
    for trace in (page["trace"], shown):
        assert trace["phases"] == ["reserve", "cast", "connect/attach",
                                   "complete", "recovery"]
        recovery = [hop["id"] for hop in trace["hops"]
                    if hop["phase"] == "recovery"]
        assert recovery == ["hop-16", "hop-17", "hop-18", "hop-18-srv",
                            "hop-19", "hop-20"]
        assert _hop(trace, "hop-15")["phase"] == "connect/attach"
    assert page["phases"] == page["trace"]["phases"]


def test_what_the_handler_does_between_its_undo_steps_is_recovery():
    """The lab's driver detach of a failed attach: the guest releases the
    disk between two virDomainDetachDeviceFlags, a hop of the handler's
    own; it is part of the recovery, not back in connect/attach."""
    trace = traces.failed_attach_trace()
    detach = dict(_hop(trace, "hop-16"), id="hop-15a", parent_id="hop-08",
                  name="virDomainDetachDeviceFlags", actor="libvirt",
                  start_ms=96.6, duration_ms=0.2)
    released = dict(detach, id="hop-15b", name="guest releases vdb",
                    actor="guest", start_ms=96.9, duration_ms=0.1)
    at = trace["hops"].index(_hop(trace, "hop-16"))
    trace["hops"][at:at] = [detach, released]
    page = web.view(trace)["trace"]
    assert _hop(page, "hop-15b")["course"]["recovery"] == "driver detach"
    assert [hop["phase"] for hop in page["hops"][at:]] == \
        ["recovery"] * (len(page["hops"]) - at)
    assert [g["step"] for g in page["failure"]["steps"]][:2] == \
        ["driver detach", "disconnect"]


@pytest.mark.parametrize("make", [traces.attach_trace, traces.detach_trace,
                                  traces.failed_detach_trace])
def test_no_recovery_phase_without_a_failed_attach(make):
    """An attach that succeeded, a detach, and a refused detach (its
    os-roll_detaching is the unplug's own, as the seed tells it)."""
    expected = make()
    trace = state.recovery_phase(make())
    assert trace["phases"] == expected["phases"]
    assert [hop["phase"] for hop in trace["hops"]] == \
        [hop["phase"] for hop in expected["hops"]]


def test_a_failed_attach_without_sql_lists_the_untraced_destroy():
    trace = _view(_without_sql(traces.failed_attach_trace()))
    steps = trace["failure"]["steps"]
    assert steps[-1] == {"step": "bdm.destroy", "hop_id": None,
                         "note": state.NO_SQL}
    bdm = _hop(trace, "hop-15")["state"]["bdm"]
    assert (bdm["value"], bdm["known"]) == ("unknown", False)
    assert "destroys the BDM of a failed attach" in bdm["why"]


def _failing(name, error, status=None):
    trace = traces.attach_trace()
    for hop in trace["hops"]:
        if hop["name"] == name:
            hop["error"] = error
            if status is not None:
                hop["status"] = status
    return _view(trace)


@pytest.mark.parametrize("name, path", [
    ("reserve_block_device_name", "rpc-timeout"),
    ("PUT /v3/{project}/attachments/{id}", "host-attach"),
    ("POST /v3/{project}/attachments/{id}/action", "complete-fails"),
    ("virDomainAttachDeviceFlags", "driver-attach"),
])
def test_each_failure_has_the_seeds_recovery_path(name, path):
    trace = _failing(name, "Boom: <b>failed</b>", status=None)
    assert trace["failure"]["path"] == path
    expected = [step["step"] for step in trace["failure"]["steps"]]
    assert expected[-1] == "bdm.destroy"


def test_a_failed_request_changes_nothing():
    """A REST call answered 500 does not move the volume: after the
    failed attachment_update it is still reserved; the BDM, which the
    manager destroys after a failed attach, is unknown (the trace has
    no destroy of it)."""
    trace = _failing("PUT /v3/{project}/attachments/{id}", None, status=500)
    assert trace["failure"]["hop_id"] == "hop-10"
    assert _hop(trace, "hop-10")["changed"] == ["bdm"]
    assert _values(trace, "hop-10")["volume"] == "reserved"
    assert _values(trace, "hop-10")["attachment"] == "reserved (no connector)"
    assert _values(trace, "hop-10")["bdm"] == "unknown"


@pytest.mark.parametrize("hop, step", [
    ({"kind": "REST", "actor": "cinder", "name":
      "POST /v3/{project}/attachments/{id}/action (os-complete)"},
     "attachment_complete"),
    ({"kind": "REST", "actor": "cinder", "name":
      "POST /v3/{project}/volumes/{id}/action (os-roll_detaching)"},
     "roll_detaching"),
    ({"kind": "REST", "actor": "cinder",
      "name": "DELETE /v3/{project}/attachments/{id}"}, "attachment_delete"),
    ({"kind": "REST", "actor": "nova-api", "name":
      "DELETE /v2.1/servers/{id}/os-volume_attachments/{id}"},
     "detach request"),
    ({"kind": "CALL", "actor": "rabbitmq",
      "name": "reserve_block_device_name"}, "reserve_block_device_name"),
    ({"kind": "CAST", "actor": "nova-compute", "name": "attach_volume"},
     "attach_volume (host)"),
    ({"kind": "LIBRARY", "actor": "nova-compute",
      "name": "connect_volume (QEMU libiscsi)"}, "connect_volume"),
    ({"kind": "LIBRARY", "actor": "nova-compute",
      "name": "disconnect_volume (QEMU libiscsi)"}, "disconnect_volume"),
    ({"kind": "LIBRARY", "actor": "guest", "name": "guest releases vdb"},
     "guest releases"),
    ({"kind": "COMMAND", "actor": "cinder", "name": "tgtadm target new"},
     "export"),
    ({"kind": "COMMAND", "actor": "cinder", "name": "tgtadm target unbind"},
     "unexport"),
    ({"kind": "DB", "actor": "nova-compute",
      "name": "UPDATE block_device_mapping SET",
      "details": {"statement": "UPDATE block_device_mapping SET "
                               "connection_info=?, updated_at=? WHERE "
                               "block_device_mapping.deleted = ?"}},
     "bdm.save"),
    ({"kind": "DB", "actor": "nova-compute", "name": "SELECT volumes.id"},
     None),
])
def test_each_hop_has_the_seeds_step(hop, step):
    assert course.step_of(hop) == step


def test_what_the_seed_says_depends_on_the_journey():
    attach = course.says("attachment_delete", "REST", "attach")
    detach = course.says("attachment_delete", "REST", "detach")
    assert "rollback" in attach and "frees the volume" in detach
    assert "the only call of the handshake that returns it" in \
        course.says("attachment_update", "REST", None)
    assert course.says(None, "COMMAND", "attach") == \
        course.KIND_SAYS["COMMAND"]
    trace = _view(traces.attach_trace())
    says = _hop(trace, "hop-07")["course"]["says"]
    assert says.startswith("An RPC CAST, fire-and-forget")


def test_every_lane_has_its_role():
    data = web.view(traces.two_hosts_trace())
    roles = {lane["lane"]: lane["role"] for lane in data["lanes"]}
    assert roles["nova-compute@compute2"] == course.ROLES["nova-compute"]
    assert all(roles.values())
    assert set(course.ROLES) == {actor for actor, _ in web.ACTORS}


def test_a_second_attach_of_one_session_starts_again():
    trace = _view(traces.two_hosts_trace())
    assert _values(trace, "b-hop-01")["attachment"] == "not created yet"
    assert _values(trace, "b-hop-17")["volume"] == "in-use"


def _handler_fails(trace, error, drop=()):
    """``trace`` whose compute handler failed with ``error`` in no span of
    its own (an exception raised between the hops), without ``drop``."""
    trace = copy.deepcopy(trace)
    trace["hops"] = [hop for hop in trace["hops"] if hop["id"] not in drop]
    for hop in trace["hops"]:
        hop["error"] = error if hop["id"] == "hop-08" else None
    return _view(trace)


def test_a_handler_that_failed_by_itself_has_its_path():
    """How far the handler got says which step failed: after the driver
    attach (its disk then unplugged, the attachment deleted), or after
    bdm.save (attachment_complete's failure)."""
    failed = traces.failed_attach_trace()
    driver = _handler_fails(failed, "VolumeAttachFailed: hot-plug landed")
    assert driver["failure"]["hop_id"] == "hop-08"
    assert driver["failure"]["path"] == "driver-attach"
    assert [step["step"] for step in driver["failure"]["steps"]] == [
        "disconnect", "secret removed", "attachment_delete", "bdm.destroy"]
    complete = _handler_fails(traces.attach_trace(), "Boom", drop=(
        "hop-17", "hop-17-srv"))
    assert complete["failure"]["path"] == "complete-fails"
    host = _handler_fails(failed, "Boom", drop=(
        "hop-13", "hop-14", "hop-15"))
    assert host["failure"]["path"] == "host-attach"


@pytest.mark.parametrize("name, status, expected", [
    ("GET /v2.1/servers/demo", 404, "ok"),       # the CLI's name lookup
    ("HEAD /v3/{project}/volumes/{id}", 404, "ok"),
    ("GET /v3/{project}/volumes/{id}", 500, "failed"),
    ("POST /v2.1/servers/{id}/os-volume_attachments", 409, "failed"),
    ("DELETE /v3/{project}/attachments/{id}", 404, "failed"),
])
def test_a_read_answered_4xx_is_not_the_journeys_failure(name, status,
                                                         expected):
    """``openstack server add volume demo VOL`` first GETs /servers/demo
    (404) and lists by name: traced, that 404 was taken for the attach's
    failure ("fails in nova-api, before the cast") on a real trace whose
    compute handler failed."""
    hop = {"kind": "REST", "name": name, "status": status, "error": None,
           "duration_ms": 1.0}
    assert state.result(hop) == expected
