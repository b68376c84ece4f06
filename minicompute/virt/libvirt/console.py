"""The guest's serial console log (``os-getConsoleOutput``).

``config.domain_xml`` logs the serial console to a file through virtlogd
(``<serial><log file=.../>``); the path is read back from the domain's
XML, so a guest defined elsewhere is read where libvirt writes it. At
most the last ``MAX_CONSOLE_BYTES`` are returned, as nova's libvirt
driver does.
"""

import os
import xml.etree.ElementTree as ET

from minicompute import exception

MAX_CONSOLE_BYTES = 100 * 1024


def log_path(xml):
    """The file the serial console of domain ``xml`` is logged to."""
    root = ET.fromstring(xml)
    for node in root.findall("./devices/serial/log"):
        if node.get("file"):
            return node.get("file")
    for node in root.findall("./devices/console[@type='file']/source"):
        if node.get("path"):
            return node.get("path")
    return None


def last_bytes(path, count=MAX_CONSOLE_BYTES):
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        handle.seek(max(0, size - count))
        return handle.read()


def read_log(guest):
    """The last bytes of ``guest``'s console log.

    A log file not written yet (the guest never started) reads as empty,
    as upstream.

    :raises ConsoleNotAvailable: the domain logs no console to a file.
    """
    path = log_path(guest.get_xml_desc())
    if path is None:
        raise exception.ConsoleNotAvailable()
    if not os.path.exists(path):
        return b""
    return last_bytes(path)
