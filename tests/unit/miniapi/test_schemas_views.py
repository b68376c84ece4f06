"""Schemas and views as pure functions, per microversion."""

import pytest

from miniapi.api import validation
from miniapi.api.schemas import volume_attachments as va_schemas
from miniapi.api.views import volume_attachments as va_views
from miniapi.compute import checks
from miniapi.compute import servers as server_ops
from ministack import exception
from ministack.microversion import APIVersion

VOL = "0b7a5d2e-4c1f-4f8e-9a3b-6d5c4e3f2a1b"
SRV = "1c8b6e3f-5d2a-4a9f-8b4c-7e6d5f4a3b2c"


@pytest.mark.parametrize("version,body,ok", [
    ("2.1", {"volumeId": VOL}, True),
    ("2.1", {"volumeId": VOL, "device": "/dev/vdb"}, True),
    ("2.1", {"volumeId": VOL, "device": None}, True),
    ("2.1", {"volumeId": VOL, "device": "vdb"}, False),
    ("2.48", {"volumeId": VOL, "tag": "a"}, False),
    ("2.49", {"volumeId": VOL, "tag": "a"}, True),
    ("2.49", {"volumeId": VOL, "tag": "a,b"}, False),
    ("2.78", {"volumeId": VOL, "delete_on_termination": True}, False),
    ("2.79", {"volumeId": VOL, "delete_on_termination": True}, True),
    ("2.79", {"volumeId": VOL.replace("-", "")}, False),
    ("2.96", {}, False),
])
def test_attach_schema(version, body, ok):
    schema = va_schemas.create(APIVersion(version))
    data = {"volumeAttachment": body}
    if ok:
        validation.validate(data, schema)
    else:
        with pytest.raises(exception.Invalid):
            validation.validate(data, schema)


def test_update_schema_by_version():
    body = {"volumeAttachment": {"volumeId": VOL,
                                 "delete_on_termination": True}}
    with pytest.raises(exception.Invalid):
        validation.validate(body, va_schemas.update(APIVersion("2.84")))
    validation.validate(body, va_schemas.update(APIVersion("2.85")))


def test_attachment_view_keys_by_version():
    bdm = {"volume_id": VOL, "device_name": "/dev/vdb", "tag": None,
           "delete_on_termination": False, "attachment_id": "a1",
           "uuid": "b1"}
    keys = {v: set(va_views.attachment(bdm, SRV, APIVersion(v)))
            for v in ("2.1", "2.70", "2.79", "2.89")}
    assert keys["2.1"] == {"id", "volumeId", "serverId", "device"}
    assert keys["2.70"] == keys["2.1"] | {"tag"}
    assert keys["2.79"] == keys["2.70"] | {"delete_on_termination"}
    assert keys["2.89"] == (keys["2.79"] - {"id"}) | {"attachment_id",
                                                      "bdm_uuid"}
    posted = va_views.attachment(bdm, SRV, APIVersion("2.89"),
                                 for_create=True)
    assert "id" in posted and "attachment_id" not in posted
    no_device = dict(bdm, device_name=None)
    assert "device" not in va_views.attachment(no_device, SRV,
                                               APIVersion("2.1"))


def test_device_check():
    checks.check_device("/dev/vdb")
    checks.check_device("/dev/xvdc")
    checks.check_device(None)
    with pytest.raises(exception.Invalid):
        checks.check_device("/dev/")


def test_sanitize_hostname():
    assert server_ops.sanitize_hostname("My Server_1") == "my-server-1"
    assert server_ops.sanitize_hostname("***") == "server"
