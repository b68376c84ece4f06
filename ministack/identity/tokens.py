"""Token format: Fernet-sealed JSON, verified locally by every service.

Keystone's Fernet tokens carry only ids and look roles up in its database
on validation; ministack's services (minicinder has its own database) must
validate without calling keystone, so the token itself carries what the
request context needs: user, project, roles, methods, issue and expiry
times and an audit id. Fernet (AES-128-CBC + HMAC-SHA256, from
``cryptography``) both authenticates and hides the payload, so a tampered
or foreign-key token fails verification and nothing inside is readable
without the key.

Every service shares one key file (``[identity] signing_key_file``);
holding it is what "trusting the identity service" means here, exactly as
sharing keystone's fernet key repository does upstream.

Revocation is not implemented (tokens die by expiry), a documented
deviation.
"""

import base64
import dataclasses
import datetime
import json
import os
import secrets

from cryptography import fernet

from ministack.identity import exception

# Longest token accepted: a payload with a few roles is ~400 characters;
# refusing large headers early keeps garbage away from the crypto.
MAX_TOKEN_LENGTH = 4096


def utcnow():
    return datetime.datetime.now(datetime.UTC).replace(microsecond=0)


def isotime(value):
    """Keystone's timestamp format: ``2026-11-30T16:40:27.000000Z``."""
    return value.strftime("%Y-%m-%dT%H:%M:%S.000000Z")


@dataclasses.dataclass(frozen=True)
class Token:
    """What a verified token says about its bearer."""

    user_id: str
    user_name: str
    project_id: str
    project_name: str
    roles: tuple  # ((role_id, role_name), ...)
    methods: tuple
    issued_at: datetime.datetime
    expires_at: datetime.datetime
    audit_id: str
    app_cred_id: str | None = None

    @property
    def role_names(self):
        return [name for _id, name in self.roles]

    def expired(self, now=None):
        return (now or utcnow()) >= self.expires_at

    def _payload(self):
        return {"u": self.user_id, "un": self.user_name,
                "p": self.project_id, "pn": self.project_name,
                "r": [list(r) for r in self.roles], "m": list(self.methods),
                "iat": int(self.issued_at.timestamp()),
                "exp": int(self.expires_at.timestamp()),
                "a": self.audit_id, "ac": self.app_cred_id}

    @classmethod
    def _from_payload(cls, data):
        def when(epoch):
            return datetime.datetime.fromtimestamp(epoch, datetime.UTC)
        return cls(user_id=data["u"], user_name=data["un"],
                   project_id=data["p"], project_name=data["pn"],
                   roles=tuple(tuple(r) for r in data["r"]),
                   methods=tuple(data["m"]),
                   issued_at=when(data["iat"]), expires_at=when(data["exp"]),
                   audit_id=data["a"], app_cred_id=data.get("ac"))


def new_audit_id():
    """Keystone's audit id: 16 random bytes, urlsafe base64, unpadded."""
    return base64.urlsafe_b64encode(secrets.token_bytes(16)).decode() \
        .rstrip("=")


class TokenFormatter:
    """Seal and open tokens with one Fernet key.

    :param key: the urlsafe-base64 Fernet key (bytes or str).
    """

    def __init__(self, key):
        try:
            self._fernet = fernet.Fernet(key)
        except (ValueError, TypeError) as exc:
            raise exception.KeyFileInvalid(reason=str(exc)) from None

    @classmethod
    def from_file(cls, path):
        """:raises KeyFileInvalid: missing, unreadable or not a key."""
        try:
            with open(path, "rb") as handle:
                key = handle.read().strip()
        except OSError as exc:
            raise exception.KeyFileInvalid(
                reason="cannot read %s: %s" % (path, exc.strerror)) from None
        return cls(key)

    def issue(self, user_id, user_name, project_id, project_name, roles,
              methods, lifetime, app_cred_id=None, audit_id=None,
              expires_at=None):
        """A new token: ``(token_id, Token)``.

        :param lifetime: seconds until expiry.
        :param expires_at: a cap on the expiry (a rescoped token never
            outlives the token it came from, as upstream).
        """
        now = utcnow()
        expiry = now + datetime.timedelta(seconds=lifetime)
        if expires_at is not None:
            expiry = min(expiry, expires_at)
        token = Token(user_id=user_id, user_name=user_name,
                      project_id=project_id, project_name=project_name,
                      roles=tuple(tuple(r) for r in roles),
                      methods=tuple(methods), issued_at=now,
                      expires_at=expiry, audit_id=audit_id or new_audit_id(),
                      app_cred_id=app_cred_id)
        payload = json.dumps(token._payload(), separators=(",", ":"))
        return self._fernet.encrypt(payload.encode()).decode(), token

    def verify(self, token_id, allow_expired=0, now=None):
        """Open ``token_id`` and check it has not expired.

        :param allow_expired: seconds past expiry still accepted (used only
            together with a valid service token).
        :raises TokenInvalid: not ours, tampered, malformed.
        :raises TokenExpired: authentic but past its expiry.
        """
        if (not token_id or len(token_id) > MAX_TOKEN_LENGTH
                or not token_id.isascii()):
            raise exception.TokenInvalid()
        try:
            data = json.loads(self._fernet.decrypt(token_id.encode()))
            token = Token._from_payload(data)
        except (fernet.InvalidToken, ValueError, KeyError, TypeError):
            raise exception.TokenInvalid() from None
        now = now or utcnow()
        if now >= token.expires_at + datetime.timedelta(
                seconds=allow_expired):
            raise exception.TokenExpired()
        return token


def create_key_file(path):
    """Write a new Fernet key to ``path`` (0600) unless one exists.

    :returns: True when a key was created.
    """
    if os.path.exists(path):
        return False
    os.makedirs(os.path.dirname(os.path.abspath(path)), mode=0o700,
                exist_ok=True)
    # O_EXCL: two concurrent bootstraps must not write different keys.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as handle:
        handle.write(fernet.Fernet.generate_key())
    return True
