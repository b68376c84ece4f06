"""The compute API WSGI application: ``create_app(conf, ...)``.

Request path through the WSGI stack::

    ContextMiddleware      body size limit (413), request context
                           (noauth, or keystonemiddleware's auth_token
                           and the context from its headers),
                           x-openstack-request-id and
                           x-compute-request-id on every response
    ProjectURLMiddleware   /v2.1/{project_id}/servers -> /v2.1/servers
    Flask                  microversion negotiation and the URL
                           project check (before_request), blueprints,
                           fault rendering, version headers

Every collaborator is injectable so unit tests run the real app
in-process: ``transport`` (``fake:/``), ``engine`` (in-memory SQLite),
``volume_api`` (a fake Cinder), ``compute_rpcapi``.
"""

import re

import flask

from miniapi.api import aggregates
from miniapi.api import availability_zones
from miniapi.api import console_output  # noqa: F401 (registers its action)
from miniapi.api import extensions
from miniapi.api import faults
from miniapi.api import flavor_access
from miniapi.api import flavor_extra_specs
from miniapi.api import flavor_manage
from miniapi.api import flavors
from miniapi.api import hypervisors
from miniapi.api import images
from miniapi.api import instance_actions
from miniapi.api import ips
from miniapi.api import limits
from miniapi.api import live_migrate  # noqa: F401 (registers its action)
from miniapi.api import microversion
from miniapi.api import migrate_server  # noqa: F401 (registers its action)
from miniapi.api import migrations
from miniapi.api import ministack_faults
from miniapi.api import pause_suspend  # noqa: F401 (registers its actions)
from miniapi.api import rebuild  # noqa: F401 (registers its action)
from miniapi.api import resize  # noqa: F401 (registers its actions)
from miniapi.api import server_external_events
from miniapi.api import server_metadata
from miniapi.api import server_migration_actions
from miniapi.api import server_migrations
from miniapi.api import servers
from miniapi.api import services
from miniapi.api import shelve  # noqa: F401 (registers its actions)
from miniapi.api import versions
from miniapi.api import volume_attachments
from miniapi.api import volumes
from miniapi.compute import api as compute_api
from miniapi.compute import faults as compute_faults
from minicompute import rpcapi as compute_rpcapi_mod
from minicompute.db import api as db_api
from minicompute.volume import cinder
from ministack import config as ms_config
from ministack import db
from ministack import exception as ms_exception
from ministack import rpc
from ministack import wsgi
from ministack.trace import middleware as trace_middleware
from ministack.trace import profiler as trace_profiler

# First path segments after /v2.1/ that are collections, not project ids.
COLLECTIONS = ("servers", "flavors", "os-services", "images", "limits",
               "extensions", "os-instance-actions", "os-volumes",
               "os-availability-zone", "os-hypervisors", "os-aggregates",
               "os-server-external-events",
               "os-ministack-faults")

# A project segment must be followed by a resource path: /v2.1/<x> alone
# is an unknown route (404), not an empty project URL.
_PROJECT_RE = r"^/v2\.1/(?!(?:%s)(?:/|$))([^/]+)(?=/.)" % "|".join(
    re.escape(c) for c in COLLECTIONS)

ENV_URL_PROJECT = "miniapi.url_project_id"


class ProjectURLMiddleware:
    """Serve legacy ``/v2.1/{project_id}/...`` URLs on the same routes.

    Clients may use either form (nova's catalog used to carry the project
    id). The project was already read by ContextMiddleware; here it is
    removed from the path and remembered, so links keep the caller's form
    and ``_check_url_project`` can refuse another project's.
    """

    def __init__(self, app):
        self.app = app
        self.regex = re.compile(_PROJECT_RE)

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        match = self.regex.match(path)
        if match:
            project = match.group(1)
            environ[ENV_URL_PROJECT] = project
            rest = path[len("/v2.1/") + len(project):]
            environ["PATH_INFO"] = "/v2.1" + rest
        return self.app(environ, start_response)


def create_app(conf, transport=None, engine=None, volume_api=None,
               compute_rpcapi=None):
    """Build the Flask app for ``conf`` (options registered and parsed).

    With ``[api] auth_strategy = keystone`` tokens are validated by
    keystonemiddleware, configured by ``[keystone_authtoken]``.

    :raises ministack.exception.ConfigError: the database or broker URL is
        unusable, or ``[keystone_authtoken]`` is (keystone).
    """
    if engine is None:
        engine = db.make_engine(ms_config.database_url(conf, "nova"),
                                conf.database.connect_timeout)
    db_api.configure(engine)
    if compute_rpcapi is None:
        transport = transport or rpc.get_transport(conf)
        compute_rpcapi = compute_rpcapi_mod.ComputeAPI(
            transport, timeout=conf.rpc_call_timeout)
    if volume_api is None:
        volume_api = cinder.API(conf)

    app = flask.Flask("miniapi")
    app.config["COMPUTE_API"] = compute_api.API(
        volume_api, compute_rpcapi, down_time=conf.api.service_down_time,
        image_dir=conf.api.image_dir,
        allow_resize_to_same_host=conf.allow_resize_to_same_host)
    # ministack-fault's extension (miniapi.api.ministack_faults).
    app.config["FAULT_OPERATIONS"] = compute_faults.FaultOperations(
        volume_api, compute_rpcapi, conf.api.service_down_time,
        conf.rpc_call_timeout)
    app.config["MAX_LIMIT"] = conf.api.max_limit
    app.config["INSTANCE_NAME_TEMPLATE"] = conf.instance_name_template
    app.json.sort_keys = False
    app.url_map.strict_slashes = False
    # No redirect for "//": its Location would echo any long path back.
    app.url_map.merge_slashes = False

    for blueprint in (versions.bp, servers.bp, volume_attachments.bp,
                      instance_actions.bp, flavors.bp, flavor_manage.bp,
                      flavor_access.bp, flavor_extra_specs.bp, services.bp,
                      images.bp, ips.bp, limits.bp, extensions.bp,
                      availability_zones.bp, volumes.bp, hypervisors.bp,
                      server_external_events.bp, server_metadata.bp,
                      aggregates.bp, migrations.bp, server_migrations.bp,
                      server_migration_actions.bp,
                      ministack_faults.bp):
        app.register_blueprint(blueprint)
    faults.register(app)
    app.before_request(_before_request)
    app.after_request(_after_request)

    # osprofiler's entry span and nova's access log wrap everything, the
    # 401s and 413s of the context middleware included.
    trace_profiler.setup(conf, "nova", "nova-api")
    app.wsgi_app = trace_middleware.wrap(wsgi.ContextMiddleware(
        ProjectURLMiddleware(app.wsgi_app), project_re=_PROJECT_RE,
        extra_request_id_headers=("x-compute-request-id",),
        auth_strategy=conf.api.auth_strategy, conf=conf,
        max_request_body_size=ms_config.max_request_body_size(conf)))
    return app


def _versioned(path):
    return path == "/v2.1" or path.startswith("/v2.1/")


def _before_request():
    request = flask.request
    flask.g.url_project_id = request.environ.get(ENV_URL_PROJECT)
    ctxt = wsgi.get_context(request)
    if ctxt.project_id is None and ctxt.user_id is not None:
        # nova's noauth2: a token without a project acts in the project
        # named after the user.
        ctxt.project_id = ctxt.user_id
    if _versioned(request.path):
        flask.g.api_version = microversion.negotiate(request.headers)
    _check_url_project(request, ctxt)


def _check_url_project(request, ctxt):
    """nova's ``Resource._process_stack``: on a route that matched, a
    legacy URL's project must be the context's, whoever asks (400)."""
    url_project = flask.g.url_project_id
    if request.url_rule is not None and \
            wsgi.url_project_mismatch(ctxt, url_project):
        raise ms_exception.Invalid(
            message="Malformed request URL: URL's project_id '%s' doesn't "
                    "match Context's project_id '%s'"
                    % (url_project, ctxt.project_id))


def _after_request(response):
    version = flask.g.get("api_version")
    if version is not None:
        microversion.add_headers(response, version)
    return response
