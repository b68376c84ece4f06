"""``python -m ministack.identity.manage --config-file F <command>``.

Commands (keystone-manage's roles, for devstack and operators):

``bootstrap``
    Create the shared Fernet key if missing (``fernet_setup``), migrate the
    nova database (the identity tables live there) and seed, idempotently:
    roles admin/member/reader/service; projects admin, demo and service;
    users ``admin`` (admin, member, reader on admin), ``demo`` (member,
    reader on demo) and the service user ``nova`` (admin and service on
    service, as devstack gives its service users).
    Passwords come from the environment, never the command line (argv is
    world-readable in /proc): ``MINISTACK_ADMIN_PASSWORD``,
    ``MINISTACK_DEMO_PASSWORD``, ``MINISTACK_SERVICE_PASSWORD``.

``app_credential_create --user U --project P --name N``
    Create an application credential delegating the user's roles on the
    project; prints ``id`` and ``secret`` (shown once, stored hashed).

Exit 0 on success, 1 with one line on stderr otherwise.
"""

import argparse
import os
import secrets
import sys

from oslo_config import cfg

from ministack import config as ms_config
from ministack import db
from ministack import exception
from ministack import nova_db
from ministack.identity import conf as identity_conf
from ministack.identity import passwords
from ministack.identity import store as store_mod
from ministack.identity import tokens

ROLES = ("admin", "member", "reader", "service")

# (user, password variable, project, roles)
ACCOUNTS = (
    ("admin", "MINISTACK_ADMIN_PASSWORD", "admin",
     ("admin", "member", "reader")),
    ("demo", "MINISTACK_DEMO_PASSWORD", "demo", ("member", "reader")),
    ("nova", "MINISTACK_SERVICE_PASSWORD", "service", ("admin", "service")),
)


def bootstrap(conf, store, environ=os.environ):
    """Seed the key, roles, projects, users and grants (idempotent).

    :raises ConfigError: a password variable is unset.
    """
    missing = [var for _u, var, _p, _r in ACCOUNTS if not environ.get(var)]
    if missing:
        raise exception.ConfigError(
            reason="set %s in the environment" % ", ".join(missing))
    created = tokens.create_key_file(conf.identity.signing_key_file)
    role_ids = {name: store.ensure_role(name) for name in ROLES}
    for user, var, project, roles in ACCOUNTS:
        project_id = store.ensure_project(project)
        user_id = store.ensure_user(
            user, passwords.hash_password(environ[var]),
            default_project_id=project_id)
        for role in roles:
            store.grant(user_id, project_id, role_ids[role])
    return created


def app_credential_create(store, user, project, name):
    """:returns: (id, secret). :raises NotFound: unknown user/project."""
    user_row = store.user(name=user, domain_id="default")
    project_row = store.project(name=project, domain_id="default")
    if user_row is None or project_row is None:
        raise exception.NotFound(
            message="no user %s or project %s" % (user, project))
    role_ids = [r for r, _n in store.roles(user_row.id, project_row.id)]
    secret = secrets.token_urlsafe(32)
    cred_id = store.create_application_credential(
        user_row.id, project_row.id, name, passwords.hash_password(secret),
        role_ids)
    return cred_id, secret


def _parser():
    parser = argparse.ArgumentParser(prog="ministack.identity.manage")
    parser.add_argument("--config-file", action="append", default=[])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("bootstrap")
    cred = sub.add_parser("app_credential_create")
    cred.add_argument("--user", required=True)
    cred.add_argument("--project", required=True)
    cred.add_argument("--name", required=True)
    return parser


def main(argv=None):
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    conf = cfg.ConfigOpts()
    ms_config.register_common_opts(conf)
    identity_conf.register_opts(conf)
    try:
        ms_config.parse_args(
            conf, [a for f in args.config_file for a in ("--config-file", f)],
            "miniapi")
        engine = db.make_engine(ms_config.database_url(conf, "nova"),
                                conf.database.connect_timeout)
        db.upgrade(engine, nova_db.MIGRATIONS_DIR)
        store = store_mod.IdentityStore(engine)
        if args.command == "bootstrap":
            created = bootstrap(conf, store)
            print("identity bootstrapped (key %s %s)" % (
                conf.identity.signing_key_file,
                "created" if created else "kept"))
        else:
            cred_id, secret = app_credential_create(
                store, args.user, args.project, args.name)
            print("id %s\nsecret %s" % (cred_id, secret))
    except exception.MinistackException as exc:
        print("ministack.identity.manage: %s" % exc.format_message(),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
