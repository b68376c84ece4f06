"""What an upstream tempest run left behind on the lab, deleted.

Usage: upstream_tempest_leftovers.py [--cloud ministack-admin] [--stale]

Tempest names everything it makes ``tempest-<Class>-<what>-<random>``
(``data_utils.rand_name``) and deletes it in its cleanups; a response
that fails tempest's schema leaves tempest without the new resource's id,
and the resource leaks. This looks, as the admin, in every project for
servers, volumes, volume types and flavors with that prefix, and for the
projects and users of tempest's dynamic credentials, deletes each (servers
first, so their volumes come free), prints one line per leftover, and
exits 1 when there was any: a leak is a failure of the run.

``--stale``, before a run: the same sweep, for what an earlier run left
(one that was killed before its cleanups, or the tempest-style suite's
``tempest-<run>-...`` objects of a killed run): each is deleted and
printed as STALE, and the exit status is 0, so only what the run itself
leaves counts against it.
"""

import argparse
import sys
import time

import openstack

PREFIX = "tempest-"
TIMEOUT = 300


def _wait_gone(what, find):
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if find() is None:
            return
        time.sleep(2)
    raise SystemExit("%s still there after %ds" % (what, TIMEOUT))


def _delete_servers(conn, found):
    for server in conn.compute.servers(all_projects=True):
        if server.name.startswith(PREFIX):
            found.append("server %s (%s)" % (server.name, server.id))
            conn.compute.delete_server(server, force=False)
            _wait_gone("server %s" % server.id,
                       lambda sid=server.id: conn.compute.find_server(
                           sid, all_projects=True, ignore_missing=True))


def _delete_volumes(conn, found):
    for volume in conn.block_storage.volumes(all_projects=True):
        if (volume.name or "").startswith(PREFIX):
            found.append("volume %s (%s, %s)" % (volume.name, volume.id,
                                                 volume.status))
            if volume.status not in ("available", "error"):
                conn.block_storage.reset_volume_status(
                    volume, status="available", attach_status="detached",
                    migration_status=None)
            conn.block_storage.delete_volume(volume, force=True)
            _wait_gone("volume %s" % volume.id,
                       lambda vid=volume.id: conn.block_storage.find_volume(
                           vid, all_projects=True, ignore_missing=True))


def _delete_types_and_flavors(conn, found):
    for vtype in conn.block_storage.types():
        if vtype.name.startswith(PREFIX):
            found.append("volume type %s (%s)" % (vtype.name, vtype.id))
            conn.block_storage.delete_type(vtype)
    for flavor in conn.compute.flavors(is_public=None):
        if flavor.name.startswith(PREFIX):
            found.append("flavor %s (%s)" % (flavor.name, flavor.id))
            conn.compute.delete_flavor(flavor)


def _delete_credentials(conn, found):
    for user in conn.identity.users():
        if user.name.startswith(PREFIX):
            found.append("user %s (%s)" % (user.name, user.id))
            conn.identity.delete_user(user)
    for project in conn.identity.projects():
        if project.name.startswith(PREFIX):
            found.append("project %s (%s)" % (project.name, project.id))
            conn.identity.delete_project(project)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cloud", default="ministack-admin")
    parser.add_argument("--stale", action="store_true",
                        help="before a run: delete an earlier run's "
                        "objects, report them, exit 0")
    args = parser.parse_args(argv)
    conn = openstack.connect(cloud=args.cloud)
    found = []
    _delete_servers(conn, found)
    _delete_volumes(conn, found)
    _delete_types_and_flavors(conn, found)
    _delete_credentials(conn, found)
    if args.stale:
        for line in found:
            print("STALE (deleted, left by an earlier run) %s" % line)
        return 0
    for line in found:
        print("LEFTOVER (deleted) %s" % line)
    print("tempest leftovers: %d" % len(found))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
