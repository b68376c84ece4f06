"""Log lines that a caller cannot forge.

Request paths, names and error messages come from API callers and end up
as arguments of log calls. A path such as ``/volumes/x%0A2026-12-01 ...
INFO ... "DELETE /v3/..." status: 202`` would otherwise print a second,
invented line into minicinder.log, and NULs or terminal escapes would turn
the log into "binary" for grep and into commands for a terminal.

:class:`ControlCharacterFilter` sits on every handler oslo.log sets up.
It escapes the control characters (newlines included) of a record's
*arguments*, the part callers influence, leaving the format string, which
is ours, and the traceback, which the formatter adds, as they are.
"""

import logging


def _escaped(char):
    code = ord(char)
    if code < 0x100:
        return "\\x%02x" % code
    return "\\u%04x" % code if code < 0x10000 else "\\U%08x" % code


def printable(text):
    """``text`` with every non-printable character escaped (``\\x0a``)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else _escaped(c)
                   for c in text)


def _safe(value):
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, BaseException):
        text = str(value)
        return text if text.isprintable() else printable(text)
    return value


class ControlCharacterFilter(logging.Filter):
    """Escape control characters in the arguments of every record."""

    def filter(self, record):
        args = record.args
        if isinstance(args, tuple):
            record.args = tuple(_safe(arg) for arg in args)
        elif isinstance(args, dict):
            record.args = {key: _safe(value) for key, value in args.items()}
        elif args is None and isinstance(record.msg, str) and \
                not record.msg.isprintable():
            # A message logged without arguments may be a caller's text
            # passed as is; keep only its line breaks (our own multi-line
            # messages), escape the rest.
            record.msg = "\n".join(printable(line)
                                   for line in record.msg.split("\n"))
        return True


def install(logger=None):
    """Put the filter on every handler of ``logger`` (the root logger)."""
    logger = logger or logging.getLogger()
    for handler in logger.handlers:
        if not any(isinstance(f, ControlCharacterFilter)
                   for f in handler.filters):
            handler.addFilter(ControlCharacterFilter())
