"""Fixtures of the security tier: attacks on the deployed lab.

Every test here plays an attacker against the real daemons that
``devstack/stack.sh`` deployed (described by the tempest-style suite's
``/etc/ministack/tempest.conf``): the demo user (a member of project
``demo``) attacks what belongs to the admin project, or a local user
without privileges reads files. The REST clients are the tempest-style
suite's raw ones, so a test can send any body, header or microversion.

Every resource a test creates is registered for deletion right away
(``cleanup``, LIFO, run even when the test fails).

The fixtures are shared with the fuzz tier, so they live in
``tests/support/lab_sessions.py``; tests here may add their own below.
"""

from tests.support.lab_sessions import admin_compute  # noqa: F401
from tests.support.lab_sessions import admin_session  # noqa: F401
from tests.support.lab_sessions import admin_volumes  # noqa: F401
from tests.support.lab_sessions import cleanup  # noqa: F401
from tests.support.lab_sessions import conf  # noqa: F401
from tests.support.lab_sessions import demo_compute  # noqa: F401
from tests.support.lab_sessions import demo_session  # noqa: F401
from tests.support.lab_sessions import demo_volumes  # noqa: F401
