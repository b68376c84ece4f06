"""The whole nova side plus Cinder, for real, once per test module.

``stack`` starts minicinder, miniapi and minicompute as subprocesses with
generated configs (a private stack, tests/support/private_stack.py:
names of its own on the shared broker, VG, tgtd and libvirt): real
RabbitMQ, real SQLite files, real LVM/tgt volumes and real libvirt
guests booted from the registered guest image. ``guests`` boots two
servers once per module (TCG guests on 2 cores are precious); tests
attach and detach on them and must leave them as they found them.

Everything created is removed at the end even when a test fails: servers
(through the API, then any domain left over with virsh), volumes (their
attachments first), the volume type, and the daemons. The checks at the
end of the module assert nothing of ours is left (no domain, no LV, no
tgt target).
"""

import pytest

from ministack import context
from tests.support import journey
from tests.support import private_stack


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    private_stack.skip_unless_lab()
    ps = private_stack.PrivateStack(tmp_path_factory.mktemp("journey"), "fc")
    try:
        cinder = ps.start_cinder()
        endpoint = ps.endpoint(cinder)
        api = ps.start_api(cinder)
        ps.start_compute(endpoint)
        stack = {"cinder": journey.Cinder(cinder.url),
                 "nova": journey.Nova(api.url),
                 "probe": journey.Probe(ps.nova_db, ps.name_template),
                 "image": ps.image,
                 "images_root": str(ps.state / "images"),
                 "host": ps.host, "run": ps.run, "daemons": ps.started,
                 "transport_url": ps.common()["transport_url"],
                 "control_exchange": ps.common()["control_exchange"],
                 "nova_db": ps.nova_db, "endpoint": endpoint}
        yield stack
        stack["probe"].close()
    finally:
        ps.cleanup()


@pytest.fixture(scope="module")
def guests(stack):
    """Two ACTIVE servers on our compute host, deleted at module end."""
    with private_stack.servers(stack["nova"], stack["image"]["id"],
                               "fc%s" % stack["run"], 2) as ids:
        yield ids


@pytest.fixture
def volumes(stack):
    """Factory of volumes that are force-removed after the test."""
    with private_stack.volume_factory(stack["cinder"]) as make:
        yield make


@pytest.fixture(scope="module")
def multiattach_type(stack):
    """A volume type with multiattach="<is> True" (deleted at the end)."""
    cinder = stack["cinder"]
    type_id = cinder.create_type(journey.unique("multi"), multiattach=True)
    yield type_id
    cinder.delete_type(type_id)


@pytest.fixture
def admin_ctxt():
    return context.RequestContext(user_id="admin", project_id=journey.PROJECT,
                                  roles=["admin"])
