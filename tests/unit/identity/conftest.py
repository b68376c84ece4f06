"""Fixtures: the identity app in-process on an in-memory nova database.

``seeded`` bootstraps the admin, demo and nova accounts exactly as
devstack does (``ministack.identity.manage.bootstrap``), with a key file
in the test's temp dir.
"""

import pytest
from oslo_config import cfg

from ministack import config as ms_config
from ministack import db
from ministack import nova_db
from ministack.identity import app as identity_app
from ministack.identity import conf as identity_conf
from ministack.identity import manage
from ministack.identity import store as store_mod
from ministack.identity import tokens

PASSWORDS = {"MINISTACK_ADMIN_PASSWORD": "admin-secret",
             "MINISTACK_DEMO_PASSWORD": "demo-secret",
             "MINISTACK_SERVICE_PASSWORD": "nova-secret"}


@pytest.fixture
def conf(tmp_path):
    conf = cfg.ConfigOpts()
    ms_config.register_common_opts(conf)
    identity_conf.register_opts(conf)
    conf([], project="miniapi")
    conf.set_override("signing_key_file", str(tmp_path / "keys" / "0"),
                      group="identity")
    yield conf
    conf.reset()


@pytest.fixture
def store(tmp_path):
    engine = db.make_engine("sqlite:///%s" % (tmp_path / "nova.sqlite"))
    db.upgrade(engine, nova_db.MIGRATIONS_DIR)
    yield store_mod.IdentityStore(engine)
    engine.dispose()


@pytest.fixture
def seeded(conf, store):
    manage.bootstrap(conf, store, environ=PASSWORDS)
    return store


@pytest.fixture
def formatter(conf, seeded):
    return tokens.TokenFormatter.from_file(conf.identity.signing_key_file)


@pytest.fixture
def client(conf, seeded, formatter):
    app = identity_app.create_app(conf, seeded, formatter)
    return app.test_client()


def password_body(user, password, project=None, domains=True):
    user_ref = {"name": user, "password": password}
    if domains:
        user_ref["domain"] = {"name": "Default"}
    body = {"auth": {"identity": {"methods": ["password"],
                                  "password": {"user": user_ref}}}}
    if project:
        scope = {"name": project}
        if domains:
            scope["domain"] = {"id": "default"}
        body["auth"]["scope"] = {"project": scope}
    return body


def login(client, user="admin", password="admin-secret", project="admin"):
    resp = client.post("/v3/auth/tokens",
                       json=password_body(user, password, project))
    assert resp.status_code == 201, resp.get_json()
    return resp.headers["X-Subject-Token"]
