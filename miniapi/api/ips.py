"""GET /servers/{id}/ips[/{network}] (nova's ips.py).

ministack servers have no networks (no Neutron; they boot with
``--nic none``), so the address list is always empty and any network
label is unknown (404), exactly as upstream answers for a server without
ports.
"""

import flask

from miniapi.api import common
from miniapi.api import servers
from ministack import exception as ms_exception

bp = flask.Blueprint("ips", __name__, url_prefix="/v2.1")


@bp.get("/servers/<server_id>/ips")
def index(server_id):
    ctxt = common.context()
    servers.get_instance(ctxt, server_id)
    return flask.jsonify({"addresses": {}})


@bp.get("/servers/<server_id>/ips/<network>")
def show(server_id, network):
    ctxt = common.context()
    servers.get_instance(ctxt, server_id)
    raise ms_exception.NotFound(
        message="Instance is not a member of specified network")
