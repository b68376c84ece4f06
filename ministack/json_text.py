"""The strings of a client's decoded JSON body.

* :func:`bad_text` finds the strings that no database or log can take
  (lone surrogates, NUL characters), so the API answers 400 instead of
  failing on write;
* :func:`shown` quotes a client's value in a fault message.

Shared by the compute and volume APIs' request validation.
"""

import json


def bad_text(data, path=()):
    """The first string of decoded JSON ``data`` that cannot be stored.

    JSON's ``\\ud800`` escape decodes to a lone surrogate, which no UTF-8
    encoder (database driver, log handler) accepts; PostgreSQL refuses the
    NUL character in text. Keys count as strings too.

    :returns: None, or ``(path, value, reason)`` with ``path`` the list of
        keys and indexes leading to the string.
    """
    if isinstance(data, str):
        if "\x00" in data:
            return list(path), data, "it contains a NUL character"
        try:
            data.encode("utf-8")
        except UnicodeEncodeError:
            return list(path), data, ("it is not valid Unicode text "
                                      "(it contains a lone surrogate)")
        return None
    if isinstance(data, dict):
        for key, value in data.items():
            found = bad_text(key, path + (key,)) or \
                bad_text(value, path + (key,))
            if found:
                return found
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found = bad_text(value, path + (index,))
            if found:
                return found
    return None


def shown(value, limit=64):
    """A client's value for a message: JSON, ASCII-escaped (a lone
    surrogate survives it), shortened when long."""
    text = json.dumps(value)
    return text if len(text) <= limit else text[:limit] + "..."
