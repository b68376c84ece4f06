"""``ministack-fault`` without a lab (ministack_audit/fault_cmd.py,
fault_client.py): what list and --help teach, where credentials come
from, what arm/disarm/status send and print, a refusal in one line."""

import json

import pytest
import yaml

from minicompute.faults import catalog
from ministack_audit import fault_client
from ministack_audit import fault_cmd

VOL = "11111111-1111-1111-1111-111111111111"
SRV = "33333333-3333-3333-3333-333333333333"


class FakeClient:
    def __init__(self):
        self.calls = []
        self.state = {"faults": [], "fired": [], "hosts": [
            {"host": "lab1", "state": "ok"}]}

    def server(self, ref):
        self.calls.append(("server", ref))
        return {"id": SRV, "name": ref}

    def arm(self, name, volume_id=None, server_id=None, seconds=None):
        self.calls.append(("arm", name, volume_id, server_id, seconds))
        return {"id": "f-1", "name": name, "volume_id": volume_id,
                "server_id": server_id, "one_shot": seconds is None,
                "seconds_left": seconds or 3600, "hosts": ["lab1"]}

    def disarm(self, name=None):
        self.calls.append(("disarm", name))
        return {"disarmed": [{"id": "f-1", "name": "driver-attach",
                              "volume_id": VOL, "server_id": None}] * 2,
                "hosts": [{"host": "lab1", "state": "ok"},
                          {"host": "compute2", "state": "did not answer"}]}

    def status(self):
        return self.state


def _run(argv, client=None):
    lines = []
    client = client or FakeClient()
    code = fault_cmd.main(argv, out=lines.append,
                          client_factory=lambda cloud: client)
    return code, lines, client


def test_list_prints_the_four_names_one_a_line():
    code, lines, client = _run(["list"])
    assert code == 0 and client.calls == []
    assert [line.split()[0] for line in lines] == list(catalog.NAMES)
    assert len(lines) == 4


def test_help_teaches_each_fault_in_the_seeds_words(capsys):
    with pytest.raises(SystemExit) as done:
        fault_cmd.main(["--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for fault in catalog.FAULTS:
        assert fault.name in text
        assert "path %d of the seed, \"%s\"" % (fault.number,
                                                 fault.path) in text
    for words in ("attachment_delete", "bdm.save()", "roll_detaching",
                  "volume_bdm.destroy()", "admin action",
                  "a restart of minicompute disarms everything"):
        assert words in text, words


def test_arm_help_lists_the_faults(capsys):
    with pytest.raises(SystemExit):
        fault_cmd.main(["arm", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--volume ID | --server ID" in text and "--for SECONDS" in text
    assert "Guest refuses to release the disk on detach" in text


def test_arm_sends_the_fault_and_says_what_will_happen():
    code, lines, client = _run(["arm", "driver-attach", "--volume", VOL])
    assert code == 0
    assert client.calls == [("arm", "driver-attach", VOL, None, None)]
    assert lines[0].startswith("armed driver-attach (f-1) for volume %s on "
                               "compute host(s) lab1: one shot" % VOL)
    assert "recovery path 1" in lines[2]


def test_arm_a_server_by_name_for_a_window():
    code, lines, client = _run(["arm", "detach-refused", "--server", "demo",
                                "--for", "30"])
    assert code == 0
    assert client.calls == [("server", "demo"),
                            ("arm", "detach-refused", None, SRV, 30)]
    assert "every match, 30s left" in lines[0]


@pytest.mark.parametrize("argv", [
    ["arm", "no-such-fault"], ["arm"],
    ["arm", "driver-attach", "--volume", VOL, "--server", SRV],
    ["disarm", "bogus"]])
def test_bad_usage_exits_2(argv, capsys):
    with pytest.raises(SystemExit) as done:
        _run(argv)
    assert done.value.code == 2


@pytest.mark.parametrize("seconds", ["0", "86401"])
def test_a_bad_window_exits_2(seconds, capsys):
    code, _, client = _run(["arm", "driver-attach", "--for", seconds])
    assert code == 2 and client.calls == []
    assert "--for takes 1 to 86400" in capsys.readouterr().err


def test_disarm_says_each_fault_once_and_unreachable_hosts():
    code, lines, client = _run(["disarm"])
    assert code == 0 and client.calls == [("disarm", None)]
    assert lines == ["disarmed driver-attach (f-1) for volume %s" % VOL,
                     "compute host compute2 did not answer"]


def test_status_lines():
    client = FakeClient()
    client.state["faults"] = [{
        "id": "f-1", "name": "reserve-timeout", "volume_id": None,
        "server_id": SRV, "one_shot": True, "seconds_left": 12,
        "hosts": ["lab1"], "armed_by": {"user_id": "admin"}}]
    client.state["fired"] = [{
        "name": "driver-attach", "host": "lab1", "fired_at": "T",
        "volume_id": VOL, "server_id": SRV, "request_id": "req-1"}]
    code, lines, _ = _run(["status"], client)
    assert code == 0
    assert lines[0].startswith("ARMED reserve-timeout")
    assert "server %s on lab1: one shot, 12s left" % SRV in lines[0]
    assert lines[1].startswith("fired driver-attach")
    assert "(request req-1)" in lines[1]
    code, lines, _ = _run(["status", "--json"], client)
    assert json.loads("\n".join(lines)) == client.state


def test_status_with_nothing_armed():
    assert _run(["status"])[1] == ["no fault armed"]


def test_a_command_error_is_one_line_and_its_code(capsys):
    class Refusing(FakeClient):
        def arm(self, *args, **kwargs):
            raise fault_client.CommandError("refused (HTTP 403)")

    code, _, _ = _run(["arm", "driver-attach"], Refusing())
    assert code == 1
    assert capsys.readouterr().err == \
        "ministack-fault: refused (HTTP 403)\n"


# -- credentials -------------------------------------------------------------

@pytest.fixture
def clouds(tmp_path):
    path = tmp_path / "clouds.yaml"
    path.write_text(yaml.safe_dump({"clouds": {
        "ministack-admin": {"auth": {"auth_url": "http://k/v3",
                                     "username": "admin"},
                            "region_name": "RegionOne"},
        "ministack": {"auth": {"auth_url": "http://k/v3",
                               "username": "demo"}}}}))
    return (str(path),)


def test_default_is_the_admin_cloud(clouds):
    auth, region, source = fault_client.credentials(None, {}, clouds)
    assert auth["username"] == "admin" and region == "RegionOne"
    assert source.startswith("cloud ministack-admin of ")


def test_openrc_variables_win_over_the_default(clouds):
    env = {"OS_AUTH_URL": "http://k/v3", "OS_USERNAME": "demo",
           "OS_PASSWORD": "p", "OS_PROJECT_NAME": "demo",
           "OS_REGION_NAME": "R"}
    auth, region, source = fault_client.credentials(None, env, clouds)
    assert auth["username"] == "demo" and auth["project_name"] == "demo"
    assert auth["user_domain_name"] == "Default" and region == "R"
    assert source == "OS_* variables"


def test_os_cloud_wins_over_everything(clouds):
    env = {"OS_AUTH_URL": "http://k/v3", "OS_USERNAME": "x",
           "OS_CLOUD": "ministack-admin"}
    assert fault_client.credentials(None, env, clouds)[0]["username"] == \
        "admin"
    assert fault_client.credentials("ministack", env, clouds)[0][
        "username"] == "demo"


def test_an_unknown_cloud_is_exit_2(clouds):
    with pytest.raises(fault_client.CommandError) as err:
        fault_client.credentials("nope", {}, clouds)
    assert err.value.code == 2


class _Response:
    def __init__(self, status, body):
        self.status_code = status
        self._body = body
        self.content = json.dumps(body).encode()
        self.text = json.dumps(body)
        self.url = "http://c/v2.1/os-ministack-faults"
        self.request = type("R", (), {"method": "POST"})()

    def json(self):
        return self._body


def test_a_403_says_arming_is_an_admin_action():
    resp = _Response(403, {"forbidden": {"code": 403, "message": "Policy "
                           "doesn't allow x to be performed."}})
    with pytest.raises(fault_client.CommandError) as err:
        fault_client._answer(resp, (200,), "OS_* variables")
    assert err.value.code == 1
    assert str(err.value).startswith("refused (HTTP 403) for OS_* "
                                     "variables: Policy doesn't allow")
    assert "admin action" in str(err.value)


def test_other_faults_name_the_request():
    resp = _Response(404, {"itemNotFound": {"code": 404,
                                            "message": "Volume x could not "
                                                       "be found."}})
    with pytest.raises(fault_client.CommandError) as err:
        fault_client._answer(resp, (200,), "s")
    assert str(err.value) == ("POST http://c/v2.1/os-ministack-faults: "
                              "HTTP 404: Volume x could not be found.")
