"""``ministack-fault``: the seed's four failures, on demand, on the lab.

Usage::

    ministack-fault list
    ministack-fault arm NAME [--volume ID | --server ID] [--for SECONDS]
    ministack-fault disarm [NAME]
    ministack-fault status
    ministack-fault watch [--volume ID] [--server ID] [--timeout SECONDS]

``arm`` makes fault NAME happen, for real, on the next attach (or
detach) of the volume or server; one shot unless ``--for``. ``watch``
(after that attach or detach) waits for the fault to fire and its
recovery to finish, then prints every ledger, the audit, and which of
the seed's recovery paths ran and why the state is clean
(``fault_report.py``). The faults live in the compute hosts' memory
(``minicompute.faults``), armed through the compute API's admin-only
``/v2.1/os-ministack-faults`` (``fault_client.py``).

Exit codes: 0 done (``watch``: the seed's end state), 1 refused or not
clean, 2 bad usage or no credentials.
"""

import argparse
import json
import os
import sys
import textwrap

from minicompute.faults import catalog
from ministack import exception
from ministack_audit import fault_client
from ministack_audit import fault_report
from ministack_audit import ledgers


def _faults_help():
    lines = ["the faults (the seed's \"When it goes wrong\"):", ""]
    for fault in catalog.FAULTS:
        lines.append("  %s: path %d of the seed, \"%s\"" % (
            fault.name, fault.number, fault.path))
        for label, text in (("what fails", fault.step),
                            ("recovery", fault.recovery),
                            ("ends", _end(fault)), ("why", fault.clean)):
            lines += textwrap.wrap("%s: %s" % (label, text), 76,
                                   initial_indent="      ",
                                   subsequent_indent="        ",
                                   break_on_hyphens=False)
        lines.append("")
    return "\n".join(lines)


def _end(fault):
    end = fault.end
    return "volume %s, %s Cinder attachment, %s BDM, %s disk in the guest" % (
        end["volume"], "its" if end["attachment"] else "no",
        "its" if end["bdm"] else "no", "its" if end["disk"] else "no")


EPILOG = """%s
Credentials: --os-cloud NAME or OS_CLOUD (clouds.yaml), else the OS_*
variables of an openrc, else the cloud ministack-admin. Arming is an
admin action: anyone else is refused. Faults are held in the compute
hosts' memory: a restart of minicompute disarms everything, and an
unused one-shot fault expires after %d s.
""" % (_faults_help(), catalog.ONE_SHOT_LIFETIME)


def _parser():
    p = argparse.ArgumentParser(
        prog="ministack-fault",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Make one of the seed's four failures happen, for real,"
                    " on the next attach or detach of a volume or server.",
        epilog=EPILOG)
    p.add_argument("--os-cloud", help="the clouds.yaml entry to use")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the four faults, one line each")
    arm = sub.add_parser(
        "arm", help="make NAME happen on the next attach or detach",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_faults_help())
    arm.add_argument("name", metavar="NAME", choices=catalog.NAMES,
                     help="one of: %s" % ", ".join(catalog.NAMES))
    target = arm.add_mutually_exclusive_group()
    target.add_argument("--volume", metavar="ID",
                        help="only for this volume")
    target.add_argument("--server", metavar="ID",
                        help="only for this server (its id or name)")
    arm.add_argument("--for", dest="seconds", type=int, metavar="SECONDS",
                     help="fire on every match for SECONDS (default: one "
                          "shot, expiring unused after %d s)"
                          % catalog.ONE_SHOT_LIFETIME)
    disarm = sub.add_parser("disarm", help="disarm every fault, or NAME's")
    disarm.add_argument("name", metavar="NAME", nargs="?",
                        choices=catalog.NAMES)
    status = sub.add_parser(
        "status", help="what is armed, where, and what fired lately")
    status.add_argument("--json", action="store_true")
    watch = sub.add_parser(
        "watch", help="after the attach or detach: wait for the fault and "
                      "its recovery, then print every ledger, the audit "
                      "and the recovery path that ran")
    watch.add_argument("--volume", metavar="ID")
    watch.add_argument("--server", metavar="ID",
                       help="its id or name")
    watch.add_argument("--timeout", type=int, default=600,
                       metavar="SECONDS")
    watch.add_argument("--config-dir", default="/etc/ministack",
                       help="where minicompute.conf and minicinder.conf "
                            "live (the ledgers are read as the audit does)")
    return p


def _target(armed):
    if armed.get("volume_id"):
        return "volume %s" % armed["volume_id"]
    if armed.get("server_id"):
        return "server %s" % armed["server_id"]
    return "any volume"


def _expiry(armed):
    if armed.get("one_shot"):
        return "one shot, %ss left" % armed["seconds_left"]
    return "every match, %ss left" % armed["seconds_left"]


def cmd_list(args, out):
    for fault in catalog.FAULTS:
        out("%-20s %s" % (fault.name, fault.summary))
    return 0


def cmd_arm(args, client, out):
    if args.seconds is not None and not \
            0 < args.seconds <= catalog.MAX_SECONDS:
        raise fault_client.CommandError(
            "--for takes 1 to %d seconds" % catalog.MAX_SECONDS, 2)
    server = client.server(args.server)["id"] if args.server else None
    armed = client.arm(args.name, volume_id=args.volume, server_id=server,
                       seconds=args.seconds)
    fault = catalog.get(armed["name"])
    out("armed %s (%s) for %s on compute host(s) %s: %s" % (
        armed["name"], armed["id"], _target(armed),
        ", ".join(armed["hosts"]), _expiry(armed)))
    out("next %s: %s" % (fault.operation, fault.step))
    out("then the seed's recovery path %d, \"%s\", runs: %s" % (
        fault.number, fault.path, fault.recovery))
    return 0


def cmd_disarm(args, client, out):
    done = client.disarm(args.name)
    ids = {}
    for armed in done["disarmed"]:
        ids.setdefault(armed["id"], armed)
    for armed in ids.values():
        out("disarmed %s (%s) for %s" % (armed["name"], armed["id"],
                                         _target(armed)))
    if not ids:
        out("nothing was armed")
    _unreachable(done["hosts"], out)
    return 0


def _unreachable(hosts, out):
    for host in hosts:
        if host["state"] != "ok":
            out("compute host %s %s" % (host["host"], host["state"]))


def _by(armed):
    by = armed.get("armed_by") or {}
    return by.get("user_name") or by.get("user_id")


def status_lines(state):
    """What ``status`` prints (and ``ministackctl status`` shows)."""
    lines = []
    for armed in state["faults"]:
        lines.append("ARMED %-20s for %s on %s: %s (by user %s)" % (
            armed["name"], _target(armed), ", ".join(armed["hosts"]),
            _expiry(armed), _by(armed)))
    if not state["faults"]:
        lines.append("no fault armed")
    for fired in state["fired"][-5:]:
        lines.append("fired %-20s on %s at %s: volume %s, server %s "
                     "(request %s)" % (fired["name"], fired["host"],
                                       fired["fired_at"], fired["volume_id"],
                                       fired["server_id"],
                                       fired["request_id"]))
    for host in state["hosts"]:
        if host["state"] != "ok":
            lines.append("compute host %s %s" % (host["host"],
                                                 host["state"]))
    return lines


def cmd_status(args, client, out):
    state = client.status()
    if args.json:
        out(json.dumps(state, indent=1, sort_keys=True))
        return 0
    for line in status_lines(state):
        out(line)
    return 0


def cmd_watch(args, client, out):
    settings = ledgers.load_settings(
        os.path.join(args.config_dir, "minicompute.conf"),
        os.path.join(args.config_dir, "minicinder.conf"))
    server = client.server(args.server)["id"] if args.server else None
    return fault_report.watch(client, settings, volume_id=args.volume,
                              server_id=server, timeout=args.timeout,
                              out=out)


COMMANDS = {"arm": cmd_arm, "disarm": cmd_disarm, "status": cmd_status,
            "watch": cmd_watch}


def main(argv=None, out=print, client_factory=None):
    args = _parser().parse_args(argv)
    if args.command == "list":
        return cmd_list(args, out)
    try:
        client = (client_factory or fault_client.Client.from_args)(
            args.os_cloud)
        return COMMANDS[args.command](args, client, out)
    except fault_client.CommandError as exc:
        print("ministack-fault: %s" % exc, file=sys.stderr)
        return exc.code
    except exception.MinistackException as exc:
        print("ministack-fault: %s" % exc.format_message(), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
