"""Test decorators, as tempest's ``tempest.lib.decorators``."""

import collections
import uuid

import pytest


def idempotent_id(id_):
    """Give a test a stable id, as tempest's ``idempotent_id`` does.

    The id survives renames and moves, so results can be tracked across
    runs and clouds. It must be a UUID4 and unique in the suite; the
    suite's conftest refuses to run otherwise.
    """
    parsed = uuid.UUID(id_)
    if parsed.version != 4 or str(parsed) != id_:
        raise ValueError("idempotent_id %r is not a lower-case UUID4" % id_)

    def decorator(func):
        func.idempotent_id = id_
        return pytest.mark.idempotent_id(id_)(func)
    return decorator


def requires_microversion(conf, service, version):
    """Skip unless the cloud offers ``version`` of ``service``."""
    top = (conf.compute_max_microversion if service == "compute"
           else conf.volume_max_microversion)
    if _numeric(version) > _numeric(top):
        pytest.skip("needs %s microversion %s, the cloud offers up to %s "
                    "([%s] max_microversion)" % (service, version, top,
                                                 service))


def _numeric(version):
    if version == "latest":
        return (10 ** 6, 0)
    major, minor = version.split(".")
    return int(major), int(minor)


def check_idempotent_ids(items):
    """Problems with the ids of the collected tests (empty: none).

    Parametrized variants of one function share its id, as in tempest.
    """
    problems = []
    owners = collections.defaultdict(set)
    for item in items:
        func = getattr(item, "function", None)
        id_ = getattr(func, "idempotent_id", None)
        if id_ is None:
            problems.append("%s has no @idempotent_id" % item.nodeid)
            continue
        owners[id_].add("%s::%s" % (item.module.__name__,
                                    func.__qualname__))
    for id_, tests in sorted(owners.items()):
        if len(tests) > 1:
            problems.append("idempotent_id %s is used by %s" % (
                id_, ", ".join(sorted(tests))))
    return problems
