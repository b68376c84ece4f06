"""/os-aggregates, read-only: ministack has no host aggregates.

``openstack hypervisor show`` lists the aggregates to name the ones the
hypervisor belongs to; without this route it fails. ministack has one
implicit zone and no aggregates, so the list is empty and every
aggregate is not found; creating or changing aggregates is not served
(405). Admin only, as upstream's policies
``os_compute_api:os-aggregates:index`` and ``:show``.
"""

import flask

from miniapi.api import common
from ministack import exception as ms_exception

bp = flask.Blueprint("aggregates", __name__, url_prefix="/v2.1")


@bp.get("/os-aggregates")
def index():
    common.require_admin(common.context(),
                         "os_compute_api:os-aggregates:index")
    return flask.jsonify({"aggregates": []})


@bp.get("/os-aggregates/<aggregate_id>")
def show(aggregate_id):
    """nova validates the id as an integer (400) before looking it up."""
    common.require_admin(common.context(),
                         "os_compute_api:os-aggregates:show")
    try:
        int(aggregate_id)
    except ValueError:
        raise ms_exception.Invalid(
            message="Invalid input received: id must be an integer") \
            from None
    raise ms_exception.NotFound(
        message="Aggregate %s could not be found." % aggregate_id)
