"""Request body and query validation with JSON schema, per microversion.

Schemas live in ``miniapi.api.schemas``; a view declares them with
:func:`body` / :func:`query`, each possibly for a version range, like
nova's ``@validation.schema(schema, min_version, max_version)``. A body
that is not JSON, or fails its schema, is 400 with a message naming the
offending property; nothing is changed.
"""

import functools
import json
import re

import flask
import jsonschema
from oslo_utils import uuidutils

from miniapi.api import microversion
from ministack import exception
from ministack import json_text

_FORMAT_CHECKER = jsonschema.FormatChecker()


@_FORMAT_CHECKER.checks("uuid")
def _is_uuid(value):
    # nova accepts the dashed form only (uuidutils.is_uuid_like also
    # accepts un-dashed hex, which upstream's schema rejects).
    return isinstance(value, str) and uuidutils.is_uuid_like(value) and \
        bool(re.match(r"^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$",
                      value))


def _validator(schema):
    return jsonschema.Draft4Validator(schema, format_checker=_FORMAT_CHECKER)


def _message(error):
    if error.validator == "additionalProperties":
        return "Additional properties are not allowed (%s)" % \
            error.message.split("(", 1)[-1].rstrip(")")
    path = "/".join(str(p) for p in error.absolute_path)
    if path:
        return "Invalid input for field/attribute %s. Value: %s. %s" % (
            path.split("/")[-1], json.dumps(error.instance), error.message)
    return error.message


def validate(data, schema):
    """Validate ``data`` against ``schema`` or raise 400."""
    errors = sorted(_validator(schema).iter_errors(data),
                    key=lambda e: e.path)
    if errors:
        raise exception.Invalid(message=_message(errors[0]))


def request_json():
    """The decoded JSON body.

    :raises Invalid: 400 "Malformed request body", or a string no
        database or log can take (a lone surrogate from a ``\\ud800``
        escape, a NUL), naming its field as a schema error would.
    """
    raw = flask.request.get_data(cache=True)
    if not raw:
        raise exception.Invalid(message="Malformed request body")
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise exception.Invalid(
            message="Malformed request body") from None
    found = json_text.bad_text(data)
    if found is not None:
        path, value, reason = found
        raise exception.Invalid(
            message="Invalid input for field/attribute %s. Value: %s. %s."
            % (path[-1] if path else "body", json_text.shown(value),
               reason[0].upper() + reason[1:]))
    return data


def _resolve(schema):
    """A schema, or a function of the request's version returning one."""
    return schema(microversion.current()) if callable(schema) else schema


def body(schema):
    """Decorator: validate the JSON body; the view gets ``body=``.

    ``schema`` is a dict, or a function of the APIVersion returning the
    schema for that version (nova stacks one decorator per range; a
    function keeps each resource's version rules next to its schema).
    """
    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            data = request_json()
            validate(data, _resolve(schema))
            return func(*args, body=data, **kwargs)
        return wrapper
    return decorator


def query(schema):
    """Decorator: validate the query string (a dict of value lists).

    ``schema`` may be None for versions that accept anything (upstream
    ignores unknown query parameters before 2.75 on most routes).
    """
    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            resolved = _resolve(schema)
            if resolved is not None:
                params = {k: flask.request.args.getlist(k)
                          for k in flask.request.args}
                validate(params, resolved)
            return func(*args, **kwargs)
        return wrapper
    return decorator
