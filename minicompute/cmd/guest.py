"""ministack-guest SERVER -- COMMAND...: run a command inside a guest.

The seed's last check of an attach is ``lsblk`` inside the guest. The
lab's guests have no network (no SSH): this runs the command through the
QEMU guest agent of the server's domain (``guest-exec``), prints its
standard output and error as they are, and exits with its exit code::

    ministack-guest demo -- lsblk
    ministack-guest 3f0c...e1 -- cat /sys/block/vdb/serial

SERVER is a server's id (the domain's UUID) or its name, which the
compute API resolves (``--cloud``, default ``ministack-admin`` of
clouds.yaml: a server of any project); a name shared by several servers
is refused, naming their ids. The guest is looked for on every compute
host of this machine (each host's libvirtd, from its minicompute config:
``minicompute.hosts``), or only at ``--uri``. Root only (libvirt's
system sockets).

The interactive way in is ``virsh console <domain>`` (the domain name is
the server's ``OS-EXT-SRV-ATTR:instance_name``); leave it with ``Ctrl+]``.
"""

import argparse
import sys

import libvirt
from oslo_utils import uuidutils

from minicompute import hosts
from minicompute.virt.libvirt import guest_agent


def server_id(server, cloud):
    """The id of ``server`` (an id, or a name the compute API resolves).

    :raises LookupError: no such server, or a name shared by several.
    """
    import openstack
    conn = openstack.connect(cloud=cloud)
    try:
        return conn.compute.find_server(server, ignore_missing=False,
                                        all_projects=True).id
    except openstack.exceptions.NotFoundException:
        raise LookupError("no server %r" % server) from None
    except openstack.exceptions.DuplicateResource:
        ids = [s.id for s in conn.compute.servers(name="^%s$" % server,
                                                  all_projects=True)]
        raise LookupError("several servers are named %r: %s; give the id"
                          % (server, ", ".join(ids))) from None


def _lookup(uris, uuid):
    """(connection, domain) of the guest ``uuid`` on the first of ``uris``
    whose libvirtd has it, or None."""
    for uri in uris:
        try:
            conn = libvirt.open(uri)
        except libvirt.libvirtError:
            continue          # a host whose libvirtd is down
        try:
            return conn, conn.lookupByUUIDString(uuid)
        except libvirt.libvirtError:
            conn.close()
    return None


def find_domain(uris, server, cloud):
    """The domain of ``server`` (id or name) on one of this machine's
    compute hosts (the libvirtd of each of ``uris``).

    :returns: (libvirt connection, domain); close the connection.
    :raises LookupError: no such server, or its guest is not here.
    """
    if uuidutils.is_uuid_like(server):
        found = _lookup(uris, server)
        if found:
            return found   # else a server of another machine, or a name
    uuid = server_id(server, cloud)
    found = _lookup(uris, uuid)
    if not found:
        raise LookupError("server %s has no guest on this machine's "
                          "compute hosts" % uuid)
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="ministack-guest", description=__doc__.split("\n")[0])
    parser.add_argument("server", help="server id or name")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="-- COMMAND [ARG...]")
    parser.add_argument("--uri", default=None,
                        help="libvirt URI (default: the libvirtd of every "
                             "compute host of this machine, from %s)"
                             % hosts.CONF_DIR)
    parser.add_argument("--cloud", default="ministack-admin",
                        help="clouds.yaml cloud that resolves a name "
                             "(default: ministack-admin)")
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] \
        else args.command
    if not command:
        parser.error("no command: ministack-guest SERVER -- COMMAND...")
    # libvirt prints every error it raises to stderr by default; the
    # command's own stderr must come through alone.
    libvirt.registerErrorHandler(lambda _ctx, _err: None, None)
    uris = [args.uri] if args.uri else \
        [h.libvirt_uri for h in hosts.compute_hosts().values()] or \
        [hosts.DEFAULT_URI]
    conn = None
    try:
        conn, domain = find_domain(uris, args.server, args.cloud)
        code, out, err = guest_agent.guest_exec(
            domain, command, timeout=args.timeout, text=False)
    except (LookupError, guest_agent.GuestAgentError) as exc:
        print("ministack-guest: %s" % exc, file=sys.stderr)
        return 2
    finally:
        if conn is not None:
            conn.close()
    sys.stdout.buffer.write(out)
    sys.stdout.buffer.flush()
    sys.stderr.buffer.write(err)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
