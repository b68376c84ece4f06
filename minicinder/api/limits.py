"""``GET /v3/{project_id}/limits``: the caller's project's absolute
limits and usage (no rate limits, as upstream today: ``rate`` is [])."""

import flask

from minicinder.api import common
from minicinder.api import validation

bp = flask.Blueprint("limits", __name__, url_prefix="/v3/<project_id>")
bp.url_value_preprocessor(common.drop_project)


@bp.get("/limits")
def index():
    validation.query(())
    absolute = common.services().quotas.absolute_limits(common.context())
    return flask.jsonify({"limits": {"rate": [], "absolute": absolute}})
