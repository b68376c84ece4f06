"""Cinder client errors -> domain exceptions, translated once.

Used by ``minicompute.volume.cinder`` (the only module that talks to
Cinder): 404s become the "not found" of the thing asked about, 400 is
InvalidInput, 403/409 keep their meaning, and an unreachable Cinder is
CinderConnectionFailed. Nothing else imports cinderclient's exceptions.
"""

import functools

from cinderclient import exceptions as cinder_exception
from keystoneauth1 import exceptions as ks_exception

from minicompute import exception
from ministack import exception as ms_exception


def _reason(exc):
    return getattr(exc, "message", None) or str(exc)


def _translate_common(exc):
    """Map a client exception that has no resource-specific meaning."""
    if isinstance(exc, cinder_exception.BadRequest):
        return ms_exception.InvalidInput(reason=_reason(exc))
    if isinstance(exc, (cinder_exception.Forbidden,
                        cinder_exception.OverLimit)):
        # Over Cinder's quota is a 403 from nova, as upstream's
        # translate_volume_exception makes it.
        return ms_exception.Forbidden(_reason(exc))
    if getattr(exc, "code", None) == 409:   # cinderclient has no Conflict
        return ms_exception.Conflict(reason=_reason(exc))
    if isinstance(exc, (ks_exception.ConnectionError,
                        ks_exception.ConnectFailure,
                        ks_exception.RequestTimeout,
                        cinder_exception.ConnectionError)):
        return exception.CinderConnectionFailed(reason=_reason(exc))
    if isinstance(exc, cinder_exception.NotFound):
        return ms_exception.NotFound(_reason(exc))
    code = getattr(exc, "code", None)
    return exception.CinderConnectionFailed(
        reason="Cinder answered %s: %s" % (code, _reason(exc)))


_CLIENT_ERRORS = (cinder_exception.ClientException,
                  cinder_exception.ConnectionError,
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
                if (not_found is not None
                        and isinstance(exc, cinder_exception.NotFound)):
                    raise not_found(args[0]) from exc
                raise _translate_common(exc) from exc
        return wrapper
    return decorator


def _volume_not_found(volume_id):
    return exception.VolumeNotFound(volume_id=volume_id)


def _attachment_not_found(attachment_id):
    return exception.VolumeAttachmentNotFound(attachment_id=attachment_id)


def _retriable(exc):
    code = getattr(exc, "code", None)
    return code in (500, 502, 503, 504) or isinstance(
        exc, (ks_exception.ConnectFailure, ks_exception.RequestTimeout))
