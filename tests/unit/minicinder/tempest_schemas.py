"""Tempest's own response schemas, imported from the tempest venv.

Upstream tempest validates every response against JSON schemas with
``additionalProperties: false`` (``tempest/lib/api_schema``), so a key too
many or too few fails a test. The unit tests validate minicinder's views
against those very schemas, taken from the tempest package installed in
its own venv (``/opt/stack/tempest-venv``, or ``$MINISTACK_TEMPEST_VENV``),
never copied.

Only the ``tempest`` package directory is mapped into this interpreter
(``sys.path`` is not touched), so none of the tempest venv's other
packages can shadow the project's. :func:`validate` does what tempest's
``RestClient.validate_response`` does, with tempest's own validator class
and format checker.
"""

import glob
import importlib
import importlib.util
import os
import sys

TEMPEST_VENV = os.environ.get("MINISTACK_TEMPEST_VENV",
                              "/opt/stack/tempest-venv")
SKIP_REASON = ("upstream tempest is not installed in %s (its own venv, "
               "tempest==47.0.0): minicinder's views cannot be checked "
               "against tempest's schemas" % TEMPEST_VENV)


def _package_dir():
    found = sorted(glob.glob(os.path.join(
        TEMPEST_VENV, "lib", "python3*", "site-packages", "tempest",
        "__init__.py")))
    return os.path.dirname(found[-1]) if found else None


def available():
    """Import the ``tempest`` package; False when the venv lacks it."""
    if "tempest" in sys.modules:
        return True
    path = _package_dir()
    if path is None:
        return False
    spec = importlib.util.spec_from_file_location(
        "tempest", os.path.join(path, "__init__.py"),
        submodule_search_locations=[path])
    module = importlib.util.module_from_spec(spec)
    sys.modules["tempest"] = module
    spec.loader.exec_module(module)
    return True


def volume_schema(name):
    """``tempest.lib.api_schema.response.volume.<name>``."""
    return importlib.import_module(
        "tempest.lib.api_schema.response.volume." + name)


# id(schema) -> (schema, validator); the schema is kept so its id stays
# its own.
_VALIDATORS = {}


def validate(schema, response):
    """Check ``response`` (status and JSON body) as tempest's rest client
    does for a 2xx/3xx answer.

    :raises AssertionError: naming the violation.
    """
    import jsonschema
    validator = importlib.import_module(
        "tempest.lib.common.jsonschema_validator")
    status = response.status_code
    assert status in schema["status_code"], (
        "status %s, tempest expects %s: %s"
        % (status, schema["status_code"], response.body))
    body_schema = schema.get("response_body")
    if body_schema:
        # jsonschema.validate(), which tempest calls, checks the schema
        # against the metaschema on every call; that is done once here.
        key = id(body_schema)
        if key not in _VALIDATORS:
            validator.JSONSCHEMA_VALIDATOR.check_schema(body_schema)
            _VALIDATORS[key] = (body_schema, validator.JSONSCHEMA_VALIDATOR(
                body_schema, format_checker=validator.FORMAT_CHECKER))
        error = jsonschema.exceptions.best_match(
            _VALIDATORS[key][1].iter_errors(response.body))
        if error is not None:
            raise AssertionError("HTTP response body is invalid (%s)"
                                 % error)
    else:
        assert not response.body, (
            "HTTP response body should not exist (%s)" % response.body)
