"""Whether an idle pooled connection's peer has spoken or hung up.

A request/response peer (a database server, an HTTP server between
requests) sends nothing to an idle client; readable bytes or an end of
file mean it closed the connection (restarted, timed it out) or said
something out of turn. Either way the connection is not to be reused.
Used by the database pools (``ministack.db``) before reusing a
connection.
"""

import select


def readable_now(fd):
    """True if ``fd`` has something to read (or has hung up), without
    waiting; True too for a closed descriptor (``fd`` < 0)."""
    if fd < 0:
        return True
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLPRI)
    return bool(poller.poll(0))
