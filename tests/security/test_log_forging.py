"""An attacker's request cannot write a line of its own into the lab's
logs: a path carrying an encoded newline (and NULs, terminal escapes)
is logged escaped, on the line of the request that carried it.
"""

import uuid

import pytest

from tests.support import waiting

LOGS = {"compute": "/opt/stack/logs/miniapi.log",
        "volume": "/opt/stack/logs/minicinder.log"}


@pytest.mark.parametrize("api", ["compute", "volume"])
def test_encoded_newline_in_a_path_forges_no_log_line(api, demo_compute,
                                                      demo_volumes):
    client = demo_compute if api == "compute" else demo_volumes
    marker = "forged-%s" % uuid.uuid4().hex
    path = ("/servers/" if api == "compute" else "/volumes/") + \
        "x%0A" + marker + "%00%1B%5B2J%0D"
    status, _, _ = client.request("GET", path)
    assert status in (400, 404)

    def marked_lines():
        with open(LOGS[api], "rb") as handle:
            return [line for line in handle.read().splitlines()
                    if marker.encode() in line]
    # The access line is written when the server has sent the answer,
    # which can be after the client has read it.
    lines = waiting.wait_for("the request's line in %s" % LOGS[api],
                             marked_lines, timeout=10, interval=0.1)
    for line in lines:
        assert not line.startswith(marker.encode())
        assert b"\\x0a" + marker.encode() in line
        assert b"\x00" not in line and b"\x1b" not in line
