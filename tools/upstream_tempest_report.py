"""Summarise a tempest run's subunit v2 stream (run by the tempest venv).

Usage: upstream_tempest_report.py STREAM

Prints one line per test that did not pass (failures with the end of
their traceback, skips with tempest's reason), then the counts, and
the skip reasons grouped. Exit status 0 when nothing failed and at least
one test passed, 1 otherwise. A setUpClass error is reported by subunit
as a failed pseudo-test named ``setUpClass (module.Class)``: it counts as
a failure, as tempest counts it.
"""

import collections
import sys

import subunit
import testtools

PASSED = ("success", "xfail")
FAILED = ("fail", "uxsuccess")


def _text(details, name):
    content = details.get(name)
    if content is None:
        return ""
    return b"".join(content.iter_bytes()).decode("utf-8", "replace")


def _short_id(test_id):
    return test_id.split("[", 1)[0]


def read(path):
    """``{test_id: (status, reason)}`` from a subunit v2 file."""
    results = {}

    def on_test(test):
        status = test["status"]
        if status in ("exists", "inprogress"):
            return
        details = test["details"]
        if status == "skip":
            reason = _text(details, "reason")
        elif status in FAILED:
            lines = _text(details, "traceback").strip().splitlines()
            reason = "\n".join(lines[-6:])
        else:
            reason = ""
        results[test["id"]] = (status, reason)

    with open(path, "rb") as stream:
        case = subunit.ByteStreamToStreamResult(stream,
                                                non_subunit_name="stdout")
        result = testtools.StreamToDict(on_test)
        result.startTestRun()
        try:
            case.run(result)
        finally:
            result.stopTestRun()
    return results


def main(path):
    results = read(path)
    counts = collections.Counter()
    skips = collections.defaultdict(list)
    for test_id, (status, reason) in sorted(results.items()):
        if status in PASSED:
            counts["passed"] += 1
        elif status == "skip":
            counts["skipped"] += 1
            skips[reason.strip() or "(no reason given)"].append(test_id)
        else:
            counts["failed"] += 1
            print("FAILED %s" % _short_id(test_id))
            for line in reason.splitlines():
                print("    " + line)
    print()
    print("upstream tempest: %d passed, %d failed, %d skipped" % (
        counts["passed"], counts["failed"], counts["skipped"]))
    if skips:
        print("skips, by reason:")
        for reason, tests in sorted(skips.items(),
                                    key=lambda item: -len(item[1])):
            print("  %3d  %s" % (len(tests), reason))
            for test_id in tests:
                print("         %s" % _short_id(test_id))
    return 0 if counts["failed"] == 0 and counts["passed"] > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
