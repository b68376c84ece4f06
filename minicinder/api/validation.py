"""Turning raw requests into validated Python values, or a 400.

Bodies: must be a JSON object no larger than the configured limit, and
must match the route's schema. Query strings: only the filters a route
declares are accepted (an unknown filter is a 400 naming it, instead of
upstream's silently empty list: see README, deviations).
"""

import json

import flask
import jsonschema
from oslo_utils import uuidutils

from minicinder import exception
from ministack import json_text

_format_checker = jsonschema.FormatChecker()


@_format_checker.checks("uuid")
def _is_uuid(value):
    return not isinstance(value, str) or uuidutils.is_uuid_like(value)


def body(schema, max_size):
    """The request's JSON body, validated against ``schema``.

    :raises InvalidInput: not JSON, text no database can store, or fails
        the schema.
    :raises RequestTooLarge: bigger than ``max_size`` bytes.
    """
    request = flask.request
    if request.content_length is not None and \
            request.content_length > max_size:
        raise exception.RequestTooLarge(limit=max_size)
    raw = request.stream.read(max_size + 1)
    if len(raw) > max_size:
        raise exception.RequestTooLarge(limit=max_size)
    if not raw.strip():
        raise exception.InvalidInput(reason="The request body is empty.")
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise exception.InvalidInput(reason="Malformed request body.")
    check_text(data)
    validate(data, schema)
    return data


def check_text(data):
    """:raises InvalidInput: a string no database can store (a lone
    surrogate from a ``\\ud800`` escape, a NUL), naming the field."""
    found = json_text.bad_text(data)
    if found is not None:
        path, value, reason = found
        raise exception.InvalidInput(
            reason="Invalid input for field/attribute %s. Value: %s. %s."
            % ("/".join(str(p) for p in path) or "body",
               json_text.shown(value), reason[0].upper() + reason[1:]))


def validate(data, schema):
    """:raises InvalidInput: naming the first schema violation."""
    validator = jsonschema.Draft7Validator(schema,
                                           format_checker=_format_checker)
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "body"
        raise exception.InvalidInput(
            reason="Invalid input for field/attribute %s. Value: %s. %s"
            % (where, json.dumps(error.instance)[:200], error.message[:300]))


def uuid_arg(value, kind):
    """A path id that is not a UUID cannot exist: 404, as upstream."""
    if not uuidutils.is_uuid_like(value):
        raise kind(value)
    return value


_TRUE = ("1", "true", "yes", "on", "t", "y")
_FALSE = ("0", "false", "no", "off", "f", "n", "none", "")


def boolean(value, name):
    """Query booleans arrive as True/False (SDK) or 1 (cinderclient)."""
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise exception.InvalidInput(
        reason="Invalid value '%s' for %s: it must be a boolean."
        % (value, name))


def query(allowed):
    """The query string as a dict, rejecting names not in ``allowed``.

    :raises InvalidInput: an unknown filter, or one given twice.
    """
    request = flask.request._get_current_object()
    if not request.environ.get("QUERY_STRING"):
        # Most requests have none: no MultiDict to parse and walk.
        return {}
    args = request.args
    unknown = sorted(set(args) - set(allowed))
    if unknown:
        raise exception.InvalidInput(
            reason="Invalid filters %s are found in query options."
            % ",".join(unknown))
    result = {}
    for key in args:
        values = args.getlist(key)
        if len(values) > 1:
            raise exception.InvalidInput(
                reason="Query parameter %s was given more than once." % key)
        result[key] = values[0]
    return result


def paging(params):
    """``limit`` (non-negative int) and ``marker`` from parsed params."""
    page = {}
    if "limit" in params:
        try:
            limit = int(params.pop("limit"))
        except ValueError:
            limit = -1
        if limit < 0:
            raise exception.InvalidInput(
                reason="limit param must be an integer >= 0")
        # Past any real list's length; keeps the number within SQL's int.
        page["limit"] = min(limit, 2 ** 31 - 1)
    if "marker" in params:
        page["marker"] = params.pop("marker")
    return page
