"""The ``os-getConsoleOutput`` server action (nova's console_output.py).

The host reads the guest's serial console log (virtlogd writes it next
to the instance's disk) and answers over an RPC call; ``length`` keeps
the last lines only (-1 or absent: the whole log, at most 100 KiB).
Control characters that JSON cannot carry readably are removed, as
upstream does.
"""

import re

from miniapi.api import servers
from miniapi.api import validation
from miniapi.api.schemas import servers as schemas
from ministack import exception as ms_exception
from ministack import json_text

# Control characters but tab and newline (carriage returns go too), as
# upstream's expression.
_REMOVE = re.compile("[\x00-\x08\x0B-\x1F]")


def _length(value):
    """None for the whole log, else a line count >= 0 (400 otherwise)."""
    if value is None:
        return None
    try:
        length = int(value)
    except ValueError:   # more digits than int() takes
        length = None
    if length is None or length < -1:
        raise ms_exception.Invalid(
            message="Invalid input for field/attribute length. Value: %s. "
                    "Expected an integer of at least -1."
                    % json_text.shown(value))
    return None if length == -1 else length


@servers.action_handler("os-getConsoleOutput")
def get_console_output(ctxt, server_id, body):
    """200 ``{"output": "..."}``."""
    validation.validate(body, schemas.get_console_output)
    length = _length(body["os-getConsoleOutput"].get("length"))
    instance = servers.get_instance(ctxt, server_id)
    output = servers.compute_api().get_console_output(
        ctxt, instance, tail_length=length)
    return {"output": _REMOVE.sub("", output)}
