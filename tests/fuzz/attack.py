"""The strategy of whole requests for one route: who sends it, the
method, the path and query, the headers and the body.

Safety rules, so fuzzing cannot harm what the run did not make:

* a request whose method changes state only puts in its path ids from
  the run's own pools (:class:`tests.fuzz.lab.Lab`), fresh random UUIDs
  or text starting with the run's prefix, which no other resource can
  have (``GET /types/default`` is fine, ``POST /types/default/extra_specs``
  is not);
* names in create bodies get the run's prefix (a nameless volume gets a
  name), so a fuzz-made resource is found and deleted at the end even if
  its create answered 500 or the run was killed;
* a server create never names a registered image, so no guest boots;
* a path argument that names a kind of resource, not one resource (the
  network API's ``<name>``, a collection: ``routes.KIND_ARGUMENTS``),
  gets the API's own words with any method: that API stores nothing and
  refuses every create, so they reach its code without changing
  anything;
* keystone holds nothing the run made, so a request to it whose method
  changes state (a GET route sent as ``DELETE`` or ``PATCH``) is sent as
  demo or with no valid token, never as admin; its path names no real
  user or project and its ``X-Subject-Token`` is no real token (as admin,
  ``DELETE /v3/users/<admin's id>`` can delete the lab's admin; a CI run
  failed to log in after some point of the fuzz tier). Issuing a token
  (``POST /v3/auth/tokens``) changes nothing and is exempt.
"""

import copy
import urllib.parse

from hypothesis import strategies as st

from tests.fuzz import lab as lab_mod
from tests.fuzz import shapes
from tests.fuzz import strategies as fz
from tests.fuzz.leaves import leaves
from tests.fuzz.leaves import or_text as _or_text
from tests.fuzz.leaves import plausible_leaves
from tests.fuzz.probe import Request

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
ODD_METHODS = ["PATCH", "TRACE", "PROPFIND", "DELETE", "PUT", "POST", "GET",
               "HEAD", "OPTIONS"]

# Path arguments: which pool holds real ids for them. Read-only pools
# (flavors, images) are used only by requests that change nothing.
_OWN_POOLS = {"server_id": "server", "volume_id": "volume",
              "attachment_id": "attachment", "type_id": "type",
              "flavor_id": "flavor"}

SERVICE = {"compute": "compute", "volume": "volume",
           "identity": "identity", "image": "image", "network": "network"}

QUERY_KEYS = {
    "compute": ["limit", "marker", "offset", "name", "status",
                "all_tenants", "project_id", "tenant_id", "host", "deleted",
                "image", "flavor", "sort_key", "sort_dir", "changes-since",
                "binary", "minDisk", "minRam", "is_public", "ip"],
    "volume": ["limit", "marker", "offset", "sort", "sort_key", "sort_dir",
               "all_tenants", "name", "status", "metadata", "volume_id",
               "instance_id", "attach_status", "project_id", "is_public",
               "with_count", "cascade", "force"],
    "identity": ["nocatalog", "allow_expired"],
    "image": ["name", "id", "limit", "marker", "visibility", "status",
              "sort_key"],
    "network": ["project_id", "tenant_id", "name", "id", "fields", "limit",
                "marker", "page_reverse", "sort_key", "sort_dir", "shared",
                "router:external", "network_id", "device_id", "status"],
}

# The one keystone request whose method changes state that is safe to
# send as anyone: it issues a token.
_KEYSTONE_SAFE_WRITES = {("POST", "/v3/auth/tokens")}


def keystone_write(route, method):
    """Whether ``method`` on ``route`` could change keystone's data (see
    the module docstring)."""
    method = method.upper()
    return (route.group == "identity" and method not in SAFE_METHODS
            and (method, route.rule) not in _KEYSTONE_SAFE_WRITES)


def _nobody_paths(route):
    """Path values for a keystone write: fresh UUIDs or the run's prefix,
    never a real user's or project's id."""
    own_prefix = fz.text.map(lambda t: lab_mod.PREFIX + t)
    return st.fixed_dictionaries({
        arg: (fz.uuids() | own_prefix).map(_quote)
        for arg in route.arguments})


def _quote(value, safe=""):
    if isinstance(value, str):
        value = value.encode("utf-8", "surrogatepass")
    return urllib.parse.quote(value, safe=safe)


def _path_values(lab, route, destructive):
    """A strategy of ``{arg: encoded value}`` for the route's path."""
    own_prefix = fz.text.map(lambda t: lab_mod.PREFIX + t)
    values = {}
    for arg in route.arguments:
        if arg == "project_id":
            strategy = _or_text([lab.demo.project_id, lab.admin.project_id,
                                 lab.demo.project_id, "demo"],
                                fz.uuids() | fz.text)
        elif route.words(arg):
            strategy = _or_text(route.words(arg), fz.uuids() | (
                own_prefix if destructive else fz.text))
        elif destructive:
            strategy = _or_text(lab.pool(_OWN_POOLS.get(arg)),
                                fz.uuids() | own_prefix)
        else:
            readonly = {"flavor_id": lab.flavors + lab.pool("flavor"),
                        "image_id": lab.images,
                        "user_id": [lab.demo.user_id, lab.admin.user_id],
                        "type_id": lab.pool("type") + ["default"]}.get(
                            arg, lab.pool(_OWN_POOLS.get(arg)))
            strategy = _or_text(readonly, fz.uuids() | fz.text)
        values[arg] = st.tuples(strategy, fz.weighted(
            st.just(""), st.just("/:@"), odds=6)).map(
                lambda pair: _quote(*pair))
    return st.fixed_dictionaries(values)


def _query(group, lab):
    ids = lab.pool("volume") + lab.pool("server") + lab.images
    value = st.one_of(fz.text, _or_text(ids), fz.integerish.map(str),
                      fz.booleanish.map(str),
                      st.lists(_or_text(ids), max_size=3).map(
                          lambda v: "in:" + ",".join(v)))
    key = _or_text(QUERY_KEYS.get(group, []), fz.text)
    pair = st.tuples(key, st.one_of(value, st.none()))

    def render(pairs):
        if not pairs:
            return ""
        return "?" + "&".join(
            _quote(k) if v is None else "%s=%s" % (_quote(k), _quote(v))
            for k, v in pairs)
    return st.lists(pair, max_size=4).map(render)


def _pad(body):
    """The same body past every size limit (114688 bytes upstream)."""
    if isinstance(body, dict):
        return {**body, "pad": "x" * 200000}
    return body


def _bodies(lab, route, sane=False):
    """Bodies near the route's shape; ``sane``: only those (a request
    attacking something else), else also anything at all, the shape
    past the size limit, or no body."""
    shape = shapes.for_route(route.method, route.rule)
    anything = st.one_of(fz.json_values,
                         fz.raw_bodies.map(fz.RawBody))
    if shape is None:
        return st.just(fz.NO_BODY) if sane else st.one_of(
            anything, st.just(fz.NO_BODY))
    shaped = st.one_of(shapes.build(shape, plausible_leaves(lab), True),
                       shapes.build(shape, leaves(lab)))
    if sane:
        return shaped
    return st.one_of(shaped, shaped, anything, shaped.map(_pad),
                     st.just(fz.NO_BODY))


def _headers(lab, route):
    real = list(lab.tokens.values())
    base = st.fixed_dictionaries({
        "Accept": _or_text(fz.ACCEPTS, fz.header_text) | st.none(),
        "Content-Type": fz.weighted(
            st.just("application/json"),
            _or_text(fz.CONTENT_TYPES, fz.header_text) | st.none()),
    })
    extra = [fz.microversion_headers(SERVICE[route.group]),
             fz.weighted(st.just({}), fz.extra_headers(real), odds=3)]
    if route.group == "identity":
        extra.append(st.fixed_dictionaries(
            {}, optional={"X-Subject-Token": fz.token_values(real)}))
    return st.tuples(base, *extra).map(
        lambda parts: {k: v for part in parts for k, v in part.items()})


# What a create body names its resource by (a name may be added).
NAMED = ("volume", "volume_type", "server", "flavor")


def _guard(lab, route, method, body):
    """Apply the safety rules (module docstring) to a drawn body: on a
    POST to a collection every name of the created thing gets the run's
    prefix; a server create names no registered image."""
    if method.upper() != "POST" or not isinstance(body, dict) or \
            not route.collection:
        return body
    for resource, inner in body.items():
        if not isinstance(inner, dict):
            continue
        names = [k for k in ("name", "display_name", "displayName")
                 if k in inner]
        for key in names:
            if isinstance(inner[key], str):
                inner[key] = lab_mod.PREFIX + inner[key]
        if not names and resource in NAMED:
            # Unnamed, it could only be found by id: give it the prefix.
            key = "display_name" if route.rule.endswith("/os-volumes") \
                else "name"
            inner[key] = lab_mod.PREFIX + "unnamed"
    if route.rule.rstrip("/").endswith("/servers"):
        body = _no_images(body, set(lab.images))
    return body


def _no_images(value, images):
    if isinstance(value, str):
        return "fuzz-no-such-image" if value in images else value
    if isinstance(value, fz.Pairs):
        return fz.Pairs((_no_images(k, images), _no_images(v, images))
                        for k, v in value)
    if isinstance(value, dict):
        return {k: _no_images(v, images) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_images(v, images) for v in value]
    return value


# What one request attacks: the rest of it is what a well-behaved client
# sends, so the hostile part reaches the code behind the checks of the
# others ("chaos" makes everything hostile at once).
FOCI_BODY = ["body"] * 5 + ["path", "query", "headers", "microversion",
                            "auth", "method", "chaos"]
FOCI_NO_BODY = ["path", "path", "query", "query", "headers", "microversion",
                "auth", "method", "body", "chaos"]

# Mostly the newest, where every route exists (attachments need 3.27).
SANE_MICROVERSIONS = {
    "compute": ["latest"] * 5 + ["2.1", "2.53", "2.79", "2.89", None],
    "volume": ["latest"] * 5 + ["3.0", "3.27", "3.44", "3.54", None],
}


def _sane_path(lab, route, sender):
    values = {}
    for arg in route.arguments:
        if arg == "project_id":
            values[arg] = st.just(getattr(lab, sender).project_id)
        elif arg == "user_id":
            values[arg] = st.just(getattr(lab, sender).user_id)
        elif route.words(arg):
            values[arg] = st.sampled_from(route.words(arg))
        else:
            values[arg] = _or_text(lab.pool(_OWN_POOLS.get(arg)),
                                   fz.uuids())
    return st.fixed_dictionaries(values).map(
        lambda v: {k: _quote(x) for k, x in v.items()})


def _sane_headers(lab, route):
    versions = SANE_MICROVERSIONS.get(route.group, [None])
    service = SERVICE[route.group]
    parts = [st.just({"Accept": "application/json",
                      "Content-Type": "application/json"}),
             st.sampled_from(versions).map(
                 lambda v: {"OpenStack-API-Version": "%s %s" % (service, v)}
                 if v else {})]
    if route.group == "identity":
        parts.append(st.sampled_from(list(lab.tokens.values())).map(
            lambda t: {"X-Subject-Token": t}))
    return st.tuples(*parts).map(
        lambda ps: {k: v for part in ps for k, v in part.items()})


def requests_for(lab, route):
    """The strategy of :class:`~tests.fuzz.probe.Request` for ``route``."""
    tokens = lab.tokens
    junk_token = fz.token_values(list(tokens.values()))
    root = lab.roots[route.group].rstrip("/")
    takes_body = route.method in ("POST", "PUT", "PATCH")
    foci = st.sampled_from(FOCI_BODY if takes_body else FOCI_NO_BODY)
    hostile = {
        "who": st.sampled_from(["demo", "admin", "junk", "junk", "none"]),
        "method": st.sampled_from(ODD_METHODS + ["HEAD"] * 3)
        if route.method == "GET" else st.sampled_from(ODD_METHODS),
        "body": _bodies(lab, route),
        "query": _query(route.group, lab),
        "headers": _headers(lab, route),
        "microversion": fz.microversion_headers(SERVICE[route.group]),
    }
    sane_body = _bodies(lab, route, sane=True)
    sane_headers = _sane_headers(lab, route)
    hostile_paths = {flag: _path_values(lab, route, flag)
                     for flag in (True, False)}
    nobody_paths = _nobody_paths(route)
    real_tokens = {fz.header_value(t) for t in tokens.values()}

    @st.composite
    def build(draw):
        focus = draw(foci)

        def attacks(*names):
            return focus == "chaos" or focus in names

        sender = draw(hostile["who"]) if attacks("auth") else draw(
            st.sampled_from(["demo", "demo", "demo", "admin"]))
        method = draw(hostile["method"]) if attacks("method") \
            else route.method
        destructive = method.upper() not in SAFE_METHODS
        writes_keystone = keystone_write(route, method)
        if writes_keystone:
            sender = "demo" if sender == "admin" else sender
            path = route.path(draw(nobody_paths))
        elif attacks("path"):
            path = route.path(draw(hostile_paths[destructive]))
            if route.group == "compute" and path.startswith("/v2.1/") and \
                    draw(st.booleans()):
                project = draw(_or_text([lab.demo.project_id,
                                         lab.admin.project_id]).map(_quote))
                path = "/v2.1/%s/%s" % (project, path[len("/v2.1/"):])
        else:
            path = route.path(draw(_sane_path(
                lab, route, sender if sender in tokens else "demo")))
        url = root + path + (draw(hostile["query"]) if attacks("query")
                             else "")
        header = draw(hostile["headers"]) if attacks("headers") \
            else draw(sane_headers)
        if attacks("microversion"):
            for name in ("OpenStack-API-Version",
                         "X-OpenStack-Nova-API-Version"):
                header.pop(name, None)
            header.update(draw(hostile["microversion"]))
        header["X-Auth-Token"] = (
            tokens[sender] if sender in tokens else
            draw(junk_token) if sender == "junk" else None)
        header = {k: None if v is None else fz.header_value(v)
                  for k, v in header.items()}
        if writes_keystone:
            # Junk may be a real token (or one once it is stripped).
            if header["X-Auth-Token"] == fz.header_value(tokens["admin"]):
                header["X-Auth-Token"] = fz.header_value(tokens["demo"])
            if header.get("X-Subject-Token") in real_tokens:
                del header["X-Subject-Token"]   # DELETE would revoke it
        if attacks("body"):
            body = draw(hostile["body"])
        else:
            body = draw(sane_body) if takes_body else fz.NO_BODY
        if body is fz.NO_BODY:
            # RFC 9110 10.1.1: no 100-continue without content; waitress
            # 3.0.2 then waits for a body forever instead of answering.
            header.pop("Expect", None)
        else:
            body = _guard(lab, route, method, body)
            body = fz.to_bytes(body, ascii_only=draw(
                fz.weighted(st.just(True), st.just(False), odds=4)))
        return Request(group=route.group, route_id=route.id, who=sender,
                       method=method, url=url, headers=header, body=body,
                       focus=focus)

    return build()


def sane_request(lab, route, body=fz.NO_BODY, headers=None, who="demo",
                 focus="corpus", query=""):
    """What a well-behaved client sends to ``route``, with ``body``,
    ``headers`` (None removes one) and ``query`` (``?a=b``) as given: the
    corpus' requests.

    The path names the run's first resource of each kind, the project is
    the sender's, the microversion the highest.
    """
    values = {}
    for arg in route.arguments:
        if arg == "project_id":
            values[arg] = getattr(lab, who if who in lab.tokens
                                  else "demo").project_id
        elif route.words(arg):
            values[arg] = route.words(arg)[0]
        else:
            pool = lab.pool(_OWN_POOLS.get(arg))
            values[arg] = pool[0] if pool else "fuzz-%s-none" % lab_mod.RUN
    url = lab.roots[route.group].rstrip("/") + route.path(
        {k: _quote(v) for k, v in values.items()}) + query
    header = {"Accept": "application/json",
              "Content-Type": "application/json"}
    if route.group in SANE_MICROVERSIONS:
        header["OpenStack-API-Version"] = "%s latest" % SERVICE[route.group]
    if route.group == "identity":
        header["X-Subject-Token"] = lab.tokens["demo"]
    header["X-Auth-Token"] = lab.tokens.get(who, who)
    header.update(headers or {})
    header = {k: None if v is None else fz.header_value(v)
              for k, v in header.items()}
    if body is not fz.NO_BODY:
        body = fz.to_bytes(_guard(lab, route, route.method,
                                  copy.deepcopy(body)))
    return Request(group=route.group, route_id=route.id, who=who,
                   method=route.method, url=url, headers=header, body=body,
                   focus=focus)
