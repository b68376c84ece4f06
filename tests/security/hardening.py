"""What the API-hardening tests of the security tier share: unique
names, resources made with their undo registered at once, the undo of a
create a hole let through, and the check of an upstream fault body."""

import uuid

import requests

from tests.tempest_style import waiters

TIMEOUT = 300


def unique_name(what):
    return "security-%s-%s" % (what, uuid.uuid4().hex[:6])


def delete_volume(client, volume_id):
    client.delete_volume(volume_id)
    waiters.wait_for_volume_deleted(client, volume_id, timeout=TIMEOUT)


def status_and_body(client, volume_id):
    status, _, body = client.request("GET", "/volumes/%s" % volume_id)
    return status, body


def forget_volume(client, volume_id):
    """Undo of a create the hole let through: wait for it, delete it."""
    waiters.wait_for(
        "volume %s to settle" % volume_id,
        lambda: status_and_body(client, volume_id),
        lambda r: r[0] == 404 or r[1]["volume"]["status"] != "creating",
        timeout=TIMEOUT)
    delete_volume(client, volume_id)


def forget_server(client, server_id):
    client.delete_server(server_id)
    waiters.wait_for_server_deleted(client, server_id, timeout=TIMEOUT)


def new_volume(client, cleanup, what):
    volume = client.create_volume(size=1, name=unique_name(what))
    cleanup.add(delete_volume, client, volume["id"])
    waiters.wait_for_volume_status(client, volume["id"], "available",
                                   timeout=TIMEOUT)
    return volume["id"]


def reserve(client, cleanup, volume_id):
    """An attachment of ``volume_id`` (3.27 attachments API, no server and
    no connector: nothing is exported)."""
    attachment = client.request(
        "POST", "/attachments", {"attachment": {"volume_uuid": volume_id}},
        expected=200, microversion="3.27")[2]["attachment"]
    cleanup.add(client.request, "DELETE", "/attachments/%s" %
                attachment["id"], expected=(200, 404), microversion="3.27")
    return attachment["id"]


def attachment_exists(admin_volumes, attachment_id):
    return admin_volumes.request(
        "GET", "/attachments/%s" % attachment_id, microversion="3.27",
        expected=(200, 404))[0] == 200


def fault(response, code, name, message=None):
    status, _, body = response
    assert status == code, "expected %s, got %s: %s" % (code, status, body)
    assert set(body) == {name}, body
    assert body[name]["code"] == code, body
    if message is not None:
        assert body[name]["message"] == message, body
    return body[name]["message"]


def catalog_url(conf, creds, service_type):
    body = {"auth": {"identity": {"methods": ["password"], "password": {
        "user": {"name": creds.username, "password": creds.password,
                 "domain": {"name": creds.domain_name}}}},
        "scope": {"project": {"name": creds.project_name,
                              "domain": {"name": creds.domain_name}}}}}
    resp = requests.post(conf.auth_url + "/v3/auth/tokens", json=body,
                         timeout=30)
    assert resp.status_code == 201, resp.text[:300]
    for entry in resp.json()["token"]["catalog"]:
        if entry["type"] == service_type:
            return [e["url"] for e in entry["endpoints"]
                    if e["interface"] == "public" and
                    e.get("region_id") == conf.region][0].rstrip("/")
    raise AssertionError("no %s endpoint in the catalog" % service_type)


def own_server(demo_compute, conf):
    """An ACTIVE server of the attacker's own (a generator for a module
    fixture: yields its id, deletes it after)."""
    server = demo_compute.create_server(unique_name("server"),
                                        conf.image_ref, conf.flavor_ref)
    try:
        waiters.wait_for_server_status(demo_compute, server["id"], "ACTIVE",
                                       timeout=conf.build_timeout)
        yield server["id"]
    finally:
        demo_compute.delete_server(server["id"])
        waiters.wait_for_server_deleted(demo_compute, server["id"],
                                        timeout=conf.build_timeout)
