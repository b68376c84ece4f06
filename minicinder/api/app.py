"""The Flask application: microversions, headers, faults and routes.

:func:`create_app` takes its collaborators (the volume API objects and the
config) as arguments so tests build it in-process with the fake driver and
an in-memory database, and wraps it in ``ministack.wsgi.ContextMiddleware``
(request context and ``x-openstack-request-id`` on every response).
"""

import functools
import logging
import time
import types

import flask
import werkzeug.exceptions

from minicinder import exception
from minicinder.api import attachments
from minicinder.api import availability_zones
from minicinder.api import common
from minicinder.api import extensions
from minicinder.api import limits
from minicinder.api import microversions as mv
from minicinder.api import quota_sets
from minicinder.api import services
from minicinder.api import transfers
from minicinder.api import type_access
from minicinder.api import versions
from minicinder.api import volume_actions
from minicinder.api import volume_metadata
from minicinder.api import volume_types
from minicinder.api import volumes
from minicinder.volume import metadata as metadata_api
from minicinder.volume import quota_api
from minicinder.volume import reimage
from minicinder.volume import service_api
from minicinder.volume import transfer_api
from minicinder.volume import type_api
from ministack import config
from ministack import microversion
from ministack import wsgi

LOG = logging.getLogger(__name__)

_GENERIC_500 = ("The server has either erred or is incapable of performing "
                "the requested operation.")


def create_app(conf, volume_api, attachment_api, actions):
    """Build the WSGI app (already wrapped in the context middleware).

    The metadata, services and quota APIs are built here on the volume
    API's database.

    With ``auth_strategy = keystone`` keystonemiddleware validates the
    tokens, configured by ``[keystone_authtoken]`` (a ConfigError when it
    cannot be).
    """
    app = _Flask("minicinder")
    app.json.sort_keys = False
    max_body = config.max_request_body_size(conf)
    database = getattr(volume_api, "database", None)
    app.extensions[common.EXTENSION] = types.SimpleNamespace(
        conf=conf, volumes=volume_api, attachments=attachment_api,
        actions=actions, max_body=max_body,
        metadata=metadata_api.VolumeMetadataAPI(database),
        volume_types=type_api.VolumeTypeAPI(database, conf),
        service_api=service_api.ServiceAPI(database, conf),
        quotas=quota_api.QuotaAPI(database, conf),
        transfers=transfer_api.TransferAPI(database, conf),
        reimager=reimage.VolumeReimager(
            database, getattr(volume_api, "manager", None)))
    # Upstream's routes have no trailing slash: /volumes/ is a 404 (not
    # the list), except version discovery (versions.py takes both).
    app.url_map.strict_slashes = True
    app.url_map.merge_slashes = False
    for blueprint in (versions.bp, volumes.bp, volume_types.bp,
                      attachments.bp, volume_actions.bp, volume_metadata.bp,
                      limits.bp, extensions.bp, availability_zones.bp,
                      services.bp, quota_sets.bp, type_access.bp,
                      transfers.bp):
        app.register_blueprint(blueprint)
    # One hook doing the three steps in upstream's order: Flask pays
    # its per-hook dispatch once per request, not three times.
    app.before_request(_noauth_before_request
                       if conf.auth_strategy == "noauth"
                       else _before_request)
    app.after_request(_version_headers)
    app.register_error_handler(exception.base.MinistackException,
                               _domain_fault)
    app.register_error_handler(werkzeug.exceptions.HTTPException,
                               _http_fault)
    app.register_error_handler(Exception, _unexpected_fault)
    return wsgi.ContextMiddleware(app, project_re=r"^/v3/([^/]+)",
                                  auth_strategy=conf.auth_strategy,
                                  conf=conf,
                                  max_request_body_size=max_body)


class _Flask(flask.Flask):
    """Flask, minus a per-call check that never changes its answer.

    Flask asks ``ensure_sync`` of every hook and view on every request
    whether it is a coroutine function (``inspect`` walking the function
    each time). The answer for a plain function never changes, so it is
    remembered per function; anything else (a coroutine function, a
    bound method, a partial) still gets Flask's own answer each time.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._sync_functions = {}

    def ensure_sync(self, func):
        cached = self._sync_functions.get(func)
        if cached is not None:
            return cached
        synced = super().ensure_sync(func)
        if synced is func and type(func) is types.FunctionType:
            self._sync_functions[func] = func
        return synced


def _before_request():
    """The microversion, then the URL's project (cinder's order)."""
    _negotiate_version()
    _check_url_project()


def _noauth_before_request():
    """noauth: the service-token flag first, as a separate hook did."""
    _noauth_service_token()
    _negotiate_version()
    _check_url_project()


def _noauth_service_token():
    """noauth: a request carrying ``X-Service-Token`` comes from a service.

    With keystone the token is verified and must carry the ``service``
    role; noauth trusts the caller anyway, so the header's presence says
    what nova's service token would (the ``service`` role in ``X-Roles``
    already sets ``is_service`` in the middleware).
    """
    if flask.request.headers.get("X-Service-Token"):
        common.context().is_service = True


def _negotiate_version():
    flask.g.start = time.monotonic()
    flask.g.api_version = mv.MIN
    if flask.request.path in ("", "/"):
        return  # discovery is version-less upstream
    requested = microversion.header_value(flask.request.headers, "volume")
    flask.g.api_version = _negotiate(requested)


def _check_url_project():
    """400 "Malformed request url" when the project in a matched route's
    URL is not the caller's (cinder's ``Resource._process_stack``; admins
    included: an admin reaches other projects' volumes by id, or lists
    them with ``all_tenants``, on its own project's URL)."""
    url_project = flask.g.get("url_project_id")
    ctxt = common.context()
    if wsgi.url_project_mismatch(ctxt, url_project):
        LOG.info("Refused: URL project %s is not the token's (%s)",
                 url_project, ctxt.project_id)
        raise exception.Invalid(message="Malformed request url")


@functools.lru_cache(maxsize=64)
def _negotiate(requested):
    """Clients send the same few header values over and over: parse each
    once. Only successes are cached (a 400/406 raises every time), and the
    APIVersion objects handed out are never mutated."""
    return microversion.negotiate(requested, mv.MIN, mv.MAX)


def _version_headers(response):
    """The version headers, then cinder's access-log line (built only
    when INFO is logged: a full path and a length cost something)."""
    g = flask.g._get_current_object()
    headers = response.headers
    headers["OpenStack-API-Version"] = "volume %s" % \
        g.get("api_version", mv.MIN)
    headers["Vary"] = "OpenStack-API-Version"
    if LOG.isEnabledFor(logging.INFO):
        started = g.get("start")
        request = flask.request._get_current_object()
        LOG.info('"%s %s" status: %s len: %s microversion: %s time: %.4f',
                 request.method, request.full_path.rstrip("?"),
                 response.status_code, response.content_length,
                 g.get("api_version"),
                 time.monotonic() - started if started else 0)
    return response


def _domain_fault(exc):
    if exc.code >= 500:
        LOG.error("%s failed: %s", flask.request.path, exc.format_message())
    return wsgi.fault(exc.code, exc.format_message())


def _http_fault(exc):
    """Routing errors (unknown path 404, wrong method 405) as faults."""
    return wsgi.fault(exc.code, exc.description or exc.name)


def _unexpected_fault(exc):
    LOG.exception("Unexpected error serving %s %s", flask.request.method,
                  flask.request.path)
    return wsgi.fault(500, _GENERIC_500)
