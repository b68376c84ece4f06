"""``python -m minicinder.cmd.manage --config-file F db_sync``.

Runs the alembic migrations to head without starting the daemon (devstack
calls it from ``init_minicinder``). Prints one line and exits 1 on error.
"""

import sys

from oslo_config import cfg

from minicinder import conf as cinder_conf
from minicinder.db import session as db_session
from ministack import config
from ministack import exception


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[-1] != "db_sync":
        print("usage: python -m minicinder.cmd.manage --config-file F "
              "db_sync", file=sys.stderr)
        return 2
    conf = cfg.ConfigOpts()
    config.register_common_opts(conf)
    cinder_conf.register_opts(conf)
    try:
        config.parse_args(conf, argv[:-1], "minicinder")
        database = db_session.Database(
            config.database_url(conf, "cinder"),
            conf.database.connect_timeout)
        database.upgrade()
    except exception.MinistackException as exc:
        print("minicinder-manage: %s" % exc.format_message(),
              file=sys.stderr)
        return 1
    print("minicinder database is at the latest revision")
    return 0


if __name__ == "__main__":
    sys.exit(main())
