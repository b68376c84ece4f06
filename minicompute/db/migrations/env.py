from alembic import context

from ministack.db import run_alembic_env
from minicompute.db import models

run_alembic_env(context, models.Base.metadata)
