"""API hardening (issue 11, "Low"), attacked on the lab: what one project
may not reach of another's.

* a private volume type used by a project that cannot see it (404, as
  GET answers);
* a token of one project on a URL naming another (400 "Malformed request
  url" on Cinder, nova's "Malformed request URL: ..." on the compute API),
  admins included.

Every assertion names upstream's status and fault body; a resource a test
creates is registered for deletion at once (helpers in ``hardening.py``).
"""



from tests.security.hardening import fault
from tests.security.hardening import forget_volume
from tests.security.hardening import unique_name

# -- Low: a private volume type ----------------------------------------------

def test_private_volume_type_cannot_be_used_by_another_project(
        demo_volumes, admin_volumes, cleanup):
    name = unique_name("private-type")
    vtype = admin_volumes.request("POST", "/types", {"volume_type": {
        "name": name, "os-volume-type-access:is_public": False}},
        expected=200)[2]["volume_type"]
    cleanup.add(admin_volumes.delete_volume_type, vtype["id"])
    fault(demo_volumes.request("GET", "/types/%s" % vtype["id"]), 404,
          "itemNotFound")
    for ref, message in (
            (name, "Volume type with name %s could not be found." % name),
            (vtype["id"], "Volume type %s could not be found." %
             vtype["id"])):
        response = demo_volumes.request("POST", "/volumes", {"volume": {
            "size": 1, "name": unique_name("typed"), "volume_type": ref}})
        if response[0] == 202:   # the hole: register the undo first
            cleanup.add(forget_volume, admin_volumes,
                        response[2]["volume"]["id"])
        fault(response, 404, "itemNotFound", message)


# -- Low: the project in the URL is the token's ------------------------------

def test_url_naming_another_project_is_malformed(demo_session,
                                                 admin_session, demo_volumes,
                                                 admin_volumes, demo_compute,
                                                 admin_compute, cleanup):
    """Cinder: 400 "Malformed request url" for any mismatch, admin
    included; the compute API's legacy /v2.1/{project_id}/ URLs: nova's
    400 naming both projects."""
    demo_pid, admin_pid = demo_session.project_id, admin_session.project_id
    volume_root = demo_session.volume_endpoint.rsplit("/", 1)[0]
    for client, url_project in ((demo_volumes, admin_pid),
                                (admin_volumes, demo_pid)):
        for method, path, body in (
                ("GET", "/volumes", None),
                ("GET", "/volumes/detail?all_tenants=1", None),
                ("POST", "/volumes", {"volume": {"size": 1,
                                                 "name": unique_name("x")}})):
            response = client.request(method, path, body, url="%s/%s%s" % (
                volume_root, url_project, path))
            if response[0] == 202:   # the hole: undo the create
                cleanup.add(forget_volume, admin_volumes,
                            response[2]["volume"]["id"])
            fault(response, 400, "badRequest", "Malformed request url")
    compute_root = demo_session.compute_endpoint.rstrip("/")
    for client, own, other in ((demo_compute, demo_pid, admin_pid),
                               (admin_compute, admin_pid, demo_pid)):
        response = client.request("GET", "/servers", url="%s/%s/servers" % (
            compute_root, other))
        fault(response, 400, "badRequest", (
            "Malformed request URL: URL's project_id '%s' doesn't match "
            "Context's project_id '%s'" % (other, own)))
        assert client.request("GET", "/servers", url="%s/%s/servers" % (
            compute_root, own))[0] == 200
