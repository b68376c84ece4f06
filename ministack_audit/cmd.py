"""``ministack-audit``: find (and repair) every orphan of the attach flow.

Usage::

    ministack-audit [--config-dir /etc/ministack]
                    [--compute-config FILE] [--cinder-config FILE]
                    [--fix] [--json] [--grace SECONDS] [--own-loops-only]
                    [--libvirt-timeout SECONDS]

It reads the six ledgers (``ledgers.py``; libvirt and the initiator
names on every compute host of the machine, ``hosts.py``), cross-checks
them (``ministack.ledgers.checks``) and prints one line per divergence
with its fix. With ``--fix`` the safe repairs are applied (``fixes.py``)
and the ledgers are read and checked again, so what is printed last is
what remains.

With several compute hosts (``minicompute@HOST.conf`` beside
minicompute.conf) each divergence about one host says which
(``[host compute2]``; ``"host"`` in ``--json``, which also lists the
hosts), and a host whose libvirtd does not answer is a divergence
(``libvirt_unreachable``) while the others are audited. With one host
that libvirtd not answering means the audit cannot run (exit 3).

Exit codes (a script can tell "clean" from "found something"):

* 0: no divergence;
* 1: divergences were found (with ``--fix``: all of them repaired);
* 2: with ``--fix``, divergences remain (not safe to repair, or the
  repair failed);
* 3: the audit could not run (a config file, database or daemon is
  unreachable); the reason is one line on stderr.
"""

import argparse
import json
import os
import sys
import traceback

from ministack import exception
from ministack.ledgers import checks
from ministack_audit import fixes
from ministack_audit import hosts
from ministack_audit import ledgers


def _parser():
    p = argparse.ArgumentParser(
        prog="ministack-audit",
        description="Cross-check nova BDMs, Cinder volumes/attachments, "
                    "libvirt domains, tgt targets, LVM volumes and loop "
                    "devices; report (and with --fix repair) divergences.")
    p.add_argument("--config-dir", default="/etc/ministack",
                   help="where minicompute.conf and minicinder.conf live")
    p.add_argument("--compute-config",
                   help="minicompute's config (nova DB, domain names)")
    p.add_argument("--cinder-config",
                   help="minicinder's config (cinder DB, VG, names, port)")
    p.add_argument("--fix", action="store_true",
                   help="apply the safe repairs, then check again")
    p.add_argument("--json", action="store_true",
                   help="machine-readable output on stdout")
    p.add_argument("--grace", type=float, default=0,
                   help="ignore records changed in the last SECONDS "
                        "(an attach in flight looks divergent for a moment)")
    p.add_argument("--own-loops-only", action="store_true",
                   help="do not report loop devices no LV owns (they cannot "
                        "be attributed when several Cinders share the VG)")
    p.add_argument("--libvirt-timeout", type=float,
                   default=hosts.CONNECT_TIMEOUT,
                   help="how long a host's libvirtd may take to answer "
                        "(default %(default)s s)")
    return p


def _config(args, name, given):
    if given:
        return given
    path = os.path.join(args.config_dir, name)
    return path if os.path.exists(path) else None


def audit(settings, fix=False, grace=0, all_loops=True):
    """Run the audit; ``(found, remaining)`` lists of Divergence."""
    snap = ledgers.read_all(settings, grace=grace, all_loops=all_loops)
    found = checks.run(snap)
    if not fix or not found:
        return found, found
    fixes.Fixer(settings, snap).apply(found)
    snap = ledgers.read_all(settings, grace=grace, all_loops=all_loops)
    return found, checks.run(snap)


def _print_text(found, remaining, fixed_mode, host_names=()):
    """One entry per divergence; with several hosts, each names its
    host."""
    several = len(host_names) > 1
    for div in found:
        state = ""
        if fixed_mode:
            state = " [fixed]" if div.fixed else (
                " [NOT FIXED: %s]" % div.fix_error if div.fix_error
                else " [not safe to fix automatically]")
        where = " [host %s]" % div.host if several and div.host else ""
        print("%s: %s%s\n    %s\n    fix: %s%s" % (
            div.kind, div.subject, where, div.detail, div.fix, state))
    on = " on hosts %s" % ", ".join(host_names) if several else ""
    if fixed_mode and found:
        print("%d divergence(s) found, %d remain%s" % (
            len(found), len(remaining), on))
    elif not found:
        print("no divergence%s" % on)


def _hosts_json(settings):
    return [{"name": h.name, "libvirt_uri": h.libvirt_uri,
             "initiator": hosts.read_initiator(h)} for h in settings.hosts]


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        settings = ledgers.load_settings(
            _config(args, "minicompute.conf", args.compute_config),
            _config(args, "minicinder.conf", args.cinder_config))
        settings.libvirt_timeout = args.libvirt_timeout
        found, remaining = audit(settings, fix=args.fix, grace=args.grace,
                                 all_loops=not args.own_loops_only)
    except exception.MinistackException as exc:
        print("ministack-audit: %s" % exc.format_message(), file=sys.stderr)
        return 3
    except Exception:   # a bug must not read as exit 1, "found something"
        traceback.print_exc()
        print("ministack-audit: internal error (traceback above)",
              file=sys.stderr)
        return 3
    if args.json:
        json.dump({"found": [d.to_dict() for d in found],
                   "remaining": [d.to_dict() for d in remaining],
                   "fixed": sum(1 for d in found if d.fixed),
                   "hosts": _hosts_json(settings)},
                  sys.stdout, indent=1, default=str)
        print()
    else:
        _print_text(found, remaining, args.fix,
                    [h.name for h in settings.hosts])
    if not found:
        return 0
    return 2 if args.fix and remaining else 1


if __name__ == "__main__":
    sys.exit(main())
