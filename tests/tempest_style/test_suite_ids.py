"""The suite's own rule: every test has a unique, stable UUID4 id.

Collection already refuses a suite that breaks it (conftest); these tests
show the check catches what it must, without touching the cloud.
"""

import types

import pytest

from tests.tempest_style.decorators import check_idempotent_ids
from tests.tempest_style.decorators import idempotent_id


def _item(module, name, id_=None):
    func = types.FunctionType((lambda: None).__code__, {}, name)
    func.__qualname__ = name
    if id_:
        func.idempotent_id = id_
    return types.SimpleNamespace(function=func, nodeid="%s::%s" % (module,
                                                                  name),
                                 module=types.SimpleNamespace(
                                     __name__=module))


@idempotent_id("3c0f4e55-8d0e-4a8e-9a5d-1f6b2b7c9d01")
def test_idempotent_id_check():
    uid = "0b8e5c1e-6a52-4b0e-8d5e-2f3c4a5b6c7d"
    ok = [_item("m", "test_a", uid),
          _item("m", "test_a", uid),  # a parametrized variant: fine
          _item("m", "test_b", "1d6f3a2b-4c5d-4e6f-8a7b-9c0d1e2f3a4b")]
    assert check_idempotent_ids(ok) == []
    bad = ok + [_item("n", "test_c", uid), _item("n", "test_d")]
    problems = check_idempotent_ids(bad)
    assert any("n::test_d has no @idempotent_id" in p for p in problems)
    assert any(uid in p and "m::test_a" in p and "n::test_c" in p
               for p in problems), problems
    with pytest.raises(ValueError):
        idempotent_id("not-a-uuid")
    with pytest.raises(ValueError):  # a UUID1 is not a UUID4
        idempotent_id("6fa459ea-ee8a-11ca-b2a8-00a0c91e6bf6")
