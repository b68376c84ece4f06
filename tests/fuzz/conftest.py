"""Fixtures and hooks of the fuzz tier (see README.md here).

The sessions and raw REST clients are the security tier's fixtures
(tests/support/lab_sessions.py), imported rather than rewritten. On top:

* ``lab``: the run's own resources (a volume type, volumes, attachments,
  one guest), made once; the clean-up also runs at session end, however
  the run ended;
* ``fuzz(route)``: send the route's corpus (tests/fuzz/corpus.py), then
  fuzz it with hypothesis within the tier's budget, and fail listing
  every distinct 5xx or leak found;
* the order: routes that may DELETE run after the others (so the pools
  are not emptied early), the clean-up-and-audit test runs last;
* a summary at the end: the seed, the cases sent per API, the answers.
"""

import os
import shutil
import tempfile

import hypothesis
import hypothesis.configuration
import pytest

from tests.fuzz import attack
from tests.fuzz import budget
from tests.fuzz import corpus
from tests.fuzz import lab as lab_mod
from tests.fuzz import probe
from tests.fuzz import routes as routes_mod
from tests.fuzz import shapes
from tests.support.lab_sessions import admin_compute  # noqa: F401
from tests.support.lab_sessions import admin_session  # noqa: F401
from tests.support.lab_sessions import admin_volumes  # noqa: F401
from tests.support.lab_sessions import conf  # noqa: F401
from tests.support.lab_sessions import demo_compute  # noqa: F401
from tests.support.lab_sessions import demo_session  # noqa: F401
from tests.support.lab_sessions import demo_volumes  # noqa: F401

HERE = os.path.dirname(os.path.abspath(__file__)) + os.sep

# No example database (settings below) and no .hypothesis/ in the work
# tree either: hypothesis' caches live in a temp dir for this run only.
_HYPOTHESIS_HOME = tempfile.mkdtemp(prefix="ministack-fuzz-hypothesis-")
hypothesis.configuration.set_hypothesis_home_dir(_HYPOTHESIS_HOME)
AUDIT_TEST = "test_cleanup_then_audit_is_clean"


class _State:
    clock = budget.Clock()
    routes_left = 0
    routes_run = []
    seconds = {}     # route id -> seconds spent on it
    prober = None


STATE = _State()


def _route(item):
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("route") if callspec else None


def _mine(item):
    return str(item.path).startswith(HERE)


def pytest_unconfigure(config):
    shutil.rmtree(_HYPOTHESIS_HOME, ignore_errors=True)


def pytest_report_header(config):
    return ["fuzz: seed %d (%s), %d examples per route, %gs budget" % (
        budget.SEED, budget.REPRODUCE, budget.EXAMPLES, budget.BUDGET)]


def pytest_collection_modifyitems(session, config, items):
    """Routes that may DELETE go after the rest; the audit goes last.
    The APIs take turns, so none is always last to get the time left."""
    def rank(item):
        if not _mine(item):
            return 0
        if item.originalname == AUDIT_TEST:
            return 3
        route = _route(item)
        return 2 if route is not None and route.method == "DELETE" else 1

    turn = {}
    seen = {}
    for item in items:
        route = _route(item) if _mine(item) else None
        key = (rank(item), route.group if route else "")
        turn[item.nodeid] = seen.get(key, 0)
        seen[key] = turn[item.nodeid] + 1
    items[:] = [i for _, i in sorted(
        enumerate(items),
        key=lambda p: (rank(p[1]), turn[p[1].nodeid], p[0]))]


def pytest_collection_finish(session):
    STATE.routes_left = sum(1 for i in session.items
                            if _mine(i) and _route(i) is not None)


@pytest.fixture(scope="session")
def lab(conf, demo_session, admin_session, demo_volumes,  # noqa: F811
        demo_compute, admin_volumes, admin_compute):  # noqa: F811
    found = lab_mod.Lab(conf, demo_session, admin_session, demo_volumes,
                        demo_compute, admin_volumes, admin_compute)
    try:
        found.wait_for_services()
        found.setup(with_server=os.environ.get(
            "MINISTACK_FUZZ_SERVER", "1") != "0")
    except BaseException:
        found.cleanup()   # what set-up made; the set-up error is the news
        raise
    yield found
    problems = found.cleanup()
    if problems:
        raise AssertionError("fuzz clean-up failed:\n  " +
                             "\n  ".join(problems))


@pytest.fixture(scope="session")
def prober(lab):
    STATE.prober = probe.Prober(lab.roots)
    return STATE.prober


@pytest.fixture
def fuzz(lab, prober):
    """``fuzz(route)``: send up to MINISTACK_FUZZ_EXAMPLES hypothesis
    requests to ``route`` (fewer if its share of the budget runs out);
    fail with every distinct finding and the seed."""
    def run(route):
        lab.ensure_tokens()
        strategy = attack.requests_for(lab, route)
        STATE.clock.start_route(STATE.routes_left)
        STATE.routes_left -= 1
        STATE.routes_run.append(route)

        @hypothesis.seed(budget.route_seed(route.id))
        @hypothesis.settings(
            max_examples=budget.EXAMPLES, deadline=None, database=None,
            phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
            print_blob=False, verbosity=hypothesis.Verbosity.quiet,
            suppress_health_check=list(hypothesis.HealthCheck))
        @hypothesis.given(strategy)
        def one(request):
            if request.focus != "corpus" and STATE.clock.route_over():
                return
            result = prober.send(request)
            lab.track(route, request.method.upper(), result.status,
                      result.text, request.url)
            prober.check(request, result)

        for known in corpus.requests_for(lab, route):
            one = hypothesis.example(known)(one)
        try:
            one()
        finally:
            STATE.seconds[route.id] = STATE.clock.end_route()
        found = prober.findings_for(route.id)
        if found:
            pytest.fail("%d distinct finding(s) on %s; %s\n\n%s" % (
                len(found), route.id, budget.REPRODUCE, "\n\n".join(
                    f.describe(lab.secrets()) for f in found)),
                pytrace=False)
    return run


def pytest_terminal_summary(terminalreporter):
    prober_ = STATE.prober
    if prober_ is None:
        return
    write = terminalreporter.write_line
    terminalreporter.section("fuzz summary")
    write("seed %d: %s" % (budget.SEED, budget.REPRODUCE))
    for group in routes_mod.GROUPS:
        routes = [r for r in STATE.routes_run if r.group == group]
        if not routes:
            continue
        cases = sum(prober_.cases.get(r.id, 0) for r in routes)
        statuses = prober_.statuses.get(group, {})
        findings = [f for f in prober_.findings.values()
                    if f.request.group == group]
        seconds = sum(STATE.seconds.get(r.id, 0) for r in routes)
        write("fuzz %-8s %5d cases over %2d routes in %3.0fs, %d "
              "finding(s); answers: %s" % (
                  group, cases, len(routes), seconds, len(findings),
                  ", ".join("%s x%d" % (k, v) for k, v in sorted(
                      statuses.items(), key=lambda kv: str(kv[0])))))
    slowest = sorted(STATE.seconds.items(), key=lambda kv: -kv[1])[:3]
    write("slowest routes: %s" % ", ".join("%s %.0fs" % kv
                                           for kv in slowest))
    causes = {}
    for finding in prober_.findings.values():
        causes.setdefault((finding.kind, finding.cause), []).append(
            finding.request.route_id)
    for (kind, cause), where in sorted(causes.items()):
        write("finding: %s %s (on %d route(s), e.g. %s)" % (
            kind, cause, len(where), where[0]))
    unshaped = [r.id for r in STATE.routes_run if r.method in
                ("POST", "PUT") and shapes.for_route(r.method, r.rule)
                is None]
    if unshaped:
        write("routes fuzzed with random JSON only (add a shape in "
              "tests/fuzz/shapes.py): %s" % ", ".join(unshaped))
    if prober_.unsendable:
        write("%d generated requests could not be sent (e.g. %s)" % (
            len(prober_.unsendable), prober_.unsendable[0]))
