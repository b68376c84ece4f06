"""The rows of a hop table as ``ministack-trace show`` (and the journey)
prints it, for the tests that compare the two."""

import re

KINDS = "REST|CALL|CAST|LIBRARY|COMMAND|DB"


def rows(table, phase=r"\S+"):
    """(phase, service, kind, name) of each row of ``table``.

    :param phase: a regex of the phase cell (a journey whose phase names
        hold spaces, such as ``connect + spawn``, names them).
    """
    found = []
    for line in table.splitlines():
        match = re.match(r"^\s*[\d.]+\s+[\d.]+\s+(?:[\d.]+\s+)?(%s)\s+(\S+)\s+"
                         r"\S+\s+(%s)\s+(.+?)(?:\s+\d{3})?\s*$"
                         % (phase, KINDS), line)
        if match:
            found.append(match.groups())
    return found
