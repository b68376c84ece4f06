"""cinderclient's and keystoneauth's errors -> domain exceptions, once.

Used by ``minicompute.volume.cinder`` (nova's ``translate_*_exception``
decorators). cinderclient raises its ``ClientException`` subclasses for
an HTTP status >= 400; keystoneauth raises its own when there is no
answer or the service account's token cannot be had. Here: 404s become
the "not found" of the thing asked about, 400 is InvalidInput, 403 and
413 (over quota) are Forbidden, 409 is Conflict, and an unreachable
Cinder is CinderConnectionFailed, as is any other status ("Cinder
answered 500: ..."). Nothing else sees the clients' exceptions.
"""

import functools

from cinderclient import exceptions as cinder_exception
from keystoneauth1 import exceptions as ks_exception

from minicompute import exception
from ministack import exception as ms_exception

#: What the clients raise; translated by :func:`translate`.
CLIENT_ERRORS = (cinder_exception.ClientException,
                 ks_exception.ClientException)


def _reason(exc):
    return getattr(exc, "message", None) or str(exc)


def _translate_http(exc):
    """Map Cinder's answer when the status has no resource meaning."""
    reason = _reason(exc)
    if exc.code == 400:
        return ms_exception.InvalidInput(reason=reason)
    if exc.code in (403, 413):
        # Over Cinder's quota is a 403 from nova, as upstream's
        # translate_volume_exception makes it.
        return ms_exception.Forbidden(reason)
    if exc.code == 409:
        return ms_exception.Conflict(reason=reason)
    if exc.code == 404:
        return ms_exception.NotFound(reason)
    return exception.CinderConnectionFailed(
        reason="Cinder answered %s: %s" % (exc.code, reason))


def _translate_common(exc):
    """Map a client exception that has no resource-specific meaning."""
    if isinstance(exc, cinder_exception.ClientException):
        return _translate_http(exc)
    if isinstance(exc, (ks_exception.ConnectionError,
                        ks_exception.RequestTimeout)):
        return exception.CinderConnectionFailed(reason=_reason(exc))
    # keystoneauth's other errors (the service account was refused...).
    return exception.CinderConnectionFailed(
        reason="Cinder answered %s: %s" % (getattr(exc, "http_status", None),
                                           _reason(exc)))


def translate(not_found=None):
    """Decorator: translate client errors once, keeping the traceback.

    :param not_found: builds the domain exception for a 404 from the
        decorated method's arguments (``self, ctxt, <id>, ...``).
    """
    def decorator(method):
        @functools.wraps(method)
        def wrapper(self, ctxt, *args, **kwargs):
            try:
                return method(self, ctxt, *args, **kwargs)
            except CLIENT_ERRORS as exc:
                if (not_found is not None and
                        isinstance(exc, cinder_exception.NotFound)):
                    raise not_found(args[0]) from exc
                raise _translate_common(exc) from exc
        return wrapper
    return decorator


def volume_not_found(volume_id):
    return exception.VolumeNotFound(volume_id=volume_id)


def attachment_not_found(attachment_id):
    return exception.VolumeAttachmentNotFound(attachment_id=attachment_id)


def retriable(exc):
    """5xx that may pass, or no answer at all: worth another try."""
    if isinstance(exc, cinder_exception.ClientException):
        return exc.code in (500, 502, 503, 504)
    return isinstance(exc, (ks_exception.ConnectFailure,
                            ks_exception.ConnectTimeout,
                            ks_exception.RequestTimeout))
