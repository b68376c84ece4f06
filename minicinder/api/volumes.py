"""``/v3/{project_id}/volumes``: create, list, show, update, delete,
and the 3.12 summary."""

import ast

import flask
from oslo_utils import timeutils

from minicinder import exception
from minicinder.api import common
from minicinder.api import microversions as mv
from minicinder.api import schemas
from minicinder.api import validation
from minicinder.api import views
from minicinder.volume import image as volume_image
from minicinder.volume import states
from ministack import json_text

bp = flask.Blueprint("volumes", __name__, url_prefix="/v3/<project_id>")

# Query parameters GET /volumes(/detail) accepts.
LIST_PARAMS = ("name", "status", "all_tenants", "project_id", "bootable",
               "availability_zone", "metadata", "limit", "marker", "sort",
               "sort_key", "sort_dir", "with_count")
# 3.60: time comparisons; 3.65: the consumes_quota filter.
TIME_FILTERS = ("created_at", "updated_at")
TIME_OPERATORS = ("gt", "gte", "eq", "neq", "lt", "lte")
SORT_KEYS = {"created_at": "created_at", "updated_at": "updated_at",
             "id": "id", "name": "display_name", "status": "status",
             "size": "size"}
# Sources a volume could be created from that never exist here (no
# snapshots, backups or groups are made): naming one is a 404, as
# upstream answers for a missing one.
ABSENT_SOURCES = {
    "snapshot_id": lambda v: exception.SnapshotNotFound(snapshot_id=v),
    "backup_id": lambda v: exception.BackupNotFound(backup_id=v),
    "group_id": lambda v: exception.GroupNotFound(group_id=v),
    "consistencygroup_id": lambda v: exception.ConsistencyGroupNotFound(
        consistencygroup_id=v),
}


bp.url_value_preprocessor(common.drop_project)
_ctx = common.context


def _not_found(volume_id):
    return exception.VolumeNotFound(volume_id=volume_id)


@bp.post("/volumes")
def create():
    """202 with the volume in ``creating``; the backend job runs after."""
    svc = common.services()
    data = validation.body(schemas.volume_create,
                           common.max_body())["volume"]
    source = _check_sources(svc, data)
    if data.get("multiattach"):
        raise exception.InvalidInput(
            reason="The multiattach parameter is no longer supported; use "
                   "a volume type with the extra spec "
                   "multiattach=\"<is> True\".")
    if source is not None:
        size = _clone_size(data.get("size"), source)
        _check_clone_zone(data.get("availability_zone"), source)
    else:
        size = _size(data.get("size"))
    image = None
    if data.get("imageRef") is not None:
        image = volume_image.get(svc.conf, _ctx(), data["imageRef"])
        volume_image.check_fits(image, size)
    volume = svc.volumes.create(
        _ctx(), size,
        name=data.get("name", data.get("display_name")),
        description=data.get("description",
                             data.get("display_description")),
        volume_type=data.get("volume_type"),
        metadata=data.get("metadata"),
        availability_zone=data.get("availability_zone"), image=image,
        source=source)
    return flask.jsonify({"volume": views.volume_detail(
        volume, _ctx(), common.version(), extended=False)}), 202


# The sources a volume is made from: one at most (upstream's names).
EXCLUSIVE_SOURCES = ("snapshot_id", "source_volid", "imageRef", "backup_id")


def _check_sources(svc, data):
    """404 for a source that does not exist; 400 for more than one, or a
    volume to clone that is not ``available`` or ``in-use``. Images are
    checked by the caller.

    :returns: the volume to clone (a read record), or None.
    """
    named = [key for key in EXCLUSIVE_SOURCES if data.get(key) is not None]
    if len(named) > 1:
        raise exception.InvalidInput(
            reason="May specify only one of %s" % ", ".join(named))
    for key, not_found in ABSENT_SOURCES.items():
        if data.get(key) is not None:
            raise not_found(data[key])
    if data.get("source_volid") is None:
        return None
    source = svc.volumes.get(_ctx(), validation.uuid_arg(
        data["source_volid"], _not_found))
    if source.status not in states.CLONEABLE:
        raise exception.InvalidVolume(
            reason="Originating source volume status must be one of "
                   "'%s' values" % ", ".join(states.CLONEABLE))
    return source


def _clone_size(value, source):
    """The clone's size: the source's unless given; never smaller."""
    if value is None:
        return source.size
    size = _size(value)
    if size < source.size:
        raise exception.InvalidInput(
            reason="Volume size '%s'GB cannot be smaller than original "
                   "volume size %sGB. They must be >= original volume "
                   "size." % (size, source.size))
    return size


def _check_clone_zone(zone, source):
    if zone is not None and zone != source.availability_zone:
        raise exception.InvalidInput(
            reason="Volume must be in the same availability zone as the "
                   "source volume")


def _size(value):
    """The requested size in GiB, 1 to the schema's maximum.

    The schema lets a string of digits of any length through (its
    ``maximum`` binds integers only); one longer than the maximum is
    refused before ``int()``, which gives up past 4300 digits.

    :raises InvalidInput: upstream's message for a size that is missing
        or not a positive integer it can use (``volume/api.py`` create).
    """
    digits = "" if value is None else str(value).lstrip("0")
    maximum = schemas.volume_size["maximum"]
    if not digits or len(digits) > len(str(maximum)) or \
            int(digits) > maximum:
        raise exception.InvalidInput(
            reason="Invalid volume size provided for create request: %s "
                   "(size argument must be an integer (or string "
                   "representation of an integer) and greater than zero)."
                   % json_text.shown(value))
    return int(digits)


def _list(detail):
    svc = common.services()
    ctx = _ctx()
    params = validation.query(_list_params())
    _version_filters(params)
    page = validation.paging(params)
    # A non-admin's all_tenants is ignored, as upstream: it lists its
    # own project's volumes.
    all_tenants = validation.boolean(params.pop("all_tenants", False),
                                     "all_tenants") and ctx.is_admin
    with_count = validation.boolean(params.pop("with_count", False),
                                    "with_count") and \
        common.version().matches(mv.SUPPORT_COUNT_INFO)
    if "project_id" in params and not all_tenants:
        raise exception.InvalidInput(
            reason="project_id is only valid with all_tenants for admins")
    if "bootable" in params:
        params["bootable"] = validation.boolean(params["bootable"],
                                                "bootable")
    if "metadata" in params:
        params["metadata"] = _metadata_filter(params["metadata"])
    sort_key, sort_dir = _sort(params)
    volumes = svc.volumes.get_all(ctx, params, all_tenants,
                                  sort_key=sort_key, sort_dir=sort_dir,
                                  **page)
    body = views.volume_list(volumes, ctx, common.version(), detail,
                             page.get("limit"))
    if with_count:
        body["count"] = len(svc.volumes.get_all(ctx, params, all_tenants))
    return flask.jsonify(body)


def _list_params(base=LIST_PARAMS):
    version = common.version()
    extra = TIME_FILTERS if version.matches(
        mv.VOLUME_TIME_COMPARISON_FILTER) else ()
    if version.matches(mv.USE_QUOTA) and base is LIST_PARAMS:
        extra += ("consumes_quota",)
    return base + extra


def _version_filters(params):
    """Parse the 3.60 time and 3.65 consumes_quota filters in place."""
    for key in TIME_FILTERS:
        if key in params:
            params[key] = _time_filter(key, params[key])
    if "consumes_quota" in params:
        params["consumes_quota"] = validation.boolean(
            params["consumes_quota"], "consumes_quota")


def _time_filter(key, text):
    """``gte:2026-01-01T00:00:00[,lt:...]`` as ``{operator: naive UTC}``,
    as upstream's ``_handle_time_comparison_filters`` reads it.

    :raises InvalidInput: an unknown operator or a time that is not ISO
        8601 (400).
    """
    comparisons = {}
    for unit in text.split(","):
        operator, sep, when = unit.partition(":")
        if not sep:
            raise exception.InvalidInput(reason="Invalid %s value" % key)
        if operator not in TIME_OPERATORS:
            raise exception.InvalidInput(
                reason="Invalid %s operator" % json_text.shown(operator))
        try:
            parsed = timeutils.normalize_time(timeutils.parse_isotime(when))
        except ValueError:
            raise exception.InvalidInput(
                reason="Invalid %s value" % json_text.shown(when)) from None
        comparisons[operator] = parsed
    return comparisons


def _metadata_filter(text):
    """``metadata={'k': 'v'}``: a Python dict literal, as upstream reads
    it (``ast.literal_eval``), of string keys and values.

    :raises InvalidInput: anything else.
    """
    try:
        value = ast.literal_eval(text) if len(text) <= 4096 else None
    except (ValueError, SyntaxError, TypeError, MemoryError,
            RecursionError):
        value = None
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str)
            for k, v in value.items()):
        raise exception.InvalidInput(
            reason="Invalid metadata filter %s: it must be a dict of "
                   "strings, such as {'key': 'value'}." % text[:100])
    return value


def _sort(params):
    """``sort=key:dir`` or ``sort_key``/``sort_dir``; first key only."""
    sort = params.pop("sort", None)
    key = params.pop("sort_key", "created_at")
    direction = params.pop("sort_dir", "desc")
    if sort:
        first = sort.split(",")[0]
        key, _, direction = first.partition(":")
        direction = direction or "desc"
    if key not in SORT_KEYS or direction not in ("asc", "desc"):
        raise exception.InvalidInput(
            reason="Invalid sort %s:%s; keys are %s, directions asc/desc."
            % (key, direction, ", ".join(sorted(SORT_KEYS))))
    return SORT_KEYS[key], direction


@bp.get("/volumes")
def index():
    return _list(detail=False)


@bp.get("/volumes/detail")
def detail():
    return _list(detail=True)


@bp.get("/volumes/summary")
def summary():
    """Count, total size and (3.36+) the metadata of the volumes."""
    common.require_version(mv.VOLUME_SUMMARY)
    ctx = _ctx()
    params = validation.query(_list_params(("all_tenants",)))
    _version_filters(params)
    all_tenants = validation.boolean(params.pop("all_tenants", False),
                                     "all_tenants")
    count, size, metadata = common.services().volumes.summary(
        ctx, all_tenants, params)
    body = {"total_size": size, "total_count": count}
    if common.version().matches(mv.VOLUME_SUMMARY_METADATA):
        body["metadata"] = metadata
    return flask.jsonify({"volume-summary": body})


@bp.get("/volumes/<volume_id>")
def show(volume_id):
    validation.query(())
    validation.uuid_arg(volume_id, _not_found)
    volume = common.services().volumes.get(_ctx(), volume_id)
    return flask.jsonify({"volume": views.volume_detail(
        volume, _ctx(), common.version())})


@bp.put("/volumes/<volume_id>")
def update(volume_id):
    svc = common.services()
    validation.uuid_arg(volume_id, _not_found)
    data = validation.body(schemas.volume_update,
                           common.max_body())["volume"]
    values = {}
    for new, old, column in (("name", "display_name", "display_name"),
                             ("description", "display_description",
                              "display_description")):
        if new in data or old in data:
            values[column] = data.get(new, data.get(old))
    if "metadata" in data:
        raise exception.InvalidInput(
            reason="Updating metadata here is not supported; use the "
                   "volume metadata API.")
    volume = svc.volumes.update(_ctx(), volume_id, values)
    return flask.jsonify({"volume": views.volume_detail(
        volume, _ctx(), common.version(), extended=False)})


@bp.delete("/volumes/<volume_id>")
def delete(volume_id):
    """202; the volume goes ``deleting`` and disappears once wiped."""
    validation.query(("cascade", "force"))
    validation.uuid_arg(volume_id, _not_found)
    common.services().volumes.delete(_ctx(), volume_id)
    return "", 202
