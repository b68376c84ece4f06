"""``/v3/{project_id}/os-quota-sets/{target}``: show (``?usage=True``),
defaults, update and delete a project's block storage quotas."""

import flask

from minicinder import exception
from minicinder.api import common
from minicinder.api import validation
from minicinder.volume import quotas

bp = flask.Blueprint("quota_sets", __name__, url_prefix="/v3/<project_id>")
bp.url_value_preprocessor(common.drop_project)

_limit = {"type": ["integer", "string"], "pattern": "^-?[0-9]+$",
          "minimum": -1, "maximum": 2147483647}
update_body = {
    "type": "object",
    "properties": {"quota_set": {
        "type": "object",
        "properties": dict({name: _limit for name in quotas.RESOURCES},
                           tenant_id={"type": "string"},
                           skip_validation={
                               "type": ["boolean", "string"]}),
        "additionalProperties": False}},
    "required": ["quota_set"], "additionalProperties": False}


def _api():
    return common.services().quotas


def _target(target):
    """A project id the database can hold (a longer one names nothing)."""
    if len(target) > 255:
        raise exception.InvalidInput(
            reason="Invalid project id %s..." % target[:40])
    return target


@bp.get("/os-quota-sets/<target>")
def show(target):
    params = validation.query(("usage",))
    usage = validation.boolean(params.get("usage", False), "usage")
    quota_set = _api().get(common.context(), _target(target), usage=usage)
    return flask.jsonify({"quota_set": dict(quota_set, id=target)})


@bp.get("/os-quota-sets/<target>/defaults")
def defaults(target):
    validation.query(())
    return flask.jsonify({"quota_set": dict(
        _api().defaults(common.context(), _target(target)), id=target)})


@bp.put("/os-quota-sets/<target>")
def update(target):
    body = validation.body(update_body, common.max_body())["quota_set"]
    body.pop("tenant_id", None)
    skip_validation = validation.boolean(body.pop("skip_validation", True),
                                         "skip_validation")
    values = {}
    for name, value in body.items():
        # As cinder's validate_integer: int(str(value)), so JSON's 1.0
        # (an integer to the schema) is refused, not a 500.
        text = str(value)
        try:
            number = int(text)
        except ValueError:
            raise exception.InvalidInput(
                reason="%s must be an integer." % name)
        if len(text.lstrip("-")) > 10 or number < -1 or \
                number > _limit["maximum"]:
            raise exception.InvalidInput(
                reason="Quota limit %s for %s must be -1 or more."
                % (value, name))
        values[name] = number
    return flask.jsonify({"quota_set": _api().update(
        common.context(), _target(target), values, skip_validation)})


@bp.delete("/os-quota-sets/<target>")
def delete(target):
    _api().delete(common.context(), _target(target))
    return "", 200
