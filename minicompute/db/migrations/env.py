from alembic import context

from minicompute.db import models
from ministack.db import run_alembic_env

run_alembic_env(context, models.Base.metadata)
