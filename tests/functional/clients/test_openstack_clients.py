"""The pinned real clients against the deployed daemons, with keystone.

One module, one deployment, tests in journey order (each builds on the
previous ones' resources, kept in ``STATE``): admin boots a server,
creates a volume, attaches it and inspects everything through
``openstack``, the ``nova`` and ``cinder`` CLIs and openstacksdk; demo
then repeats the reads and sees none of it, getting clean errors; admin
detaches and deletes. Clients: python-openstackclient 10.5.0,
openstacksdk 4.22.0, python-novaclient 18.13.1, python-cinderclient 9.10.0.
"""



from tests.support import waiting

STATE = {}
MV = ("--os-volume-api-version", "3.44")


def _get(row, *names):
    """A field of OSC's JSON output, whatever its capitalisation."""
    lowered = {k.lower(): v for k, v in row.items()}
    for name in names:
        if name.lower() in lowered:
            return lowered[name.lower()]
    raise KeyError("none of %s in %s" % (names, sorted(row)))


def _clean_error(rc, out, err):
    """A refused command: non-zero exit, a message, no traceback."""
    assert rc != 0, out
    assert err.strip()
    assert "Traceback" not in err


def _wait_volume(cli, volume_id, wanted, timeout=120):
    waiting.wait_for(
        "volume %s to be %s" % (volume_id, wanted),
        lambda: _get(cli.json("volume", "show", volume_id), "status"),
        lambda status: status == wanted,
        lambda status: status.startswith("error"), timeout=timeout,
        interval=1)


def test_token_catalog_and_image(deployment):
    admin, demo = deployment["admin"], deployment["demo"]
    token = admin.json("token", "issue")
    STATE["tokens"] = [_get(token, "id")]
    assert _get(token, "project_id") and _get(token, "user_id")
    assert _get(demo.json("token", "issue"), "project_id") != \
        _get(token, "project_id")
    services = {_get(s, "Type") for s in admin.json("catalog", "list")}
    assert {"identity", "compute", "volumev3", "block-storage",
            "image"} <= services
    names = [_get(i, "Name") for i in admin.json("image", "list")]
    assert deployment["image"]["name"] in names


def test_server_create_list_show(deployment):
    admin = deployment["admin"]
    name = "cl%s-vm" % deployment["run"]
    server = admin.json("server", "create", "--image",
                        deployment["image"]["name"], "--flavor", "m1.nano",
                        "--nic", "none", "--wait", name, timeout=600)
    assert _get(server, "status") == "ACTIVE"
    STATE["server"] = _get(server, "id")
    listed = admin.json("server", "list")
    assert [(_get(s, "ID"), _get(s, "Status")) for s in listed] == \
        [(STATE["server"], "ACTIVE")]
    shown = admin.json("server", "show", name)
    assert _get(shown, "id") == STATE["server"]
    assert _get(shown, "OS-EXT-SRV-ATTR:host") == \
        "cl-%s" % deployment["run"]


def test_volume_create_show_list(deployment):
    admin = deployment["admin"]
    name = "cl%s-vol" % deployment["run"]
    volume = admin.json("volume", "create", "--size", "1", name)
    STATE["volume"] = _get(volume, "id")
    _wait_volume(admin, STATE["volume"], "available")
    shown = admin.json("volume", "show", name)
    assert _get(shown, "size") == 1 and _get(shown, "name") == name
    listed = admin.json("volume", "list")
    assert [_get(v, "ID") for v in listed] == [STATE["volume"]]


def test_volume_create_from_another(deployment):
    """``openstack volume create --source``, as a user types it: the
    clone is the source's size, names its source, and is deleted alone."""
    admin = deployment["admin"]
    name = "cl%s-clone" % deployment["run"]
    clone = admin.json("volume", "create", "--source",
                       "cl%s-vol" % deployment["run"], name)
    clone_id = _get(clone, "id")
    _wait_volume(admin, clone_id, "available")
    shown = admin.json("volume", "show", name)
    assert (_get(shown, "source_volid"), _get(shown, "size")) == \
        (STATE["volume"], 1)
    rc, out, err = admin.openstack("volume", "delete", name)
    assert rc == 0, out + err
    waiting.wait_for("the clone to be gone",
                     lambda: [_get(v, "ID") for v in
                              admin.json("volume", "list")],
                     lambda ids: ids == [STATE["volume"]], timeout=120,
                     interval=1)


def test_server_add_volume_and_lists(deployment):
    admin = deployment["admin"]
    rc, out, err = admin.openstack("server", "add", "volume",
                                   STATE["server"], STATE["volume"])
    assert rc == 0, out + err
    _wait_volume(admin, STATE["volume"], "in-use")
    (att,) = admin.json("server", "volume", "list", STATE["server"])
    assert _get(att, "Volume ID") == STATE["volume"]
    assert _get(att, "Device").startswith("/dev/vd")
    STATE["attachment"] = _get(att, "Attachment ID")
    shown = admin.json("volume", "show", STATE["volume"])
    assert _get(shown, "attachments")[0]["server_id"] == STATE["server"]


def test_volume_attachment_list_show_all_projects(deployment):
    admin = deployment["admin"]
    listed = admin.json(*MV, "volume", "attachment", "list",
                        "--all-projects")
    assert [(_get(a, "ID"), _get(a, "Server ID"), _get(a, "Status"))
            for a in listed] == [(STATE["attachment"], STATE["server"],
                                  "attached")]
    shown = admin.json(*MV, "volume", "attachment", "show",
                       STATE["attachment"])
    assert _get(shown, "Volume ID", "volume_id") == STATE["volume"]


def test_server_events(deployment):
    admin = deployment["admin"]
    events = admin.json("server", "event", "list", STATE["server"])
    actions = [_get(e, "Action") for e in events]
    assert sorted(actions) == ["attach_volume", "create"]
    attach = [e for e in events if _get(e, "Action") == "attach_volume"][0]
    shown = admin.json("server", "event", "show", STATE["server"],
                       _get(attach, "Request ID"))
    assert _get(shown, "action") == "attach_volume"
    assert _get(shown, "events")


def test_legacy_clis_and_sdk(deployment):
    admin = deployment["admin"]
    rc, out, err = admin.legacy("nova", "list")
    assert rc == 0 and STATE["server"] in out, err
    rc, out, err = admin.legacy("nova", "volume-attachments",
                                STATE["server"])
    assert rc == 0 and STATE["volume"] in out, err
    rc, out, err = admin.legacy("cinder", "show", STATE["volume"])
    assert rc == 0 and "in-use" in out, err
    rc, out, err = admin.legacy("cinder", *MV, "attachment-list",
                                "--all-tenants", "1")
    assert rc == 0 and STATE["attachment"] in out, err
    from openstack import config as sdk_config
    from openstack import connection
    region = sdk_config.OpenStackConfig(
        config_files=[admin.clouds_yaml]).get_one(cloud="ministack-admin")
    conn = connection.Connection(config=region)
    try:
        assert [s.id for s in conn.compute.servers()] == [STATE["server"]]
        assert [v.id for v in conn.block_storage.volumes()] == \
            [STATE["volume"]]
    finally:
        conn.close()


def test_demo_sees_nothing_of_admins(deployment):
    demo = deployment["demo"]
    assert demo.json("server", "list") == []
    assert demo.json("volume", "list") == []
    assert demo.json(*MV, "volume", "attachment", "list") == []
    _clean_error(*demo.openstack("server", "show", STATE["server"]))
    _clean_error(*demo.openstack("volume", "show", STATE["volume"]))
    _clean_error(*demo.openstack("server", "volume", "list",
                                 STATE["server"]))
    _clean_error(*demo.openstack("server", "event", "list", "--long",
                                 STATE["server"]))
    rc, out, err = demo.openstack("server", "list", "--all-projects")
    _clean_error(rc, out, err)
    assert "403" in err or "Policy" in err
    _clean_error(*demo.openstack("server", "remove", "volume",
                                 STATE["server"], STATE["volume"]))
    _clean_error(*demo.openstack("server", "delete", STATE["server"]))
    rc, out, err = demo.legacy("nova", "show", STATE["server"])
    _clean_error(rc, out, err)
    rc, out, err = demo.legacy("cinder", "show", STATE["volume"])
    _clean_error(rc, out, err)
    # Nothing of the refused calls changed admin's resources.
    admin = deployment["admin"]
    assert _get(admin.json("volume", "show", STATE["volume"]),
                "status") == "in-use"


def test_server_remove_volume(deployment):
    admin = deployment["admin"]
    rc, out, err = admin.openstack("server", "remove", "volume",
                                   STATE["server"], STATE["volume"])
    assert rc == 0, out + err
    _wait_volume(admin, STATE["volume"], "available")
    assert admin.json("server", "volume", "list", STATE["server"]) == []
    events = admin.json("server", "event", "list", STATE["server"])
    assert "detach_volume" in [_get(e, "Action") for e in events]


def test_volume_attachment_delete(deployment):
    """A Cinder-only reservation (no Nova BDM), removed by OSC.

    It is made with the cinder CLI: ``openstack volume attachment
    create`` sends ``"mode": null``, which minicinder's 3.44 schema
    refuses (400; reported to the Cinder engineer).
    """
    admin = deployment["admin"]
    rc, out, err = admin.legacy("cinder", *MV, "attachment-create",
                                STATE["volume"], STATE["server"])
    assert rc == 0, out + err
    rows = [[cell.strip() for cell in line.split("|")[1:3]]
            for line in out.splitlines() if line.startswith("|")]
    attachment = dict(rows)["id"]
    assert _get(admin.json(*MV, "volume", "attachment", "show", attachment),
                "Status", "status") == "reserved"
    rc, out, err = admin.openstack(*MV, "volume", "attachment", "delete",
                                   attachment)
    assert rc == 0, out + err
    assert admin.json(*MV, "volume", "attachment", "list",
                      "--all-projects") == []
    _wait_volume(admin, STATE["volume"], "available")


def test_delete_server_and_volume(deployment):
    admin = deployment["admin"]
    rc, out, err = admin.openstack("server", "delete", "--wait",
                                   STATE["server"], timeout=300)
    assert rc == 0, out + err
    rc, out, err = admin.openstack("volume", "delete", STATE["volume"])
    assert rc == 0, out + err
    waiting.wait_for("the volume list to be empty",
                     lambda: admin.json("volume", "list"),
                     lambda volumes: not volumes, timeout=120, interval=1)
    assert admin.json("volume", "list") == []
    assert admin.json("server", "list") == []


def test_no_secret_in_any_log(deployment):
    """No token, password or CHAP secret in the three daemons' logs.

    The CHAP secrets are read from minicinder's database (every
    attachment this run made keeps its connection_info there).
    """
    import json
    import sqlite3

    lab = deployment["lab"]
    with sqlite3.connect(deployment["cinder_db"]) as db:
        infos = [json.loads(row[0]) for row in db.execute(
            "SELECT connection_info FROM volume_attachment "
            "WHERE connection_info IS NOT NULL")]
    chap = [i["auth_password"] for i in infos if i.get("auth_password")]
    assert chap, "the attach used no CHAP secret?"
    secrets = STATE.get("tokens", []) + chap + [
        lab.admin.password, lab.demo.password, lab.service_password]
    for daemon in deployment["daemons"]:
        log = daemon.log()
        assert log, daemon.name
        for secret in secrets:
            assert secret not in log, (daemon.name, "secret in log")
