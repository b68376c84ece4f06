"""``ministack-audit`` around the fuzz run: its report before the run, and
after the clean-up until the lab is clean, each divergence explained
(there before the run? one of the run's resources?)."""

import json
import os
import shutil
import subprocess
import sys

from tests.support import waiting

AUDIT_TIMEOUT = 60


def audit_binary():
    here = os.path.join(os.path.dirname(sys.executable), "ministack-audit")
    return here if os.path.exists(here) else shutil.which("ministack-audit")


def audit_once():
    """``ministack-audit --json``: (exit code, report or None)."""
    proc = subprocess.run([audit_binary(), "--json"], capture_output=True,
                          text=True, timeout=300)
    try:
        return proc.returncode, json.loads(proc.stdout)
    except ValueError:
        return proc.returncode, None


def explain_divergences(found, before, own_ids):
    """One line per divergence, saying whether it was there before the
    run and whether it names one of the run's resources."""
    seen = {(d["kind"], d["subject"]) for d in (before or {}).get(
        "found", [])}
    lines = []
    for div in found:
        text = json.dumps(div, default=str)
        tags = []
        if (div["kind"], div["subject"]) in seen:
            tags.append("already there before the run")
        if any(i and i in text for i in own_ids):
            tags.append("names a resource of this run")
        lines.append("%s: %s (%s)%s" % (
            div["kind"], div["subject"], div.get("detail"),
            " [%s]" % ", ".join(tags) if tags else ""))
    return lines


def audit_until_clean(timeout=AUDIT_TIMEOUT, before=None):
    """Run ``ministack-audit --json`` until it reports nothing (what was
    just deleted may take a moment to leave every ledger).

    Divergences that were all there before the run (``before``, an
    earlier report) will not leave by waiting: no second look then.

    :returns: (exit code, report) of the last run.
    :raises AssertionError: the audit cannot run (exit 3) until the
        timeout, or prints no report.
    """
    old = {(d["kind"], d["subject"]) for d in (before or {}).get("found",
                                                                 [])}

    def run():
        proc = subprocess.run([audit_binary(), "--json"],
                              capture_output=True, text=True, timeout=300)
        if proc.returncode == 3:
            # It reads six ledgers one after the other; a guest another
            # session deletes in between can make a read fail. Again.
            return 3, None, proc.stderr
        try:
            return proc.returncode, json.loads(proc.stdout), proc.stderr
        except ValueError:
            raise AssertionError("ministack-audit exited %s without a "
                                 "report: %s" % (proc.returncode,
                                                 proc.stderr[-2000:]))

    def settled(result):
        rc, report, _ = result
        return rc != 3 and (rc == 0 or all(
            (d["kind"], d["subject"]) in old for d in report["found"]))

    try:
        rc, report, _ = waiting.wait_for(
            "ministack-audit to find nothing new", run, settled,
            timeout=timeout, interval=3)
    except waiting.WaitTimeout as timed_out:
        rc, report, stderr = timed_out.value
        if rc == 3:
            raise AssertionError("ministack-audit could not run: %s"
                                 % stderr[-2000:])
    return rc, report
