"""The docs' command blocks that need two compute hosts (``<!-- run-in:
multinode -->``), run as a reader types them on the two-host lab.

The quickstart tier runs every other block (tests/quickstart/
test_doc_blocks.py has the convention); these wait for the lab
``COMPUTE_HOSTS=2 ./lab.sh`` deploys.
"""

import pytest

from tests.support import login_shell
from tests.support.doc_blocks import REPO
from tests.support.doc_blocks import bash_blocks

BLOCKS = [block for block in bash_blocks() if block.run_in == "multinode"]

# What a named block's output must show, beyond exiting 0.
EXPECTED = {
    ("docs/multinode.md", "two-hosts"): ("compute2", "10.42.0.2",
                                         "minicompute@compute2", "vda"),
    ("docs/multinode.md", "pinned"): ("compute2",),
    ("docs/journey.md", "live-migrate"): ("compute2", "completed",
                                          "live-migration"),
}


def test_the_docs_have_blocks_for_this_tier():
    named = {(block.page, block.name) for block in BLOCKS}
    assert set(EXPECTED) <= named, set(EXPECTED) - named


@pytest.mark.parametrize("block", [pytest.param(b, id=b.id)
                                   for b in BLOCKS])
def test_block_runs_as_typed_on_two_hosts(two_host_lab, block):
    done = login_shell.login_shell(login_shell.script(block.text, REPO),
                                   timeout=900)
    output = done.stdout + done.stderr
    assert done.returncode == 0, "%s (line %d) exited %d:\n%s" % (
        block.id, block.line, done.returncode, output[-3000:])
    for expected in EXPECTED.get((block.page, block.name), ()):
        assert expected in output, "%s: no %r in\n%s" % (
            block.id, expected, output[-3000:])
