"""docs/journey.md's "Follow the journey" table (the one README used to
hold) and its extend's table name functions that exist."""

import ast
import os
import re

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PAGE = os.path.join(REPO, "docs", "journey.md")
CELL = re.compile(r"`([a-z_/]+\.py):([A-Za-z_.]+)`")


def _section(text, title):
    return text.split("\n## %s\n" % title, 1)[1].split("\n## ", 1)[0]


def _map():
    """The attach's and detach's table, and the extend's."""
    with open(PAGE) as handle:
        text = handle.read()
    return _section(text, "Follow the journey") + _section(
        text, "Extend an attached volume")


def _defined(path):
    with open(os.path.join(REPO, path)) as handle:
        tree = ast.parse(handle.read())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
            for child in getattr(node, "body", []):
                if isinstance(child, ast.FunctionDef):
                    names.add("%s.%s" % (node.name, child.name))
    return names


def test_every_step_names_an_existing_function():
    cells = CELL.findall(_map())
    assert len(cells) > 20
    missing = [(path, name) for path, name in cells
               if name not in _defined(path)]
    assert not missing
