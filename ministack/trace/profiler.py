"""osprofiler in every daemon: the ``[profiler]`` section and the spans.

Each daemon calls :func:`setup` at start-up with its upstream service
name (``nova-api``, ``nova-compute``, ``cinder-api``). It reads
osprofiler's own ``[profiler]`` options (``enabled``, ``hmac_keys``,
``connection_string``, ``trace_sqlalchemy``...) and does what
``osprofiler.initializer.init_from_conf`` does: set the notifier, enable
the WSGI middleware with the HMAC keys. For an SQL connection string the
notifier is :class:`ministack.trace.storage.SQLAlchemyDriver` (osprofiler's
own cannot store on SQLAlchemy 2; and ``notifier.create`` would log the
URL, database password included); anything else (``otlp://``,
``jaeger://``, ``redis://``...) goes to ``init_from_conf`` unchanged.

A trace only exists in a thread where osprofiler's profiler was
initialised: by the WSGI middleware (a signed ``X-Trace-Info`` header),
or by the RPC context (:mod:`ministack.rpc` carries nova's
``trace_info``). Everywhere else :func:`span` does nothing but one
thread-local lookup, and the span's details (a callable) are never built.

Span info: osprofiler name = the category (``rpc``, ``cinder``,
``os_brick``, ``libvirt``, ``command``, ``db``); ``info["ministack"]``
holds ``kind`` (REST, CALL, CAST, LIBRARY, COMMAND, DB), ``name``,
``actor``, ``request_id`` and ``details``, which are masked here before
they are stored (:mod:`ministack.trace.hops` reads them), and the
daemon's ``service`` and ``host``.

The host: osprofiler itself stamps every notification's ``info["host"]``
with ``socket.gethostname()`` (the machine), and the notifier stores the
``host`` it was made with (``conf.host`` here) in the ``data`` table's
``host`` column. What names a compute host is neither the machine nor
the notifier but the daemon's ``[DEFAULT] host``: the RPC server name the
API casts ``attach_volume`` to, which several minicompute daemons of one
machine (``COMPUTE_HOSTS=2``: ``vm`` and ``compute2``) set apart. So
:func:`setup` keeps ``conf.host`` and every span records it as
``info["ministack"]["host"]`` (the WSGI entry span too,
:mod:`ministack.trace.middleware`); minicinder's spans also record
``volume_host``, cinder-volume's ``<host>@<volume_backend_name>``, for
its tgt commands and LVM calls (cinder-volume's hops).
"""

import logging

from oslo_config import cfg
from osprofiler import opts as profiler_opts
from osprofiler import profiler

LOG = logging.getLogger(__name__)

PROFILER_GROUP = "profiler"

# Set by setup(): statements are traced only when trace_sqlalchemy is on.
_STATE = {"sqlalchemy": False, "service": None, "host": None,
          "volume_host": None}


def register_opts(conf):
    """osprofiler's ``[profiler]`` options on ``conf`` (idempotent), and
    the groups its OTLP and Jaeger drivers read (osprofiler registers
    those on the global ``cfg.CONF`` only; a daemon's own ConfigOpts
    would make the driver fail with NoSuchOptError)."""
    profiler_opts.set_defaults(conf)
    conf.register_opts(profiler_opts._OTLP_OPTS,
                       group=profiler_opts._otlp_profiler_opt_group)
    conf.register_opts(profiler_opts._JAEGER_OPTS,
                       group=profiler_opts._jaegerprofiler_opt_group)


def list_opts():
    return [(PROFILER_GROUP, profiler_opts._PROFILER_OPTS)]


def setup(conf, project, service):
    """Initialise osprofiler for this daemon from ``[profiler]``.

    :param project: ``nova`` or ``cinder`` (osprofiler's project).
    :param service: ``nova-api``, ``nova-compute``, ``cinder-api``.
    :returns: whether tracing is enabled.
    """
    from osprofiler import initializer
    from osprofiler import notifier
    from osprofiler import requests as profiler_requests
    from osprofiler import web

    register_opts(conf)
    opts = conf.profiler
    _STATE["service"] = service
    _STATE["host"] = _conf_value(conf, "host")
    _STATE["volume_host"] = _volume_host(conf, service)
    if not opts.enabled:
        web.disable()
        _STATE["sqlalchemy"] = False
        return False
    from ministack.trace import storage
    if storage.is_sql_url(opts.connection_string):
        driver = storage.SQLAlchemyDriver(
            opts.connection_string, project=project, service=service,
            host=conf.host, conf=conf)
        notifier.set(driver.notify)
        web.enable(opts.hmac_keys)
        if opts.trace_requests:
            profiler_requests.enable()
        LOG.info("osprofiler is enabled, traces stored in the %s "
                 "database", opts.connection_string.partition("://")[0])
    else:
        initializer.init_from_conf(conf, None, project, service, conf.host)
    _STATE["sqlalchemy"] = bool(opts.trace_sqlalchemy)
    return True


def _conf_value(conf, name):
    """``conf.<name>`` as a string, or None (not registered, or unset)."""
    try:
        value = getattr(conf, name)
    except (AttributeError, cfg.Error):
        return None
    return str(value) if value else None


def _volume_host(conf, service):
    """cinder-volume's host, ``<host>@<volume_backend_name>`` (what
    ``openstack volume service list`` shows), in minicinder's daemon (it
    runs cinder-api and cinder-volume in one process); None elsewhere."""
    if not service.startswith("cinder"):
        return None
    host = _conf_value(conf, "host")
    backend = _conf_value(conf, "volume_backend_name")
    if host and backend:
        return "%s@%s" % (host, backend)
    return host


def host_info():
    """What every span records of the daemon that wrote it: ``host``
    (its ``[DEFAULT] host``) and, in minicinder, ``volume_host``."""
    info = {}
    if _STATE["host"]:
        info["host"] = _STATE["host"]
    if _STATE["volume_host"]:
        info["volume_host"] = _STATE["volume_host"]
    return info


def tracing():
    """Whether this thread is inside a trace."""
    return profiler.get() is not None


def mask(value):
    """``value`` with every secret masked (:func:`naming.mask`: oslo.utils'
    rules for password, auth_password, token, secret... keys, and
    ``--password VALUE`` in text and argv lists)."""
    from ministack.trace import naming
    return naming.mask(value)


def _request_id():
    from oslo_context import context as oslo_context
    ctxt = oslo_context.get_current()
    if ctxt is None:
        return None
    return getattr(ctxt, "global_request_id", None) or \
        getattr(ctxt, "request_id", None)


class span:
    """``with span("os_brick", "LIBRARY", "connect_volume (os-brick iSCSI)",
    actor="os-brick", details=lambda: {...}) as sp:``

    A no-op outside a trace. ``details`` is a callable so nothing is
    built when not tracing; its result is masked. ``sp.set(status=...,
    details_more=...)`` adds to the stop notification;
    ``sp.failed_with(exc)`` names the error the span records when the
    exception leaving the block only wraps it.
    """

    __slots__ = ("category", "kind", "name", "actor", "details",
                 "active", "stop_info", "error")

    def __init__(self, category, kind, name, actor=None, details=None):
        self.category = category
        self.kind = kind
        self.name = name
        self.actor = actor
        self.details = details
        self.active = False
        self.stop_info = None
        self.error = None

    def __enter__(self):
        if profiler.get() is None:
            return self
        self.active = True
        own = {"kind": self.kind, "name": mask(str(self.name)),
               "request_id": _request_id()}
        if self.actor:
            own["actor"] = self.actor
        if _STATE["service"]:
            own["service"] = _STATE["service"]
        own.update(host_info())
        if self.details is not None:
            try:
                details = self.details() if callable(self.details) \
                    else self.details
                own["details"] = mask(dict(details or {}))
            except Exception:  # a span must never break the traced call
                LOG.debug("Cannot build the details of span %s",
                          self.name, exc_info=True)
        profiler.start(self.category, info={"ministack": own})
        return self

    def set(self, **values):
        """Values for the stop notification (``status=200``...)."""
        if self.active:
            self.stop_info = dict(self.stop_info or {}, **mask(values))

    def failed_with(self, exc):
        """Record ``exc`` as the span's error: what a wrapper leaving the
        block stands for (oslo.messaging's ExpectedException)."""
        if self.active:
            self.error = exc

    def __exit__(self, etype, value, _tb):
        if not self.active:
            return False
        info = {}
        if self.stop_info:
            info["ministack"] = self.stop_info
        if etype is not None:
            shown = self.error if self.error is not None else value
            info["etype"] = type(shown).__name__
            info["message"] = mask(str(shown))[:500]
        profiler.stop(info=info)
        return False


def traced(category, kind, name, actor=None, details=None):
    """Decorator form of :class:`span` (``details(*args, **kwargs)``)."""
    import functools

    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if profiler.get() is None:
                return func(*args, **kwargs)
            build = None
            if details is not None:
                def build():
                    return details(*args, **kwargs)
            with span(category, kind, name, actor=actor, details=build):
                return func(*args, **kwargs)
        return wrapper
    return decorator


def carried(func):
    """``func`` for another thread (an executor's) to run in this
    thread's trace, its spans children of the current one: what the RPC
    context's ``trace_info`` does across a message
    (:class:`ministack.rpc.RequestContextSerializer`). minicinder's
    volume manager runs an extend in its pool this way, so the trace of
    the ``os-extend`` request goes on through the backend and Nova.

    Outside a trace: ``func`` itself. The worker thread's trace is
    cleaned after ``func`` (a pooled thread must not keep it).
    """
    import functools

    prof = profiler.get()
    if prof is None:
        return func
    info = {"hmac_key": prof.hmac_key, "base_id": prof.get_base_id(),
            "parent_id": prof.get_id()}

    @functools.wraps(func)
    def run(*args, **kwargs):
        # init() keeps a profiler the thread already has: clean first.
        profiler.clean()
        profiler.init(**info)
        try:
            return func(*args, **kwargs)
        finally:
            profiler.clean()
    return run


# --- SQL statements (trace_sqlalchemy) ---------------------------------------

def _before_execute(conn, cursor, statement, parameters, context,
                    executemany):
    if profiler.get() is None:
        return
    # The statement only: parameters hold connection_info (CHAP secrets).
    text = " ".join(str(statement).split())
    own = {"kind": "DB", "name": " ".join(text.split()[:3])[:60],
           "statement": text[:1000], "service": _STATE["service"]}
    own.update(host_info())
    profiler.start("db", info={"ministack": own})
    context._ministack_traced = True


def _after_execute(conn, cursor, statement, parameters, context,
                   executemany):
    if getattr(context, "_ministack_traced", False):
        context._ministack_traced = False
        profiler.stop()


def _on_error(exception_context):
    ctx = exception_context.execution_context
    if ctx is not None and getattr(ctx, "_ministack_traced", False):
        ctx._ministack_traced = False
        profiler.stop(info={"etype": type(
            exception_context.original_exception).__name__,
            "message": mask(str(exception_context.original_exception))[:300]})


def trace_engine(engine):
    """Trace ``engine``'s statements when ``trace_sqlalchemy`` is on
    (called by :func:`ministack.db.get_engine`'s users after setup)."""
    if not _STATE["sqlalchemy"]:
        return engine
    import sqlalchemy as sa
    sa.event.listen(engine, "before_cursor_execute", _before_execute)
    sa.event.listen(engine, "after_cursor_execute", _after_execute)
    sa.event.listen(engine, "handle_error", _on_error)
    return engine
