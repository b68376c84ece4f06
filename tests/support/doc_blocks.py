"""The fenced blocks of README.md and docs/*.md, as the doc-block tests
read them (docs/testing.md, "Every command in these docs is run by a
test").

* ``bash`` blocks hold commands a reader types;
* ``<!-- run-by: TEST_FILE -->`` just above a fence: TEST_FILE runs the
  block's commands itself (they restart or wipe the lab);
* ``<!-- run-in: TIER -->``: the block needs the lab that tier deploys
  (``multinode``: two compute hosts); that tier's doc-block test runs it;
* ``<!-- block: NAME -->`` names a block (its output can be checked).
"""

import os
import re

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FENCE = re.compile(r"^```(.*)$")
MARK = re.compile(r"^<!--\s*(run-by|run-in|block):\s*(\S+)\s*-->\s*$")
INFO_STRINGS = ("bash", "text", "ini", "python", "json", "yaml")


class Block:
    """One fenced block of a page."""

    def __init__(self, page, line, info, text, marks):
        self.page = page
        self.line = line            # the fence's line number, from 1
        self.info = info
        self.text = text
        self.name = marks.get("block")
        self.run_by = marks.get("run-by")
        self.run_in = marks.get("run-in")
        self.index = None           # set per page, bash blocks only

    @property
    def id(self):
        return "%s:%s" % (self.page, self.name or self.index)

    def commands(self):
        """The block's lines as typed, without blank and comment lines."""
        return [line.rstrip() for line in self.text.splitlines()
                if line.strip() and not line.lstrip().startswith("#")]


def pages():
    docs = os.path.join(REPO, "docs")
    return ["README.md"] + sorted(
        "docs/" + name for name in os.listdir(docs) if name.endswith(".md"))


def blocks(page):
    """The fenced blocks of ``page``, with the marks just above each."""
    with open(os.path.join(REPO, page)) as handle:
        lines = handle.read().splitlines()
    found, i = [], 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        marks, j = {}, i - 1
        while j >= 0 and MARK.match(lines[j]):
            kind, value = MARK.match(lines[j]).groups()
            marks.setdefault(kind, value)
            j -= 1
        end = i + 1
        while end < len(lines) and lines[end].rstrip() != "```":
            end += 1
        assert end < len(lines), "%s:%d: fence never closed" % (page, i + 1)
        found.append(Block(page, i + 1, fence.group(1).strip(),
                           "\n".join(lines[i + 1:end]) + "\n", marks))
        i = end + 1
    index = 0
    for block in found:
        if block.info == "bash":
            index += 1
            block.index = index
    return found


def bash_blocks():
    return [block for page in pages() for block in blocks(page)
            if block.info == "bash"]
