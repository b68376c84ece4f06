"""The fuzz tier never changes keystone's data (tests/fuzz/attack.py).

A GET route of keystone sent as DELETE by admin, with admin's own id in
the path, can delete the lab's admin user (or project); a CI run failed
every login after some point of the fuzz tier. These tests draw many
requests for each keystone route, without the lab, and check the safety
rule: a request whose method could change keystone's data carries no
admin token, names no real user or project and no real subject token.
"""

import types
import urllib.parse

import hypothesis
import pytest

from tests.fuzz import attack
from tests.fuzz import routes

DEMO = types.SimpleNamespace(token="demo-token", user_id="u-demo" * 4,
                             project_id="p-demo" * 4)
ADMIN = types.SimpleNamespace(token="admin-token", user_id="u-admin" * 4,
                              project_id="p-admin" * 4)


class FakeLab:
    """What attack.requests_for reads of tests.fuzz.lab.Lab."""
    demo, admin = DEMO, ADMIN
    conf = types.SimpleNamespace(
        user=types.SimpleNamespace(password="demo-password"),
        admin=types.SimpleNamespace(password="admin-password"))
    flavors, images = ["f1"], ["i1"]
    roots = {"identity": "http://keystone/"}

    @property
    def tokens(self):
        return {"demo": DEMO.token, "admin": ADMIN.token}

    def pool(self, kind):
        return []


REAL_IDS = {DEMO.user_id, ADMIN.user_id, DEMO.project_id, ADMIN.project_id}
KEYSTONE_GETS = [r for r in routes.routes("identity") if r.method == "GET"]


def _header(request, name):
    """A header as text (the prober sends bytes)."""
    value = request.headers.get(name)
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return value


def _draw_many(route, count=400):
    drawn = []

    @hypothesis.settings(max_examples=count, database=None, deadline=None,
                         suppress_health_check=list(hypothesis.HealthCheck),
                         phases=[hypothesis.Phase.generate])
    @hypothesis.given(attack.requests_for(FakeLab(), route))
    def collect(request):
        drawn.append(request)

    collect()
    return drawn


@pytest.mark.parametrize("route", KEYSTONE_GETS, ids=str)
def test_a_keystone_write_is_never_admins_and_names_nothing_real(route):
    writes = [r for r in _draw_many(route)
              if attack.keystone_write(route, r.method)]
    assert writes, "no request of %s changed its method" % route
    for request in writes:
        assert _header(request, "X-Auth-Token") != ADMIN.token, request
        path = urllib.parse.unquote(urllib.parse.urlsplit(request.url).path)
        assert not any(real in path for real in REAL_IDS), request
        assert _header(request, "X-Subject-Token") not in (
            DEMO.token, ADMIN.token), request


def test_reads_and_token_issue_keep_admin_and_real_ids():
    """The rule is narrow: reads still go out as admin with real ids, and
    issuing a token is not a write."""
    route = routes.Route("identity", "GET", "/v3/users/<user_id>")
    reads = [r for r in _draw_many(route)
             if not attack.keystone_write(route, r.method)]
    assert any(_header(r, "X-Auth-Token") == ADMIN.token and
               ADMIN.user_id in r.url for r in reads)
    issue = routes.Route("identity", "POST", "/v3/auth/tokens")
    assert not attack.keystone_write(issue, "POST")
    assert attack.keystone_write(issue, "DELETE")


@pytest.mark.parametrize("method", ["GET", "HEAD", "OPTIONS"])
def test_safe_methods_are_not_writes(method):
    assert not attack.keystone_write(
        routes.Route("identity", "GET", "/v3/projects/<project_id>"), method)


def test_other_apis_are_not_keystone_writes():
    assert not attack.keystone_write(
        routes.Route("volume", "DELETE",
                     "/v3/<project_id>/volumes/<volume_id>"), "DELETE")
