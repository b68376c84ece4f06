"""``GET /volumes/{id}``'s read survives a restart of the database server.

Its connections (``Database.read_connection``) are not pinged on
checkout, to spare a round trip per GET (issue 16); instead
``Database.read_rows`` runs a read that met a dropped connection again,
once. Here the private server of ``tests/support/database_servers.py`` is
restarted under a pool holding a connection, and the next read must
simply work, on MariaDB through both drivers (PyMySQL, and mysqlclient,
the lab's) and on PostgreSQL.
"""

import uuid

import pytest

from minicinder import exception as cinder_exception
from minicinder.db import api as cinder_api
from minicinder.db import session as cinder_session
from minicinder.db import types as cinder_types
from minicinder.db import volume_reads as cinder_reads
from ministack import context


def _volume(database):
    """A volume with metadata in a fresh project: (context, its id)."""
    project = "p-" + uuid.uuid4().hex[:8]
    ctx = context.RequestContext(user_id="u", project_id=project)
    volume_id = str(uuid.uuid4())
    with database.write() as session:
        vtype = cinder_types.volume_type_create(
            session, {"id": str(uuid.uuid4()),
                      "name": "lvm-" + uuid.uuid4().hex[:6]}, {})
        cinder_api.volume_create(session, {
            "id": volume_id, "project_id": project, "user_id": "u",
            "size": 1, "status": "available", "attach_status": "detached",
            "display_name": "v1", "volume_type_id": vtype.id},
            metadata={"k": "v"})
    return ctx, volume_id


@pytest.mark.parametrize("kind,driver", [("mariadb", "mysql+pymysql"),
                                         ("mariadb", "mysql+mysqldb"),
                                         ("postgresql", None)])
def test_show_read_rides_out_a_server_restart(kind, driver, request):
    urls = request.getfixturevalue(kind + "_urls")
    url = urls["cinder"]
    if driver:
        pytest.importorskip(driver.split("+")[1].replace("mysqldb",
                                                         "MySQLdb"))
        url = driver + url[url.index("://"):]
    database = cinder_session.Database(url)
    request.addfinalizer(database.dispose)
    database.upgrade()
    ctx, volume_id = _volume(database)
    record = database.read_rows(cinder_reads.volume_get, ctx, volume_id)
    assert [(m.key, m.value) for m in record.volume_metadata] == [("k", "v")]

    urls["restart"]()     # the pooled connection is now a dead socket

    record = database.read_rows(cinder_reads.volume_get, ctx, volume_id)
    assert (record.id, record.status) == (volume_id, "available")
    with pytest.raises(cinder_exception.VolumeNotFound):
        database.read_rows(cinder_reads.volume_get, ctx, str(uuid.uuid4()))
