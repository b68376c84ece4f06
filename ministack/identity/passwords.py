"""Password and secret hashing (users' passwords, application credential
secrets).

scrypt (``hashlib.scrypt``, memory-hard) with a per-password random salt;
the stored string records the parameters so they can be raised later
without invalidating existing hashes::

    scrypt$<log2 n>$<r>$<p>$<salt b64>$<hash b64>

Verification recomputes with the stored parameters and compares in
constant time.
"""

import base64
import hashlib
import hmac
import secrets

SCHEME = "scrypt"
LOG2_N, R, P = 14, 8, 1   # 16 MiB per hash: ~50 ms, fine for 2 cores
SALT_BYTES, HASH_BYTES = 16, 32
# Ceiling on the memory one verification may take (parameters come from
# the database; 128 * r * n bytes are needed).
MAXMEM = 64 * 1024 * 1024


def _b64(data):
    return base64.b64encode(data).decode()


def _scrypt(secret, salt, log2_n, r, p):
    return hashlib.scrypt(secret.encode(), salt=salt, n=2 ** log2_n, r=r,
                          p=p, maxmem=MAXMEM, dklen=HASH_BYTES)


def hash_password(secret):
    """The storable hash of ``secret`` (a fresh salt every call)."""
    salt = secrets.token_bytes(SALT_BYTES)
    digest = _scrypt(secret, salt, LOG2_N, R, P)
    return "$".join([SCHEME, str(LOG2_N), str(R), str(P), _b64(salt),
                     _b64(digest)])


def check_password(secret, stored):
    """Whether ``secret`` matches ``stored``; False for any bad input."""
    if not isinstance(secret, str) or not stored:
        return False
    try:
        scheme, log2_n, r, p, salt, digest = stored.split("$")
        if scheme != SCHEME:
            return False
        computed = _scrypt(secret, base64.b64decode(salt), int(log2_n),
                           int(r), int(p))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(computed, base64.b64decode(digest))
