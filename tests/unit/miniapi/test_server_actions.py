"""reboot and os-getConsoleOutput through the real app (fake:/ RPC)."""

import pytest

from minicompute.db import api as db_api
from ministack import context


def _action(api, server_id, body, **kw):
    return api.post("/v2.1/servers/%s/action" % server_id, body, **kw)


def _server(server_id):
    return db_api.instance_get(context.get_admin_context(), server_id)


@pytest.mark.parametrize("kind,task,status", [
    ("SOFT", "rebooting", "REBOOT"), ("hard", "rebooting_hard",
                                      "HARD_REBOOT")])
def test_reboot_casts_and_shows_status(api, make_server, compute, kind,
                                       task, status):
    server_id = make_server(token="u1:p1")
    code, body, _ = _action(api, server_id, {"reboot": {"type": kind}},
                            token="u1:p1")
    assert (code, body) == (202, None)
    cast = compute.wait_for_cast("reboot_instance", server_id)
    assert cast["reboot_type"] == kind.upper()
    assert _server(server_id).task_state == task
    shown = api.get("/v2.1/servers/%s" % server_id,
                    token="u1:p1")[1]["server"]
    assert shown["status"] == status
    actions = db_api.action_get_all(context.get_admin_context(), server_id)
    assert [a.action for a in actions][0] == "reboot"


def test_soft_reboot_needs_an_active_server(api, make_server, compute):
    server_id = make_server(vm_state="stopped")
    code, body, _ = _action(api, server_id, {"reboot": {"type": "SOFT"}})
    assert code == 409
    assert "vm_state stopped" in body["conflictingRequest"]["message"]
    # HARD starts a stopped server, as upstream
    assert _action(api, server_id, {"reboot": {"type": "HARD"}})[0] == 202
    compute.wait_for_cast("reboot_instance", server_id)


def test_hard_reboot_may_interrupt_a_soft_one(api, make_server, compute):
    server_id = make_server()
    assert _action(api, server_id, {"reboot": {"type": "SOFT"}})[0] == 202
    assert _action(api, server_id, {"reboot": {"type": "SOFT"}})[0] == 409
    assert _action(api, server_id, {"reboot": {"type": "HARD"}})[0] == 202
    assert _server(server_id).task_state == "rebooting_hard"


@pytest.mark.parametrize("body", [
    {"reboot": {}}, {"reboot": {"type": "WARM"}}, {"reboot": None},
    {"reboot": {"type": "SOFT", "x": 1}}])
def test_reboot_bad_body(api, make_server, body):
    server_id = make_server()
    assert _action(api, server_id, body)[0] == 400
    assert _server(server_id).task_state is None


def test_reboot_of_a_down_host_is_409_and_changes_nothing(api, make_server,
                                                          admin_ctxt):
    server_id = make_server()
    [svc] = db_api.service_get_all(admin_ctxt)
    db_api.service_update(admin_ctxt, svc.uuid, {"forced_down": True})
    assert _action(api, server_id, {"reboot": {"type": "HARD"}})[0] == 409
    assert _server(server_id).task_state is None


def test_console_output(api, make_server, compute):
    server_id = make_server(token="u1:p1")
    code, body, _ = _action(api, server_id, {"os-getConsoleOutput": {}},
                            token="u1:p1")
    assert code == 200
    # the bell character is removed, as upstream
    assert body == {"output": "line one\nline two\nline three\n"}
    for length, expected in ((2, "line three\n"), ("1", ""),
                             (-1, "line one\nline two\nline three\n"),
                             (None, "line one\nline two\nline three\n")):
        body = _action(api, server_id, {"os-getConsoleOutput": {
            "length": length}}, token="u1:p1")[1]
        assert body["output"] == expected, length
    assert len(_action(api, server_id, {"os-getConsoleOutput": {
        "length": 3}})[1]["output"].split("\n")) == 3


@pytest.mark.parametrize("length", ["x", -2, "-5", "1.5", "9" * 5000])
def test_console_output_bad_length(api, make_server, length):
    server_id = make_server()
    assert _action(api, server_id, {"os-getConsoleOutput": {
        "length": length}})[0] == 400


def test_console_output_of_others_and_unscheduled(api, make_server,
                                                  admin_ctxt):
    server_id = make_server(token="u1:p1")
    assert _action(api, server_id, {"os-getConsoleOutput": {}},
                   token="u2:p2")[0] == 404
    db_api.instance_update(admin_ctxt, server_id, {"host": None})
    assert _action(api, server_id, {"os-getConsoleOutput": {}},
                   token="u1:p1")[0] == 409


def test_unknown_action(api, make_server):
    server_id = make_server()
    code, body, _ = _action(api, server_id, {"os-pause": None})
    assert code == 400
    assert "There is no such action: os-pause" in \
        body["badRequest"]["message"]


@pytest.mark.parametrize("version,code", [("2.35", 200), ("2.36", 404)])
def test_os_volumes_end_at_2_35(api, version, code):
    assert api.get("/v2.1/os-volumes", version=version)[0] == code


@pytest.mark.parametrize("body", [
    {"volume": {"size": "#$%"}}, {"volume": {"size": ""}},
    {"volume": {"size": "0"}}, {"volume": {"size": 0}},
    {"volume": {"display_name": "x"}}, {"volume": {"size": "9" * 5000}}])
def test_os_volumes_create_bad_size(api, volumes, body):
    assert api.post("/v2.1/os-volumes", body)[0] == 400
    assert volumes.volume_ids() == []


@pytest.mark.parametrize("path", ["/v2.1/os-volumes/%s",
                                  "/v2.1/os-volumes/invalid-id"])
def test_os_volumes_unknown(api, path):
    path = path.replace("%s", "e0b2b6fe-5bde-4dd1-9b7f-1f2c8b7e2c90")
    assert api.get(path)[0] == 404
    assert api.delete(path)[0] == 404


def test_os_volumes_without_id_are_404(api):
    """tempest's show_volume('') / delete_volume('') hit /os-volumes/."""
    assert api.get("/v2.1/os-volumes/")[0] == 404
    assert api.get("/v2.1/os-volumes")[0] == 200
    assert api.delete("/v2.1/os-volumes/")[0] == 404
