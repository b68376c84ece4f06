"""Identity errors.

Hierarchy::

    MinistackException
     ├── Invalid (400)
     │    └── ValidationError          malformed auth body
     ├── Unauthorized (401)            keystone's catch-all for bad credentials
     │    ├── TokenInvalid             not ours, tampered or malformed
     │    └── TokenExpired
     ├── Forbidden (403)
     ├── NotFound (404)
     │    └── TokenNotFound            GET /v3/auth/tokens on a bad subject
     └── ConfigError
          └── KeyFileInvalid           the shared signing key is unusable

Messages never contain a password, a secret or a token: keystone answers
every credential failure with the same sentence so a caller cannot tell a
wrong password from an unknown user.
"""

from ministack import exception


class ValidationError(exception.Invalid):
    msg_fmt = "Invalid input for field '%(field)s': %(reason)s"


class Unauthorized(exception.MinistackException):
    msg_fmt = "The request you have made requires authentication."
    code = 401


class TokenInvalid(Unauthorized):
    msg_fmt = "The request you have made requires authentication."


class TokenExpired(Unauthorized):
    msg_fmt = "The request you have made requires authentication."


class TokenNotFound(exception.NotFound):
    msg_fmt = "Could not find token."


class KeyFileInvalid(exception.ConfigError):
    msg_fmt = ("[identity] signing_key_file is unusable: %(reason)s "
               "(run python -m ministack.identity.manage bootstrap)")
