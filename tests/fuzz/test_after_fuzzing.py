"""After all the fuzzing: nothing of the run is left, the audit is clean.

This runs last (conftest orders it). It deletes every resource the run
made, including those fuzzed creates made, checks that none is left,
then runs ``ministack-audit --json``: no ledger (nova BDMs, Cinder
attachments, libvirt, tgt, LVM, loop devices) may disagree with another.
The whole lab is audited, as CI has it to itself; each divergence says
whether it was there before the run and whether it names the run's own
resources, for when another session shares the lab.
"""

from tests.fuzz import audit


def test_cleanup_then_audit_is_clean(lab):
    problems = lab.cleanup()
    assert not problems, "clean-up failed:\n  " + "\n  ".join(problems)
    left = lab.leftovers()
    assert not left, "the fuzz run left resources behind: %s" % left
    rc, report = audit.audit_until_clean(before=lab.audit_before)
    assert rc == 0, "ministack-audit after fuzzing (exit %s):\n  %s" % (
        rc, "\n  ".join(audit.explain_divergences(
            report["found"], lab.audit_before, lab.own_ids())))
