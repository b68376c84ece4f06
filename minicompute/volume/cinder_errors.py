"""Cinder client errors -> domain exceptions, translated once.

Used by ``minicompute.volume.cinder`` (the only module that talks to
Cinder). Its transport (``cinder_http``) raises ``CinderError`` for an
HTTP status >= 400 and ``CinderTransportError`` when there is no answer;
keystoneauth raises its own errors when the service account's token
cannot be had. Here: 404s become the "not found" of the thing asked about,
400 is InvalidInput, 403 and 413 (over quota) are Forbidden, 409 is
Conflict, and an unreachable Cinder is CinderConnectionFailed, as is any
other status ("Cinder answered 500: ..."). Nothing else sees the
transport's or keystoneauth's exceptions.
"""

import functools

from keystoneauth1 import exceptions as ks_exception

from minicompute import exception
from minicompute.volume import cinder_http
from ministack import exception as ms_exception


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
    if isinstance(exc, cinder_http.CinderError):
        return _translate_http(exc)
    if isinstance(exc, (cinder_http.CinderTransportError,
                        ks_exception.ConnectionError,
                        ks_exception.RequestTimeout)):
        return exception.CinderConnectionFailed(reason=_reason(exc))
    # keystoneauth's other errors (the service account was refused...).
    return exception.CinderConnectionFailed(
        reason="Cinder answered %s: %s" % (getattr(exc, "code", None),
                                           _reason(exc)))


_CLIENT_ERRORS = (cinder_http.CinderError,
                  cinder_http.CinderTransportError,
                  ks_exception.ClientException)


def _translate(not_found=None):
    """Decorator: translate client errors once, keeping the traceback.

    :param not_found: builds the domain exception for a 404 from the
        decorated method's arguments (``self, ctxt, <id>, ...``).
    """
    def decorator(method):
        @functools.wraps(method)
        def wrapper(self, ctxt, *args, **kwargs):
            try:
                return method(self, ctxt, *args, **kwargs)
            except _CLIENT_ERRORS as exc:
                if (not_found is not None and _is_not_found(exc)):
                    raise not_found(args[0]) from exc
                raise _translate_common(exc) from exc
        return wrapper
    return decorator


def _is_not_found(exc):
    return isinstance(exc, cinder_http.CinderError) and exc.code == 404


def _volume_not_found(volume_id):
    return exception.VolumeNotFound(volume_id=volume_id)


def _attachment_not_found(attachment_id):
    return exception.VolumeAttachmentNotFound(attachment_id=attachment_id)


def _retriable(exc):
    """5xx that may pass, or no answer at all: worth another try."""
    if isinstance(exc, cinder_http.CinderError):
        return exc.code in (500, 502, 503, 504)
    return isinstance(exc, (cinder_http.CinderConnectFailure,
                            cinder_http.CinderTimeout,
                            ks_exception.ConnectFailure,
                            ks_exception.RequestTimeout))
