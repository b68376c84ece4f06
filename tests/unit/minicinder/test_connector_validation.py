"""The connector's fields are checked before anything reaches tgtd.

The schema on its own (a 400 naming the bad field, a well-formed os-brick
connector accepted), then through the real minicinder API app (fake
driver): every route that takes a connector checks it.
"""

import pytest

from minicinder import exception
from minicinder.api import connector as connector_schema
from minicinder.api import validation
from minicinder.volume.targets import iscsi_names

GOOD = {"initiator": "iqn.2004-10.org.ministack:ab12cd34ef56",
        "host": "compute-1.example.org", "ip": "192.0.2.10",
        "platform": "x86_64", "os_type": "linux", "multipath": False,
        "enforce_multipath": False, "do_local_attach": False,
        "nvme_native_multipath": False, "system uuid": None,
        "uuid": "4c4c4544-0051-3210-8052-b8c04f4e3232",
        "nqn": "nqn.2014-08.org.nvmexpress:uuid:4c4c4544-0051",
        "mountpoint": "/dev/vdb", "wwpns": ["21000024ff3c6d2a"],
        "host_ips": ["192.0.2.10", "fe80::1"], "a_future_key": "value"}


def check(connector):
    validation.validate({"connector": connector}, {
        "type": "object", "properties": {
            "connector": connector_schema.connector}})


def test_an_os_brick_connector_is_accepted():
    check(GOOD)


@pytest.mark.parametrize("system_uuid", [
    "4c4c4544-0051-3210-8052-b8c04f4e3232", "Not Settable", "Not Present"])
def test_a_firmware_without_a_system_uuid_is_accepted(system_uuid):
    # dmidecode's answer where the firmware has no UUID (QEMU without
    # -uuid, as the lab VM): os-brick passes it on as it is.
    check(dict(GOOD, **{"system uuid": system_uuid}))


@pytest.mark.parametrize("field,value", [
    ("initiator", "iqn.2024-01.org.x:y\nTarget 1: iqn.2024-01.org.x:z"),
    ("initiator", "iqn.2024-01.org.x:y\n"),
    ("initiator", ["iqn.2024-01.org.x:y"]),
    ("initiator", "iqn.2024-01.org.x:" + "a" * 220),
    ("initiator", "iqn.x"),
    ("initiator", 42),
    ("host", "host name"), ("host", "h\n"), ("host", ""), ("host", []),
    ("ip", "256.1.1.1"), ("ip", "localhost"), ("ip", 127),
    ("host_ips", ["nope"]),
    ("multipath", "yes"), ("enforce_multipath", 1),
    ("do_local_attach", None),
    ("platform", "x86_64\n"), ("os_type", "linux; rm"),
    ("wwpns", ["xyz"]), ("nqn", "nqn.x\ny"), ("uuid", "not a uuid"),
    ("system uuid", "4c4c4544\n"), ("system uuid", "uuid; rm"),
    ("mountpoint", "/dev/vdb\n"), ("mountpoint", "vdb"),
    ("a_future_key", {"nested": True}), ("a_future_key", "x\ny"),
])
def test_a_malformed_field_is_a_400_naming_it(field, value):
    with pytest.raises(exception.InvalidInput) as exc:
        check(dict(GOOD, **{field: value}))
    assert "connector/%s" % field in exc.value.format_message()


def test_a_key_with_control_characters_is_refused():
    with pytest.raises(exception.InvalidInput):
        check(dict(GOOD, **{"bad\nkey": "x"}))


@pytest.mark.parametrize("name,valid", [
    ("iqn.1993-08.org.debian:01:abcdef012345", True),
    ("iqn.2008-11.org.linux-kvm", True),
    ("eui.02004567A425678D", True),
    ("naa.52004567BA64678D", True),
    ("naa.52004567BA64678D52004567BA64678D", True),
    ("iqn.2008-13.org.linux-kvm", False),
    ("eui.02004567A425678", False),
    ("IQN.2008-11.org.linux-kvm", False),
    ("iqn.2008-11.org.linux kvm", False),
])
def test_iscsi_names(name, valid):
    assert iscsi_names.is_valid(name) is valid


@pytest.mark.parametrize("path,method,body", [
    ("/attachments", "post", lambda vol: {"attachment": {
        "volume_uuid": vol, "connector": {"initiator": "iqn.x\nTarget"}}}),
    ("/volumes/{vol}/action", "post", lambda vol: {
        "os-initialize_connection": {"connector": {
            "initiator": "iqn.2024-01.org.x:y\nTarget 1: x"}}}),
    ("/volumes/{vol}/action", "post", lambda vol: {
        "os-terminate_connection": {"connector": {
            "initiator": ["iqn.2024-01.org.x:y"]}}}),
    ("/volumes/{vol}/action", "post", lambda vol: {
        "os-force_detach": {"connector": {"multipath": "no"}}}),
])
def test_every_route_taking_a_connector_checks_it(cinder, driver, path,
                                                  method, body):
    vol = cinder.create_volume()
    response = getattr(cinder, method)(path.format(vol=vol), body(vol))
    assert response.status_code == 400, response.body
    assert "connector" in response.body["badRequest"]["message"]
    assert driver.exports.get(vol) in (None, set())
