"""The Cinder stand-in's fixtures for the tests of nova's Cinder client."""

from tests.support.cinder_server import (
    api,  # noqa: F401
    cinder_server,  # noqa: F401
    ctxt,  # noqa: F401
)
