"""Volume transfers: offer a volume to another project, list and show the
offers, withdraw one, accept one.

Two routes serve the same offers, as upstream: the legacy
``/v3/{project_id}/os-volume-transfer`` (every microversion) and the
"new" ``/v3/{project_id}/volume-transfers`` (3.55+), whose create takes
``no_snapshots`` and whose lists page (3.59: ``limit``, ``marker``,
``offset``, ``sort``/``sort_key``/``sort_dir``, a ``name`` filter).

Shapes as upstream's view builder (``cinder/api/views/transfers.py``):
a transfer is ``id``, ``name``, ``volume_id`` and ``links``; the detailed
views add ``created_at``, from 3.55 ``no_snapshots`` and from 3.57
``source_project_id``, ``destination_project_id`` and ``accepted``, on
both routes; the create response alone carries the ``auth_key``. Codes:
create, accept and delete 202.
"""

import flask

from minicinder import exception
from minicinder.api import common
from minicinder.api import microversions as mv
from minicinder.api import schemas
from minicinder.api import validation
from minicinder.api import views

bp = flask.Blueprint("transfers", __name__, url_prefix="/v3/<project_id>")
bp.url_value_preprocessor(common.drop_project)

LEGACY = "os-volume-transfer"
NEW = "volume-transfers"

create_body = schemas.one("transfer", {
    "volume_id": schemas.uuid, "name": schemas.name,
}, required=["volume_id"])
create_body_v355 = schemas.one("transfer", {
    "volume_id": schemas.uuid, "name": schemas.name,
    "no_snapshots": {"type": ["boolean", "string"]},
}, required=["volume_id"])
accept_body = schemas.one("accept", {
    "auth_key": {"type": "string", "minLength": 1, "maxLength": 255},
}, required=["auth_key"])

# 3.59's list parameters on the new route, and the keys it sorts by.
PAGING_PARAMS = ("all_tenants", "limit", "marker", "offset", "sort",
                 "sort_key", "sort_dir", "name", "volume_id")
SORT_KEYS = {"created_at": "created_at", "id": "id", "name": "display_name",
             "volume_id": "volume_id", "updated_at": "updated_at"}


def _summary(transfer, collection):
    return {"id": transfer.id, "name": transfer.display_name,
            "volume_id": transfer.volume_id,
            "links": views.links(common.context().project_id, collection,
                                 transfer.id)}


def _detail(transfer, collection):
    view = dict(_summary(transfer, collection),
                created_at=views.timestamp(transfer.created_at))
    version = common.version()
    if version.matches(mv.TRANSFER_WITH_SNAPSHOTS):
        view["no_snapshots"] = bool(transfer.no_snapshots)
    if version.matches(mv.TRANSFER_WITH_HISTORY):
        view["destination_project_id"] = transfer.destination_project_id
        view["source_project_id"] = transfer.source_project_id
        view["accepted"] = bool(transfer.accepted)
    return view


def _api():
    return common.services().transfers


def _transfer_id(transfer_id):
    return validation.uuid_arg(
        transfer_id, lambda v: exception.TransferNotFound(transfer_id=v))


def _new_route():
    """The 3.55 API: below it the route does not exist (404)."""
    common.require_version(mv.TRANSFER_WITH_SNAPSHOTS)


def _create(collection, schema):
    data = validation.body(schema, common.max_body())["transfer"]
    no_snapshots = validation.boolean(data.get("no_snapshots", False),
                                      "no_snapshots")
    transfer, auth_key = _api().create(common.context(), data["volume_id"],
                                       data.get("name"),
                                       no_snapshots=no_snapshots)
    return flask.jsonify({"transfer": dict(_detail(transfer, collection),
                                           auth_key=auth_key)}), 202


def _list(collection, detail, paged=False):
    params = validation.query(PAGING_PARAMS if paged else ("all_tenants",))
    all_tenants = validation.boolean(params.pop("all_tenants", False),
                                     "all_tenants")
    transfers = _api().get_all(common.context(), all_tenants)
    limit = None
    if paged:
        transfers, limit = _page(transfers, params)
    render = _detail if detail else _summary
    body = {"transfers": [render(t, collection) for t in transfers]}
    views.next_link(body, "transfers", transfers, limit)
    return flask.jsonify(body)


def _page(transfers, params):
    """3.59: filter, sort, then marker / offset / limit (upstream's
    defaults: newest first)."""
    for key, column in (("name", "display_name"), ("volume_id",
                                                   "volume_id")):
        if key in params:
            transfers = [t for t in transfers
                         if getattr(t, column) == params[key]]
    key, direction = _sort(params)
    transfers.sort(key=lambda t: (getattr(t, key) is None,
                                  getattr(t, key) or ""),
                   reverse=direction == "desc")
    page = validation.paging(params)
    if page.get("marker"):
        ids = [t.id for t in transfers]
        if page["marker"] not in ids:
            raise exception.InvalidInput(
                reason="marker [%s] not found" % page["marker"])
        transfers = transfers[ids.index(page["marker"]) + 1:]
    offset = _offset(params.get("offset"))
    transfers = transfers[offset:]
    limit = page.get("limit")
    return (transfers[:limit] if limit is not None else transfers), limit


def _sort(params):
    sort = params.get("sort")
    key = params.get("sort_key", "created_at")
    direction = params.get("sort_dir", "desc")
    if sort:
        key, _, direction = sort.split(",")[0].partition(":")
        direction = direction or "desc"
    if key not in SORT_KEYS or direction not in ("asc", "desc"):
        raise exception.InvalidInput(
            reason="Invalid sort %s:%s; keys are %s, directions asc/desc."
            % (key, direction, ", ".join(sorted(SORT_KEYS))))
    return SORT_KEYS[key], direction


def _offset(value):
    if value is None:
        return 0
    if not str(value).isdigit() or len(str(value)) > 9:
        raise exception.InvalidInput(
            reason="offset param must be an integer >= 0")
    return int(value)


def _show(collection, transfer_id):
    validation.query(())
    transfer = _api().get(common.context(), _transfer_id(transfer_id))
    return flask.jsonify({"transfer": _detail(transfer, collection)})


def _delete(transfer_id):
    _api().delete(common.context(), _transfer_id(transfer_id))
    return "", 202


def _accept(collection, transfer_id):
    data = validation.body(accept_body, common.max_body())["accept"]
    transfer = _api().accept(common.context(), _transfer_id(transfer_id),
                             data["auth_key"])
    return flask.jsonify({"transfer": _summary(transfer, collection)}), 202


# --- os-volume-transfer (every microversion) ---


@bp.post("/" + LEGACY)
def create():
    return _create(LEGACY, create_body)


@bp.get("/" + LEGACY)
def index():
    return _list(LEGACY, detail=False)


@bp.get("/%s/detail" % LEGACY)
def detail():
    return _list(LEGACY, detail=True)


@bp.get("/%s/<transfer_id>" % LEGACY)
def show(transfer_id):
    return _show(LEGACY, transfer_id)


@bp.delete("/%s/<transfer_id>" % LEGACY)
def delete(transfer_id):
    return _delete(transfer_id)


@bp.post("/%s/<transfer_id>/accept" % LEGACY)
def accept(transfer_id):
    return _accept(LEGACY, transfer_id)


# --- volume-transfers (3.55+) ---


@bp.post("/" + NEW)
def create_v355():
    _new_route()
    return _create(NEW, create_body_v355)


@bp.get("/" + NEW)
def index_v355():
    _new_route()
    return _list(NEW, detail=False, paged=_paged())


@bp.get("/%s/detail" % NEW)
def detail_v355():
    _new_route()
    return _list(NEW, detail=True, paged=_paged())


def _paged():
    return common.version().matches(mv.SUPPORT_TRANSFER_PAGINATION)


@bp.get("/%s/<transfer_id>" % NEW)
def show_v355(transfer_id):
    _new_route()
    return _show(NEW, transfer_id)


@bp.delete("/%s/<transfer_id>" % NEW)
def delete_v355(transfer_id):
    _new_route()
    return _delete(transfer_id)


@bp.post("/%s/<transfer_id>/accept" % NEW)
def accept_v355(transfer_id):
    _new_route()
    return _accept(NEW, transfer_id)
