"""Upstream tempest's response schemas, to check miniapi's views against.

Tempest validates every response it gets against JSON schemas with
``additionalProperties: false`` (``tempest/lib/api_schema/response``),
choosing the schema module by microversion through each service
client's ``schema_versions_info``. This helper does the same without
importing tempest's clients (their dependencies are not the project's):

* the schema modules are plain dicts that import only each other and
  ``copy``, so the ``tempest`` package directory of the tempest venv is
  mounted alone as the ``tempest`` package (no other site-packages);
* a client's version table is read from its source with ``ast``.

Responses are checked as ``rest_client.validate_response`` does: the
status code must be listed, the body must match (Draft 4, tempest's
``iso8601-date-time`` format), and a schema without ``response_body``
wants no body at all.

The tests skip, saying why, when the tempest venv is absent
(``MINISTACK_TEMPEST_VENV``, default ``/opt/stack/tempest-venv``).
"""

import ast
import glob
import importlib
import importlib.machinery
import importlib.util
import os
import sys

import jsonschema
from oslo_utils import timeutils
import pytest

from ministack.microversion import APIVersion

VENV = os.environ.get("MINISTACK_TEMPEST_VENV", "/opt/stack/tempest-venv")


def tempest_dir():
    found = sorted(glob.glob(os.path.join(
        VENV, "lib", "python3*", "site-packages", "tempest")))
    return found[-1] if found else None


def require_tempest():
    """Skip the calling test unless the tempest venv is installed."""
    if tempest_dir() is None:
        pytest.skip("upstream tempest is not installed in %s (set "
                    "MINISTACK_TEMPEST_VENV); its response schemas are "
                    "what these tests check against" % VENV)


def _mount():
    """Make ``import tempest.lib.api_schema...`` find the venv's files."""
    path = tempest_dir()
    module = sys.modules.get("tempest")
    if module is not None and path in list(getattr(module, "__path__", [])):
        return
    spec = importlib.machinery.ModuleSpec("tempest", None, is_package=True)
    spec.submodule_search_locations = [path]
    sys.modules["tempest"] = importlib.util.module_from_spec(spec)


def _version_table(client):
    """[(min, max, module path)] of ``tempest/lib/services/compute/<client>``.
    """
    source = os.path.join(tempest_dir(), "lib", "services", "compute",
                          client + ".py")
    tree = ast.parse(open(source).read())
    aliases = {}
    table = None
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and \
                node.module.startswith("tempest.lib.api_schema"):
            for name in node.names:
                aliases[name.asname or name.name] = "%s.%s" % (node.module,
                                                               name.name)
        if isinstance(node, ast.Assign) and any(
                getattr(t, "id", None) == "schema_versions_info"
                for t in node.targets):
            table = node.value
    rows = []
    for entry in table.elts:
        row = {k.value: v for k, v in zip(entry.keys, entry.values,
                                             strict=True)}
        rows.append((row["min"].value, row["max"].value,
                     aliases[row["schema"].id]))
    return rows


def schema_module(client, version):
    """The schema module tempest's ``client`` uses at ``version``."""
    _mount()
    version = APIVersion(str(version))
    for low, high, module in _version_table(client):
        if (low is None or version >= APIVersion(low)) and \
                (high is None or version <= APIVersion(high)):
            return importlib.import_module(module)
    raise LookupError("%s has no schema for %s" % (client, version))


def fixed_module(path):
    """A schema module clients use at every version
    (e.g. ``v2_1.flavors_access``)."""
    _mount()
    return importlib.import_module(
        "tempest.lib.api_schema.response.compute." + path)


_FORMATS = jsonschema.FormatChecker()


@_FORMATS.checks("iso8601-date-time")
def _iso8601(value):
    if value is None:
        return True
    try:
        timeutils.parse_isotime(value)
    except ValueError:
        return False
    return True


def check(schema, status, body):
    """Fail as tempest would on this response (status code and body)."""
    assert status in schema["status_code"], (
        "status %s, schema wants %s" % (status, schema["status_code"]))
    body_schema = schema.get("response_body")
    if body_schema:
        jsonschema.validate(body, body_schema,
                            cls=jsonschema.Draft4Validator,
                            format_checker=_FORMATS)
    else:
        assert not body, "tempest wants no body, got %r" % (body,)


def check_client(client, name, version, status, body):
    """``check`` with the schema ``name`` of ``client`` at ``version``."""
    check(getattr(schema_module(client, version), name), status, body)
