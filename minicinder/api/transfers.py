"""``/v3/{project_id}/os-volume-transfer``: offer a volume to another
project, list and show the offers, withdraw one, accept one.

Shapes as upstream: a transfer is ``id``, ``name``, ``volume_id`` and
``links``, plus ``created_at`` in the detailed views; the create
response alone carries the ``auth_key``. Codes: create, accept and
delete 202.
"""

import flask

from minicinder import exception
from minicinder.api import common
from minicinder.api import schemas
from minicinder.api import validation
from minicinder.api import views

bp = flask.Blueprint("transfers", __name__, url_prefix="/v3/<project_id>")
bp.url_value_preprocessor(common.drop_project)

COLLECTION = "os-volume-transfer"

create_body = schemas.one("transfer", {
    "volume_id": schemas.uuid, "name": schemas.name,
}, required=["volume_id"])
accept_body = schemas.one("accept", {
    "auth_key": {"type": "string", "minLength": 1, "maxLength": 255},
}, required=["auth_key"])


def _summary(transfer):
    return {"id": transfer.id, "name": transfer.display_name,
            "volume_id": transfer.volume_id,
            "links": views.links(common.context().project_id, COLLECTION,
                                 transfer.id)}


def _detail(transfer):
    return dict(_summary(transfer),
                created_at=views.timestamp(transfer.created_at))


def _api():
    return common.services().transfers


def _transfer_id(transfer_id):
    return validation.uuid_arg(
        transfer_id, lambda v: exception.TransferNotFound(transfer_id=v))


@bp.post("/" + COLLECTION)
def create():
    data = validation.body(create_body, common.max_body())["transfer"]
    transfer, auth_key = _api().create(common.context(), data["volume_id"],
                                       data.get("name"))
    return flask.jsonify({"transfer": dict(_detail(transfer),
                                           auth_key=auth_key)}), 202


def _list(render):
    params = validation.query(("all_tenants",))
    all_tenants = validation.boolean(params.get("all_tenants", False),
                                     "all_tenants")
    transfers = _api().get_all(common.context(), all_tenants)
    return flask.jsonify({"transfers": [render(t) for t in transfers]})


@bp.get("/" + COLLECTION)
def index():
    return _list(_summary)


@bp.get("/%s/detail" % COLLECTION)
def detail():
    return _list(_detail)


@bp.get("/%s/<transfer_id>" % COLLECTION)
def show(transfer_id):
    validation.query(())
    transfer = _api().get(common.context(), _transfer_id(transfer_id))
    return flask.jsonify({"transfer": _detail(transfer)})


@bp.delete("/%s/<transfer_id>" % COLLECTION)
def delete(transfer_id):
    _api().delete(common.context(), _transfer_id(transfer_id))
    return "", 202


@bp.post("/%s/<transfer_id>/accept" % COLLECTION)
def accept(transfer_id):
    data = validation.body(accept_body, common.max_body())["accept"]
    transfer = _api().accept(common.context(), _transfer_id(transfer_id),
                             data["auth_key"])
    return flask.jsonify({"transfer": _summary(transfer)}), 202
