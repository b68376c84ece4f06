"""Domain exceptions -> HTTP fault bodies, in one place.

Every ``MinistackException`` carries its HTTP status in ``code`` (the
minicompute exceptions are 400/403/404/409 subclasses), so the mapping is
the exception's own; this module only renders upstream's body
``{"itemNotFound": {"code": 404, "message": "..."}}``. Exceptions that
arrive over RPC from minicompute are rebuilt as the same classes by
oslo.messaging, so they map the same way. Anything else is a bug: it is
logged with its traceback and answered with 500 ``computeFault`` (the
message never leaks internals).
"""

import logging

import oslo_messaging as messaging
from werkzeug import exceptions as wz_exceptions

from ministack import exception
from ministack import wsgi

LOG = logging.getLogger(__name__)

_HTTP_MESSAGES = {
    404: "The resource could not be found.",
    405: "The method is not allowed for the requested URL.",
}


def register(app):
    """Install the error handlers on the Flask app."""
    app.register_error_handler(exception.MinistackException,
                               _domain_error)
    app.register_error_handler(wz_exceptions.HTTPException, _http_error)
    app.register_error_handler(messaging.MessagingTimeout, _rpc_timeout)
    app.register_error_handler(Exception, _unexpected)


def _domain_error(exc):
    code = getattr(exc, "code", 500) or 500
    if code >= 500:
        LOG.error("Compute API failure: %s", exc.format_message())
        return wsgi.fault(500, "Unexpected API Error. %s"
                          % exc.format_message())
    return wsgi.fault(code, exc.format_message())


def _http_error(exc):
    code = exc.code or 500
    message = getattr(exc, "fault_message", None) or \
        _HTTP_MESSAGES.get(code) or exc.description
    return wsgi.fault(code, message)


def _rpc_timeout(exc):
    LOG.warning("RPC call timed out: %s", exc)
    return wsgi.fault(409, "The compute service did not answer in time; "
                           "the operation was rolled back: %s" % exc)


def _unexpected(exc):
    LOG.exception("Unexpected API error")
    return wsgi.fault(500, "Unexpected API Error. Please report this at "
                           "the ministack issue tracker and attach the "
                           "miniapi log if possible. <class '%s'>"
                      % type(exc).__name__)


def bad_request(message):
    """An HTTP 400 carrying ``message`` in the fault body."""
    return exception.Invalid(message=message)
