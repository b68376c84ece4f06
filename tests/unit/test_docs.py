"""README.md is a front page, docs/ holds the rest, and no link is dead.

README stays under 150 lines and links every page of docs/; every
relative link of README.md and docs/*.md (``[text](path)``,
``![alt](image)``, ``path#anchor``, ``#anchor``) names a file that exists
and, for an anchor, a heading of that page (GitHub's anchor of it).
No lab needed.
"""

import os
import re

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DOCS = os.path.join(REPO, "docs")
MAX_README_LINES = 150
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCED = re.compile(r"^```.*?^```[ \t]*$", re.M | re.S)
INLINE_CODE = re.compile(r"`[^`\n]*`")


def _pages():
    return ["README.md"] + sorted(
        os.path.join("docs", name) for name in os.listdir(DOCS)
        if name.endswith(".md"))


def _read(page):
    with open(os.path.join(REPO, page)) as handle:
        return handle.read()


def _prose(text):
    """The page without its code: links inside code are examples."""
    return INLINE_CODE.sub("", FENCED.sub("", text))


def _links(page):
    return LINK.findall(_prose(_read(page)))


def _relative(target):
    return not re.match(r"^[a-z][a-z0-9+.-]*:", target)


def anchors(text):
    """GitHub's anchors of a page's headings: lower case, punctuation
    dropped (backticks, colons, quotes...), spaces as hyphens; a repeated
    heading gets -1, -2..."""
    seen, found = {}, set()
    for line in FENCED.sub("", text).splitlines():
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower())
        slug = slug.replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else "%s-%d" % (slug, count))
    return found


def test_anchor_rule_matches_github():
    text = ("# Settings: `devstack/local.conf`\n"
            '## The reservation alone: "stuck reserved"\n'
            "## Passwords, files and addresses\n## Speed\n## Speed\n")
    assert anchors(text) == {"settings-devstacklocalconf",
                             "the-reservation-alone-stuck-reserved",
                             "passwords-files-and-addresses", "speed",
                             "speed-1"}


def test_readme_is_a_front_page():
    lines = _read("README.md").splitlines()
    assert len(lines) <= MAX_README_LINES, (
        "README.md has %d lines; the rest belongs in docs/" % len(lines))


def test_readme_links_every_docs_page_and_each_exists():
    linked = {os.path.normpath(target.split("#")[0])
              for target in _links("README.md") if _relative(target)}
    pages = {os.path.join("docs", name) for name in os.listdir(DOCS)
             if name.endswith(".md")}
    assert pages, "no docs/ pages"
    assert pages <= linked, "docs/ pages README does not link: %s" % sorted(
        pages - linked)
    for target in linked:
        if target.startswith("docs" + os.sep) and target.endswith(".md"):
            assert os.path.isfile(os.path.join(REPO, target)), target


@pytest.mark.parametrize("page", _pages())
def test_every_relative_link_resolves(page):
    here = os.path.dirname(os.path.join(REPO, page))
    dead = []
    for target in _links(page):
        if not _relative(target):
            continue
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(here, path)) if path else \
            os.path.join(REPO, page)
        if not os.path.exists(full):
            dead.append(target)
        elif anchor and full.endswith(".md"):
            with open(full) as handle:
                if anchor not in anchors(handle.read()):
                    dead.append(target)
    assert not dead, "%s: dead links %s" % (page, dead)
