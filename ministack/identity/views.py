"""JSON shapes of the identity API: version documents, catalog, token.

Shapes follow keystone's api-ref samples (``identity-version-response``,
``auth-token-scoped-response``); the fields the clients read are listed in
/work/shared/reference/openstack-clients.md §1.4–1.5.
"""

import hashlib

from ministack.identity import store
from ministack.identity import tokens

VERSION = {"id": "v3.14", "status": "stable",
           "updated": "2020-04-07T00:00:00Z",
           "media-types": [{"base": "application/json",
                            "type": "application/vnd.openstack.identity-v3"
                                    "+json"}]}

INTERFACES = ("public", "internal", "admin")

# (type, name, [service] url option): block storage is listed under both
# of its type names, so cinderclient (volumev3) and the SDK/OSC
# (block-storage) each find theirs.
SERVICES = (
    ("identity", "keystone", "identity_url"),
    ("compute", "nova", "compute_url"),
    ("block-storage", "cinder", "volume_url"),
    ("volumev3", "cinderv3", "volume_url"),
    ("image", "glance", "image_url"),
)


def version(host_url):
    """The v3 version entry with its ``self`` link on the request's host."""
    return dict(VERSION, links=[{"rel": "self",
                                 "href": host_url.rstrip("/") + "/v3/"}])


def _stable_id(*parts):
    # Catalog ids are stable across restarts (they are config, not rows).
    return hashlib.sha1("/".join(parts).encode(),
                        usedforsecurity=False).hexdigest()[:32]


def catalog(catalog_conf, project_id):
    """The service catalog for a token scoped to ``project_id``."""
    region = catalog_conf.region_name
    entries = []
    for service_type, name, option in SERVICES:
        url = getattr(catalog_conf, option)
        if not url:
            continue
        url = url % {"project_id": project_id}
        entries.append({
            "type": service_type, "name": name,
            "id": _stable_id(service_type),
            "endpoints": [{"id": _stable_id(service_type, interface),
                           "interface": interface, "region": region,
                           "region_id": region, "url": url}
                          for interface in INTERFACES]})
    return entries


def token_body(token, catalog_conf=None, include_catalog=True):
    """``{"token": {...}}`` for a verified or freshly issued Token."""
    domain = dict(store.DEFAULT_DOMAIN)
    body = {
        "methods": list(token.methods),
        "user": {"id": token.user_id, "name": token.user_name,
                 "domain": domain, "password_expires_at": None},
        "project": {"id": token.project_id, "name": token.project_name,
                    "domain": domain},
        "roles": [{"id": role_id, "name": name}
                  for role_id, name in token.roles],
        "is_domain": False,
        "audit_ids": [token.audit_id],
        "issued_at": tokens.isotime(token.issued_at),
        "expires_at": tokens.isotime(token.expires_at),
    }
    if token.app_cred_id:
        body["application_credential"] = {"id": token.app_cred_id,
                                          "restricted": True}
    if include_catalog and catalog_conf is not None:
        body["catalog"] = catalog(catalog_conf, token.project_id)
    return {"token": body}
