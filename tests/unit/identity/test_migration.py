"""The identity tables: the migration chain creates exactly the models."""

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from ministack import db
from ministack import nova_db
from ministack.nova_db import identity_models
from ministack.nova_db import models


def test_migrations_match_models(tmp_path):
    engine = db.make_engine("sqlite:///%s" % (tmp_path / "nova.sqlite"))
    db.upgrade(engine, nova_db.MIGRATIONS_DIR)
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn),
                                models.Base.metadata)
    assert diff == []
    assert identity_models.User.__tablename__ in models.Base.metadata.tables
    engine.dispose()
