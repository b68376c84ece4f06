"""``python -m miniapi.cmd.manage --config-file F db_sync``.

Migrates the nova database to head and seeds the default flavors (what
``nova-manage db sync`` plus devstack's ``create_flavors`` do upstream).
Used by devstack's ``init_miniapi``; the daemon also runs it at start-up,
so it is idempotent.
"""

import sys

from oslo_config import cfg

from miniapi import conf as api_conf
from miniapi import db_setup
from ministack import config as ms_config
from ministack import db
from ministack import exception

COMMANDS = ("db_sync",)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    commands = [a for a in argv if a in COMMANDS]
    argv = [a for a in argv if a not in COMMANDS]
    if len(commands) != 1:
        print("usage: miniapi.cmd.manage --config-file FILE db_sync",
              file=sys.stderr)
        return 2
    conf = cfg.ConfigOpts()
    ms_config.register_common_opts(conf)
    api_conf.register_opts(conf)
    try:
        ms_config.parse_args(conf, argv, "miniapi")
        engine = db.make_engine(ms_config.database_url(conf, "nova"),
                                conf.database.connect_timeout)
        db_setup.sync(engine, seed_flavors=conf.api.seed_flavors)
    except exception.MinistackException as exc:
        print("miniapi-manage: %s" % exc.format_message(), file=sys.stderr)
        return 1
    print("nova database at head; flavors seeded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
