#!/usr/bin/env python3
"""Lint: production modules stay small (at most 400 lines).

Each service keeps nova's role seams at small scale, and a module that
grows past about 400 lines has usually grown a second concept (style
anchors §9, lesson 1): split it by concept, as
``minicompute/db/`` is split into instances, block device mappings,
actions, services and flavors behind the ``api.py`` facade, rather than
let it become nova's 12k-line ``manager.py``. Tests and tools are not
production code and are not checked.

A module's size is its number of lines, as ``wc -l`` counts them (a
last line without a newline counts too).

Usage: ``tools/lint_module_size.py [PATH...]`` (default: the production
packages of this repository). Exit 1 when a module is too long, one
``path: N lines (at most 400)`` per module, longest first.
"""

import os
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_PATHS = ("ministack", "miniapi", "minicompute", "minicinder",
                 "ministack_audit", "ministack_course")
MAX_LINES = 400


def count_lines(path):
    """How many lines the file at ``path`` has."""
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def _python_files(paths):
    for path in paths:
        if os.path.isfile(path):
            yield path
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs
                             if d != "__pycache__" and not d.startswith("."))
            for name in sorted(files):
                if name.endswith(".py"):
                    yield os.path.join(root, name)


def _shown(path):
    """``path`` relative to the repository when it is in it."""
    relative = os.path.relpath(os.path.abspath(path), TOP)
    if relative.startswith(os.pardir + os.sep) or relative == os.pardir:
        return path
    return relative.replace(os.sep, "/")


def check(paths, limit=MAX_LINES):
    """``(path, lines)`` of every module under ``paths`` longer than
    ``limit``, longest first."""
    found = [(_shown(path), lines) for path, lines in
             ((path, count_lines(path)) for path in _python_files(paths))
             if lines > limit]
    return sorted(found, key=lambda item: (-item[1], item[0]))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    paths = argv or [os.path.join(TOP, p) for p in DEFAULT_PATHS]
    found = check(paths)
    for path, lines in found:
        print("%s: %d lines (at most %d)" % (path, lines, MAX_LINES))
    if found:
        print("%d module(s) over %d lines: split each by concept"
              % (len(found), MAX_LINES), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
