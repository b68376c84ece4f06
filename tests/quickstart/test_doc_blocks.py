"""Every command block of README.md and docs/*.md, as a reader types it.

The convention (docs/testing.md, "Every command in these docs is run by
a test"):

* A fenced block with info string ``bash`` holds commands a reader
  types. Each one runs here verbatim, in a fresh root login shell
  (``tests/support/login_shell.py``), with errexit and pipefail, from
  the repository's top directory, and must exit 0. Each block stands
  alone and cleans up what it creates.
* ``<!-- run-by: TEST_FILE -->`` on the line just before the fence: the
  block restarts or wipes the lab (``./lab.sh``, ``bash
  devstack/unstack.sh``) or is the test command itself
  (``./run_tests.sh``). It is not run here; TEST_FILE must exist and
  contain each of its command lines verbatim, so that test runs what the
  page says. The ``./run_tests.sh`` lines are run-by this file: it
  checks below that ``.ci/run`` runs ``./run_tests.sh`` and that each
  tier the docs name is one run_tests.sh accepts.
* ``<!-- run-in: TIER -->``: the block needs the lab another tier
  deploys (``multinode``: two compute hosts); that tier's doc-block test
  runs it (tests/multinode/test_doc_blocks.py), this one checks the tier
  exists.
* ``<!-- block: NAME -->`` names a block, so its output can be checked
  too (``EXPECTED``).
* ``text`` and ``ini`` blocks are output and configs: never run.

The tests are parametrized by page and block (``docs/journey.md:
by-hand-journey``, ``README.md:2``), so a failure names both.
"""

import os
import re
import shutil

import pytest

from tests.support import login_shell
from tests.support.doc_blocks import INFO_STRINGS
from tests.support.doc_blocks import REPO
from tests.support.doc_blocks import bash_blocks
from tests.support.doc_blocks import blocks
from tests.support.doc_blocks import pages

HERE = os.path.relpath(os.path.abspath(__file__), REPO)
BLOCK_TIMEOUT = 900

# ``./run_tests.sh`` as README and docs/testing.md show it, one line per
# command: this file is their run-by test (test_run_tests_sh_lines).
RUN_TESTS_LINES = (
    "./run_tests.sh",
    "./run_tests.sh lint",
    "./run_tests.sh unit",
    "./run_tests.sh quickstart",
    "./run_tests.sh functional",
    "./run_tests.sh tempest",
    "./run_tests.sh security",
    "./run_tests.sh fuzz",
    "./run_tests.sh multinode",
    "./run_tests.sh upstream-tempest",
)

# What a named block's output must show, beyond exiting 0.
EXPECTED = {
    # the BDM row, through mysql; lsblk in the guest, attached
    ("docs/journey.md", "by-hand-journey"): ("/dev/vdb\t", "vdb"),
    ("docs/journey.md", "stuck-reserved"): ("reserved",),
    ("docs/operations.md", "triage"): ("no divergence",),
    ("docs/operations.md", "ministackctl"): ("minicompute", "vda"),
    ("docs/tracing.md", "traced-attach"): ("reserve_block_device_name",
                                           "virDomainAttachDeviceFlags",
                                           "'name': 'total'", "attach "),
    ("docs/security.md", "file-modes"): (
        "600 root:root /etc/ministack/passwords",),
    ("README.md", "journey"): ("volume in-use", "journey complete in "),
    # each fault's recovery path, named and found clean by watch
    ("docs/learn-by-breaking-it.md", "before"): (
        "driver-attach", "FAULTS (ministack-fault status)"),
    ("docs/learn-by-breaking-it.md", "window"): (
        "every match, 120s left", "disarmed attachment-complete",
        "no fault armed"),
    ("docs/learn-by-breaking-it.md", "not-an-admin"): (
        "refused (HTTP 403)",),
    ("docs/performance.md", "bench-quick"): (
        "attach ratio", "left of this run's own objects after clean-up: "
        "nothing"),
}


def _params(selected):
    return [pytest.param(block, id=block.id) for block in selected]


RUNNABLE = [block for block in bash_blocks()
            if not block.run_by and not block.run_in]
# Blocks that need another tier's lab (run-in: TIER), run by that tier.
RUN_IN = [block for block in bash_blocks() if block.run_in]
RUN_IN_TESTS = {"multinode": "tests/multinode/test_doc_blocks.py",
                # learn-by-breaking-it.md's four faults: run once, as
                # typed, then checked ledger by ledger
                "functional": "tests/functional/faults/test_on_the_lab.py"}
RUN_BY = [block for block in bash_blocks() if block.run_by]


def test_every_fence_says_what_it_holds():
    """A bare ``` would hide commands from this test: every block names
    its kind, and names are unique on their page."""
    for page in pages():
        names = set()
        for block in blocks(page):
            assert block.info in INFO_STRINGS, (
                "%s:%d: fence info %r (one of %s)" % (
                    page, block.line, block.info, ", ".join(INFO_STRINGS)))
            if block.name:
                assert block.name not in names, (page, block.name)
                names.add(block.name)
    named = {(block.page, block.name) for block in bash_blocks()}
    assert set(EXPECTED) <= named, set(EXPECTED) - named
    assert len(RUNNABLE) >= 8 and len(RUN_BY) >= 4


@pytest.mark.parametrize("block", _params(RUN_IN))
def test_run_in_names_a_tier_that_runs_its_blocks(block):
    assert block.run_in in RUN_IN_TESTS, "%s: no tier %r runs blocks" % (
        block.id, block.run_in)
    assert block.run_in in _run_tests_tiers(), block.run_in
    assert os.path.isfile(os.path.join(REPO, RUN_IN_TESTS[block.run_in]))


@pytest.mark.parametrize("block", _params(RUN_BY))
def test_run_by_test_runs_the_block_verbatim(block):
    path = os.path.join(REPO, block.run_by)
    assert os.path.isfile(path), "%s names %s, which does not exist" % (
        block.id, block.run_by)
    with open(path) as handle:
        test_source = handle.read()
    missing = [line for line in block.commands() if line not in test_source]
    assert not missing, "%s: %s does not run %s" % (block.id, block.run_by,
                                                    missing)


def test_run_tests_sh_lines():
    """This file is the run-by test of the ``./run_tests.sh`` lines: CI
    runs exactly ``./run_tests.sh``, and each tier a page names (in a
    block or in prose) is one run_tests.sh accepts."""
    with open(os.path.join(REPO, ".ci", "run")) as handle:
        ci = [line.strip() for line in handle
              if line.strip() and not line.startswith("#")]
    assert ci[-1] == "exec ./run_tests.sh", ci
    tiers = _run_tests_tiers()
    assert {"unit", "functional", "quickstart"} <= tiers, tiers
    for line in RUN_TESTS_LINES:
        assert line.split()[0] == "./run_tests.sh"
        assert set(line.split()[1:]) <= tiers, line
    named = set()
    for page in pages():
        with open(os.path.join(REPO, page)) as handle:
            named |= set(re.findall(r"\./run_tests\.sh ([a-z][a-z-]*)",
                                    handle.read()))
    assert named and named <= tiers, named - tiers
    documented = {line for block in RUN_BY if block.run_by == HERE
                  for line in block.commands()}
    assert documented and documented <= set(RUN_TESTS_LINES), (
        documented - set(RUN_TESTS_LINES))


def _run_tests_tiers():
    """The tiers run_tests.sh's case statement runs (``unit)`` ...)."""
    with open(os.path.join(REPO, "run_tests.sh")) as handle:
        source = handle.read()
    loop = source.split('for tier in "${tiers[@]}"; do\n    case $tier in\n')
    assert len(loop) == 2, "run_tests.sh's tier loop not found"
    arms = loop[1].split("\n    esac", 1)[0]
    return set(re.findall(r"^ +([a-z][a-z-]*)\)", arms, re.M))


@pytest.fixture(scope="module")
def lab():
    if os.geteuid() != 0:
        pytest.skip("the docs' commands run as root")
    if not os.path.exists("/etc/openstack/clouds.yaml") or \
            shutil.which("openstack", path="/usr/local/bin") is None:
        pytest.skip("no deployed lab (./lab.sh)")


def _demo_volumes():
    """{id: name} of the demo project's volumes."""
    done = login_shell.login_shell(
        "openstack --os-cloud ministack volume list -f value -c ID -c Name")
    assert done.returncode == 0, done.stderr[-1000:]
    return dict(line.split(" ", 1) for line in done.stdout.splitlines()
                if " " in line)


def _undo_leftovers(block, before):
    """What a block that failed half-way left in the demo project (the
    volume it made, by the name it gave it, attached or not): detached and
    deleted, so the next block and the next tier start clean. The failure
    is still reported."""
    names = set(re.findall(r"volume create --size \d+ (\S+)", block.text))
    for volume, name in sorted(_demo_volumes().items()):
        if volume in before or name not in names:
            continue
        login_shell.login_shell(login_shell.script(
            "source devstack/openrc demo demo\n"
            "openstack server remove volume demo %(v)s || true\n"
            "for i in $(seq 120); do [ \"$(openstack volume show %(v)s -f "
            "value -c status)\" = available ] && break; sleep 1; done\n"
            "openstack volume delete %(v)s\n" % {"v": volume}, REPO),
            timeout=300)


@pytest.mark.parametrize("block", _params(RUNNABLE))
def test_block_runs_as_typed(lab, block):
    before, done = _demo_volumes(), None
    try:
        done = login_shell.login_shell(login_shell.script(block.text, REPO),
                                       timeout=BLOCK_TIMEOUT)
    finally:
        if done is None or done.returncode != 0:
            _undo_leftovers(block, before)
    output = done.stdout + done.stderr
    assert done.returncode == 0, "%s (line %d) exited %d:\n%s\n%s" % (
        block.id, block.line, done.returncode, done.stdout[-3000:],
        done.stderr[-2000:])
    for expected in EXPECTED.get((block.page, block.name), ()):
        assert expected in output, "%s: no %r in\n%s" % (
            block.id, expected, output[-3000:])
