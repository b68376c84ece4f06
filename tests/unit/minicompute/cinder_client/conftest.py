"""The Cinder stand-in's fixtures for the tests of nova's Cinder client."""

from tests.support.cinder_server import api  # noqa: F401
from tests.support.cinder_server import cinder_server  # noqa: F401
from tests.support.cinder_server import ctxt  # noqa: F401
