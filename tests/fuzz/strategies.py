"""Hypothesis strategies for hostile input: text, numbers, JSON, raw bytes,
headers and microversions.

The values are chosen to reach the code paths that broke before: lone
surrogates (sent as JSON ``\\udXXX`` escapes, and as raw invalid UTF-8),
NUL, right-to-left marks, digits Python's ``int()`` accepts but a regex
does not (``"١"``, ``"1_0"``), numbers with thousands of digits, NaN and
``1e400``, booleans where integers are expected, bodies past the size
limit and nesting past the JSON decoder's recursion limit.

JSON is written by :func:`encode`, not ``json.dumps``, so a body can hold
what the json module refuses to write: a 5000-digit number (:class:`Raw`
text), duplicate keys (:class:`Pairs`) and invalid UTF-8.
"""

import json
import string
import uuid

from hypothesis import strategies as st


class Raw(str):
    """JSON text written as-is (huge or odd numbers: ``1e400``)."""


class Pairs(list):
    """An object as a list of ``(key, value)``: keys may repeat."""


class RawBody(bytes):
    """A request body sent as these bytes, not encoded as JSON."""


NO_BODY = None


def weighted(common, rare, odds=4):
    """``common`` about ``odds - 1`` times in ``odds``, else ``rare``."""
    return st.integers(0, odds - 1).flatmap(
        lambda i: rare if i == 0 else common)


# -- text -------------------------------------------------------------------

SPECIAL_TEXT = [
    "", " ", "  padded  ", "\x00", "a\x00b", "\ud800", "\udfff",
    "x\ud800y", "\ud83d", "\udc00\ud800", "\u202e", "abc\u202edef",
    "\u200f\u200e", "\ufeff", "\uffff", "\ufffe", "\U0010ffff", "\U0001f600",
    "\uff46\uff55\uff5a\uff5a", "\u0661\u0662", "\uff11", "\u00b2",
    "\u216b", "e\u0301", "\t", "\n", "\r\n", "\x7f", "\x1b[31m", "\x85",
    "\u2028", "0", "-1", "1.5", "1e3", "1_000", "0x10", " 1", "1 ", "+1",
    "NaN", "inf", "Infinity", "null", "true", "None", "[]", "{}",
    "%s", "%(name)s", "%n", "{0}", "{name}", "${IFS}", "$(id)", "`id`",
    "; ls", "' OR '1'='1", "\"; DROP TABLE volumes; --", "\\", "\\\\",
    "\"", "'", "../../../../etc/passwd", "/", "//", ".", "..",
    "%2e%2e%2f", "%00", "%", "<script>alert(1)</script>", "]]>",
    "default", "latest", "admin", "demo", "detail", "action", "in:",
    "a" * 255, "a" * 256, "\u00e9" * 128, "\U0001f600" * 64, "x" * 4096,
]

_surrogates = st.text(st.characters(categories=["Cs"]), min_size=1,
                      max_size=3)
# Past the columns' and the schemas' limits; past the body size limit is
# attack._pad's job (a body that big stops at the 413 every time).
_long = st.sampled_from([255, 256, 1024, 4097, 16384]).flatmap(
    lambda n: st.sampled_from(["x" * n, "\u00e9" * n, "\ud800" * (n // 6),
                               "\x00" * n]))

text = st.one_of(
    st.sampled_from(SPECIAL_TEXT),
    st.text(max_size=40),
    st.lists(st.one_of(st.text(max_size=8), _surrogates,
                       st.sampled_from(SPECIAL_TEXT[:40])),
             max_size=5).map("".join),
    _long,
)

ascii_text = st.text(string.printable, max_size=40)


def uuids():
    return st.builds(lambda: str(uuid.uuid4())) | st.uuids().map(str)


# -- numbers ----------------------------------------------------------------

HUGE_INTS = [2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 53 + 1, 2 ** 63 - 1,
             2 ** 63, 2 ** 64, -2 ** 63 - 1, 10 ** 100]
RAW_NUMBERS = [Raw("9" * 5000), Raw("-" + "9" * 5000), Raw("1" + "0" * 4300),
               Raw("1e400"), Raw("-1e400"), Raw("1.0e+99999"), Raw("-0"),
               Raw("1E2"), Raw("0.1e1"), Raw("1.0"), Raw("0." + "0" * 5000 +
                                                        "1")]

integers = st.one_of(st.integers(-3, 5), st.integers(),
                     st.sampled_from(HUGE_INTS))
floats = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                   st.sampled_from([0.5, 1.0, -0.0, 1e308, 5e-324]))
numbers = st.one_of(integers, floats, st.sampled_from(RAW_NUMBERS))

# Integers as clients really send them, and as a lax parser accepts them.
integerish = st.one_of(
    integers, st.sampled_from(RAW_NUMBERS), floats, st.booleans(),
    st.sampled_from(["1", "2", " 1", "1 ", "01", "+1", "-1", "0", "1.0",
                     "1e1", "1_0", "\u0661", "\uff11", "0x1", "9" * 5000,
                     "", "one", "NaN"]))

booleanish = st.one_of(
    st.booleans(),
    st.sampled_from(["true", "True", "TRUE", "false", "1", "0", "on", "off",
                     "yes", "no", "", "maybe", 1, 0, 2, None]))

# -- JSON -------------------------------------------------------------------

scalars = st.one_of(st.none(), st.booleans(), numbers, text)


def _containers(children):
    return st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(text, children, max_size=4),
        st.lists(st.tuples(st.sampled_from(["a", "name", "size"]) | text,
                           children), min_size=2, max_size=4).map(Pairs))


json_values = st.recursive(scalars, _containers, max_leaves=10)

_DEEP = 100000
RAW_BODIES = [
    b"", b" ", b"{", b"}", b"[", b"null", b"true", b"0", b'"x"', b"[]",
    b"{}", b'{"a":}', b'{"a":1,}', b"\xef\xbb\xbf{}", b"\x00" * 16,
    b"\xed\xa0\x80", b"\xc3\x28", b"\xff\xfe{\x00}\x00", b"NaN",
    b"Infinity", b"-Infinity", b'{"a": 1e400}', b"[" * _DEEP,
    b'{"a":' * (_DEEP // 5) + b"1" + b"}" * (_DEEP // 5),
    b"[" * 200000 + b"]" * 200000, b"volume=1&size=2",
    b"<volume><size>1</size></volume>",
]

raw_bodies = st.one_of(st.sampled_from(RAW_BODIES), st.binary(max_size=200))


def _encode_str(value, ascii_only):
    return json.dumps(value, ensure_ascii=ascii_only)


def encode(value, ascii_only=True):
    """JSON text of ``value`` (see the module docstring for the extras).

    With ``ascii_only`` every non-ASCII character, lone surrogates
    included, is a ``\\uXXXX`` escape; otherwise it is written raw and
    :func:`to_bytes` turns surrogates into invalid UTF-8.
    """
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, bytes):   # a header value reused in a body
        value = value.decode("utf-8", "surrogateescape")
    if isinstance(value, str):
        return _encode_str(value, ascii_only)
    if isinstance(value, (Pairs, dict)):
        items = value.items() if isinstance(value, dict) else value
        return "{" + ", ".join(
            "%s: %s" % (encode(k if isinstance(k, str) else str(k),
                               ascii_only), encode(v, ascii_only))
            for k, v in items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(encode(v, ascii_only) for v in value) + "]"
    return json.dumps(value)   # None, bool, int, float (NaN, Infinity)


def to_bytes(value, ascii_only=True):
    if isinstance(value, RawBody):
        return bytes(value)
    return encode(value, ascii_only).encode("utf-8", "surrogatepass")


# -- headers ----------------------------------------------------------------

def header_value(value):
    """Bytes that http.client will send as a header value: no CR/LF and
    no leading whitespace; everything else (NUL, UTF-8, invalid UTF-8)
    goes to the server as-is."""
    if isinstance(value, str):
        value = value.encode("utf-8", "surrogatepass")
    return value.replace(b"\r", b"").replace(b"\n", b"").lstrip(b" \t\f\v")


header_text = st.one_of(text, ascii_text, st.binary(max_size=40)).map(
    header_value)

CONTENT_TYPES = [
    "application/json", "application/json; charset=utf-8",
    "application/json; charset=latin-1", "application/json; charset=utf-16",
    "application/json; charset=bogus", "application/json;;;", "text/plain",
    "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
    "multipart/form-data", "application/xml", "application/octet-stream",
    "*/*", "", "json", "application/json\x00",
]
ACCEPTS = ["application/json", "*/*", "application/xml", "text/html",
           "text/plain", "", "application/json;q=0", "garbage/\x01"]

MICROVERSIONS = [
    "2.1", "2.19", "2.49", "2.53", "2.79", "2.85", "2.89", "2.90", "2.96",
    "3.0", "3.27", "3.44", "3.54", "3.71", "latest", "LATEST", "Latest",
    "1.0", "2.0", "3.", ".1", "3", "3.0.0", "03.00", "3.-1", "-3.0", " 3.0",
    "3.0 ", "3.٤", "２.１", "3.0\x00", "3." + "9" * 5000, "2." + "1" * 30,
    "9" * 5000 + ".0", "",
]

microversion_values = st.one_of(
    st.sampled_from(MICROVERSIONS),
    st.builds("{}.{}".format, st.integers(0, 4), st.integers(0, 120)),
    ascii_text)


def microversion_headers(service):
    """Header dicts asking for a microversion, in every shape clients
    (and attackers) write them: the standard header, nova's legacy one,
    both, several services in one header, odd spacing, junk."""
    other = st.sampled_from(["compute", "volume", "identity", "image",
                             "network", "COMPUTE", "Volume", ""])
    standard = st.builds(lambda s, v: {"OpenStack-API-Version": "%s %s" %
                                       (s, v)},
                         st.just(service) | other, microversion_values)
    legacy = st.builds(lambda v: {"X-OpenStack-Nova-API-Version": v},
                       microversion_values)
    several = st.builds(
        lambda a, b, c: {"OpenStack-API-Version": "%s %s, %s %s" % (
            service, a, b, c)}, microversion_values, other,
        microversion_values)
    junk = st.builds(lambda v: {"OpenStack-API-Version": v}, header_text)
    return st.one_of(st.just({}), standard, legacy,
                     st.builds(lambda a, b: {**a, **b}, standard, legacy),
                     several, junk)


def token_values(real_tokens):
    """What a client may put in ``X-Auth-Token``: a real token, a damaged
    one, or junk."""
    damaged = st.sampled_from(real_tokens).flatmap(lambda t: st.sampled_from(
        [t[:-1], t[:-5] + "AAAAA", t + t, t[:20], t.lower(), " " + t]))
    return st.one_of(st.sampled_from(real_tokens), damaged, header_text,
                     st.sampled_from(["", "gAAAAA", "null", "x" * 20000]))


def extra_headers(real_tokens):
    """Headers the services read besides the token and the version."""
    names = st.sampled_from([
        "X-Service-Token", "X-OpenStack-Request-ID", "X-Roles",
        "X-User-Id", "X-Project-Id", "X-Subject-Token", "Host",
        "X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host",
        "Forwarded", "Range", "If-Match", "Accept-Language",
        "Accept-Encoding", "Cookie", "Expect", "X-Fuzz"])
    values = st.one_of(header_text, token_values(real_tokens),
                       st.sampled_from(["admin", "service", "req-" + "0" * 36,
                                        "100-continue", "gzip, br"]))
    return st.dictionaries(names, values, max_size=3)
