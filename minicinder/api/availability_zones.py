"""``GET /v3/{project_id}/os-availability-zone``: the one zone every
volume is created in (``[DEFAULT] storage_availability_zone``), available
while the volume service is up."""

import flask

from minicinder.api import common
from minicinder.api import validation

bp = flask.Blueprint("availability_zones", __name__,
                     url_prefix="/v3/<project_id>")
bp.url_value_preprocessor(common.drop_project)


@bp.get("/os-availability-zone")
def index():
    validation.query(())
    svc = common.services()
    zone = svc.conf.storage_availability_zone
    available = svc.service_api.zone_available(zone)
    return flask.jsonify({"availabilityZoneInfo": [
        {"zoneName": zone, "zoneState": {"available": available}}]})
