"""Authentication for the suite: Keystone v3 password, or noauth.

Returns what the REST clients need: a token and the compute and volume
endpoints for one set of credentials. Raw HTTP, like the rest of the suite.
"""

import dataclasses

import requests


@dataclasses.dataclass
class Session:
    token: str = dataclasses.field(repr=False)
    project_id: str
    user_id: str
    compute_endpoint: str
    volume_endpoint: str
    is_admin: bool


def _endpoint(catalog, types, region, interface="public"):
    for entry in catalog:
        if entry["type"] in types:
            for ep in entry["endpoints"]:
                if ep["interface"] == interface and (
                        not region or ep.get("region_id", ep.get(
                            "region")) == region):
                    return ep["url"].rstrip("/")
    raise LookupError("no %s endpoint (%s) in the catalog" % (
        "/".join(types), interface))


def password_login(conf, creds):
    """Keystone's answer (201) to a project-scoped password login of
    ``creds``: the token is its ``X-Subject-Token``, the body its data.

    :raises AssertionError: keystone refused.
    """
    body = {"auth": {
        "identity": {"methods": ["password"], "password": {"user": {
            "name": creds.username, "password": creds.password,
            "domain": {"name": creds.domain_name}}}},
        "scope": {"project": {"name": creds.project_name,
                              "domain": {"name": creds.domain_name}}}}}
    resp = requests.post(conf.auth_url + "/v3/auth/tokens", json=body,
                         timeout=30)
    if resp.status_code != 201:
        raise AssertionError("authentication of %s failed: %s %s" % (
            creds.username, resp.status_code, resp.text[:300]))
    return resp


def authenticate(conf, creds, admin=False):
    """A :class:`Session` for ``creds`` (a config.Credentials)."""
    if not conf.auth_url:
        project = creds.project_name or creds.token.partition(":")[2]
        return Session(
            token=creds.token, project_id=project,
            user_id=creds.token.partition(":")[0],
            compute_endpoint=conf.compute_endpoint,
            volume_endpoint=conf.volume_endpoint.replace(
                "%(project_id)s", project),
            is_admin=admin)
    resp = password_login(conf, creds)
    token = resp.json()["token"]
    catalog = token.get("catalog", [])
    return Session(
        token=resp.headers["X-Subject-Token"],
        project_id=token["project"]["id"],
        user_id=token["user"]["id"],
        compute_endpoint=_endpoint(catalog, ("compute",), conf.region),
        volume_endpoint=_endpoint(
            catalog, ("block-storage", "volumev3"), conf.region),
        is_admin=any(r["name"] == "admin" for r in token.get("roles", [])))
