"""Issue 13 on the deployed lab: request ids through the three logs, and
osprofiler traces of a real attach and detach made with the unmodified
``openstack --os-profile`` CLI, with no secret in the trace or the logs.

The volume is a real LVM volume exported by tgt and plugged into the
live demo guest; the trace is read back from the lab's own trace store
(``[profiler] connection_string``) with ``ministack.trace.hops`` and
with the unmodified ``osprofiler trace show`` command.
"""

import configparser
import json
import os
import re
import shutil
import subprocess
import uuid

import pytest

from ministack.trace import hops
from ministack_course import trace_cmd
from tests.tempest_style import waiters

LOGS = ("/opt/stack/logs/miniapi.log", "/opt/stack/logs/minicompute.log",
        "/opt/stack/logs/minicinder.log")
MINIAPI_CONF = "/etc/ministack/miniapi.conf"
PASSWORDS = "/etc/ministack/passwords"
TRACE_ID_RE = re.compile(r"trace show --html ([0-9a-f-]{36})")


def _profiler_conf():
    parser = configparser.RawConfigParser(strict=False)
    parser.read(MINIAPI_CONF)
    if not parser.has_section("profiler"):
        pytest.skip("the lab's daemons have no [profiler] section")
    return dict(parser.items("profiler"))


@pytest.fixture(scope="module")
def profiler_conf():
    conf = _profiler_conf()
    assert conf.get("enabled", "").lower() == "true"
    return conf


@pytest.fixture(scope="module")
def demo_server(demo_compute):
    _, _, body = demo_compute.request("GET", "/servers?name=^demo$",
                                      expected=200)
    servers = body["servers"]
    if not servers:
        pytest.skip("no demo server in the lab")
    return servers[0]["id"]


def _volume(demo_volumes, cleanup, name):
    body = demo_volumes.request("POST", "/volumes", {"volume": {
        "size": 1, "name": name}}, expected=202)[2]["volume"]
    cleanup.add(_delete_volume, demo_volumes, body["id"])
    waiters.wait_for_volume_status(demo_volumes, body["id"], "available")
    return body["id"]


def _delete_volume(client, volume_id):
    status, _, body = client.request("GET", "/volumes/%s" % volume_id,
                                     expected=(200, 404))
    if status == 404:
        return
    if body["volume"]["status"] not in ("available", "error"):
        waiters.wait_for_volume_status(client, volume_id, "available")
    client.request("DELETE", "/volumes/%s" % volume_id,
                   expected=(202, 404))
    waiters.wait_for_volume_deleted(client, volume_id)


def _detach_if_attached(compute, volumes, server_id, volume_id):
    status, _, _ = compute.request(
        "GET", "/servers/%s/os-volume_attachments/%s"
        % (server_id, volume_id), expected=(200, 404))
    if status == 200:
        compute.request("DELETE", "/servers/%s/os-volume_attachments/%s"
                        % (server_id, volume_id), expected=(202, 404))
        waiters.wait_for_volume_status(volumes, volume_id, "available")


def _lines_with(path, text):
    with open(path, errors="replace") as handle:
        return [line for line in handle if text in line]


def test_one_request_id_greps_across_the_three_logs(
        demo_compute, demo_volumes, demo_server, cleanup):
    """The caller's X-OpenStack-Request-ID reaches miniapi's access log,
    minicompute (RPC context) and minicinder (the Cinder client's
    header), as one grep shows."""
    volume_id = _volume(demo_volumes, cleanup, "request-id-grep")
    request_id = "req-%s" % uuid.uuid4()
    cleanup.add(_detach_if_attached, demo_compute, demo_volumes,
                demo_server, volume_id)
    demo_compute.request(
        "POST", "/servers/%s/os-volume_attachments" % demo_server,
        {"volumeAttachment": {"volumeId": volume_id}}, expected=200,
        headers={"X-OpenStack-Request-ID": request_id})
    waiters.wait_for_volume_status(demo_volumes, volume_id, "in-use")
    found = {os.path.basename(path): _lines_with(path, request_id)
             for path in LOGS}
    assert all(found.values()), found
    access = [line for line in found["miniapi.log"]
              if '"POST /v2.1/servers/%s/os-volume_attachments"'
              % demo_server in line]
    assert access and "status: 200 len: " in access[0], found
    assert any("attach" in line.lower()
               for line in found["minicompute.log"]), found
    assert any("/attachments" in line
               for line in found["minicinder.log"]), found


def _openstack(*args):
    """The unmodified OSC, as the demo user (clouds.yaml's ministack)."""
    openstack = shutil.which("openstack") or "/opt/stack/venv/bin/openstack"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    return subprocess.run([openstack, "--os-cloud", "ministack"] +
                          list(args), capture_output=True, text=True,
                          timeout=300, env=env, check=False)


def _trace(url, trace_id, expected_names):
    """The stored trace once every name in ``expected_names`` is there
    (the compute's work on a cast finishes after the API answered)."""
    got = {}

    def get():
        try:
            got["trace"] = hops.load(url, trace_id)
        except hops.TraceNotFound:
            return set()
        return {hop["name"] for hop in got["trace"]["hops"]}

    waiters.wait_for("trace %s with %s" % (trace_id, expected_names), get,
                     lambda names: expected_names <= names, timeout=120)
    return got["trace"]


def _secrets(demo_session, chap_password):
    values = {chap_password, demo_session.token}
    with open(PASSWORDS) as handle:
        for line in handle:
            name, _, value = line.strip().partition("=")
            if name.endswith("PASSWORD") and value:
                values.add(value)
    return {value for value in values if value}


def _assert_no_secret(text, secrets, where):
    for secret in secrets:
        assert secret not in text, "a secret is in %s" % where
    # A Fernet token (whosever) starts like this.
    assert "gAAAAA" not in text, "a token is in %s" % where


def test_traced_attach_and_detach_with_the_openstack_cli(
        demo_compute, demo_volumes, admin_volumes, demo_session,
        demo_server, profiler_conf, cleanup):
    url = trace_cmd.connection_string([MINIAPI_CONF])
    key = profiler_conf["hmac_keys"].split(",")[0].strip()
    volume_id = _volume(demo_volumes, cleanup, "traced-attach")
    cleanup.add(_detach_if_attached, demo_compute, demo_volumes,
                demo_server, volume_id)
    sizes = {path: os.path.getsize(path) for path in LOGS}

    # -- attach ---------------------------------------------------------------
    result = _openstack("--os-profile", key, "server", "add", "volume",
                        demo_server, volume_id)
    assert result.returncode == 0, result.stderr
    trace_id = TRACE_ID_RE.search(result.stdout + result.stderr).group(1)
    waiters.wait_for_volume_status(demo_volumes, volume_id, "in-use")
    attach = _trace(url, trace_id, {
        "reserve_block_device_name", "attach_volume",
        "os_brick get_connector_properties", "virDomainAttachDeviceFlags"})
    by_name = {}
    for hop in attach["hops"]:
        by_name.setdefault(hop["name"], []).append(hop)
    services = {hop["service"] for hop in attach["hops"]}
    assert {"nova-api", "nova-compute", "cinder-api",
            "cinder-volume"} <= services, services
    actors = {hop["actor"] for hop in attach["hops"]}
    assert {"nova-api", "rabbitmq", "nova-compute", "cinder", "os-brick",
            "libvirt"} <= actors, actors
    kinds = {hop["kind"] for hop in attach["hops"]}
    assert {"REST", "CALL", "CAST", "LIBRARY", "COMMAND"} <= kinds, kinds
    assert any(hop["kind"] == "CALL" and hop["actor"] == "rabbitmq"
               for hop in by_name["reserve_block_device_name"])
    assert [hop["kind"] for hop in by_name["attach_volume"]] == \
        ["CAST", "CAST"]
    names = " | ".join(sorted(by_name))
    assert "POST /v3/{project}/attachments" in names
    assert "(os-complete)" in names
    assert re.search(r"PUT /v3/\{project\}/attachments/\{id\}", names)
    assert "tgtadm" in names
    assert attach["journey"] == "attach"
    phases = {hop["phase"] for hop in attach["hops"]}
    assert {"reserve", "cast", "connect/attach", "complete"} <= phases
    # Each Cinder call nova makes and cinder-api's entry of it: one hop
    # (the CLI's own volume GETs are roots: no client hop of theirs).
    entries = [hop for hop in attach["hops"]
               if hop["service"] == "cinder-api" and hop["kind"] == "REST"
               and hop["parent_id"]]
    assert entries and all(hop["client_id"] for hop in entries), entries
    assert all(hop["error"] is None for hop in attach["hops"]
               if hop["phase"]), [h for h in attach["hops"] if h["error"]]

    # The CHAP password of this very connection (admin sees it).
    attachments = admin_volumes.request(
        "GET", "/attachments/detail?volume_id=%s&all_tenants=1" % volume_id,
        expected=200, microversion="3.44")[2]["attachments"]
    info = attachments[0].get("connection_info") or {}
    data = info.get("data", info)
    chap = data.get("auth_password", "")
    assert chap and chap != "***"

    # -- detach ---------------------------------------------------------------
    result = _openstack("--os-profile", key, "server", "remove", "volume",
                        demo_server, volume_id)
    assert result.returncode == 0, result.stderr
    detach_id = TRACE_ID_RE.search(result.stdout + result.stderr).group(1)
    waiters.wait_for_volume_status(demo_volumes, volume_id, "available")
    detach = _trace(url, detach_id, {
        "detach_volume", "virDomainDetachDeviceFlags",
        "DELETE /v3/{project}/attachments/{id}"})
    detach_actors = {hop["actor"] for hop in detach["hops"]}
    assert {"nova-api", "rabbitmq", "nova-compute", "cinder",
            "libvirt"} <= detach_actors
    assert detach["journey"] == "detach"
    detach_phases = {hop["phase"] for hop in detach["hops"]}
    assert {"begin_detaching", "cast", "unplug + disconnect",
            "attachment_delete"} <= detach_phases, detach_phases

    # -- the unmodified osprofiler CLI reads the same store ---------------
    osprofiler = shutil.which("osprofiler") or \
        "/opt/stack/venv/bin/osprofiler"
    shown = subprocess.run(
        [osprofiler, "trace", "show", "--json", trace_id,
         "--connection-string", url],
        capture_output=True, text=True, timeout=120, check=False)
    assert shown.returncode == 0, shown.stderr
    report = json.loads(shown.stdout)
    assert {"wsgi", "rpc", "cinder", "libvirt", "os_brick"} <= \
        set(report["stats"]), report["stats"]

    # -- and ministack-trace finds it by a request id ----------------------
    request_id = next(hop["request_id"] for hop in attach["hops"]
                      if hop["name"] == "attach_volume")
    assert hops.load(url, request_id)["trace_id"] == trace_id

    # -- no secret in the traces, osprofiler's report or the logs ----------
    secrets = _secrets(demo_session, chap) | {key}
    for what, text in (("the attach trace", json.dumps(attach)),
                       ("the detach trace", json.dumps(detach)),
                       ("osprofiler's report", shown.stdout)):
        _assert_no_secret(text, secrets, what)
    for path in LOGS:
        with open(path, errors="replace") as handle:
            handle.seek(sizes[path])
            _assert_no_secret(handle.read(), secrets, path)
