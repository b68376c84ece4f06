"""API hardening (issue 11, "Low"), attacked on the lab: request bodies
over oslo.middleware's 114688 bytes, on all four APIs (413 in each
service's shape, keystone's HTML page included, chunked bodies too).
"""

import requests

from tests.security.hardening import catalog_url

LIMIT = 114688
TOO_LARGE = ("Request is too large. Larger than max_request_body_size "
             "(%d)." % LIMIT)


def _padded(template, size):
    """``template`` % padding, exactly ``size`` bytes long."""
    body = template % ("p" * (size - len(template % "")))
    assert len(body) == size
    return body


def _post(url, data, headers=None):
    headers = dict({"Content-Type": "application/json"}, **(headers or {}))
    resp = requests.post(url, data=data, headers=headers, timeout=60)
    try:
        return resp.status_code, resp.json()
    except ValueError:
        return resp.status_code, resp.text[:300]


def _chunked(body, piece=8192):
    """A generator body: requests sends it chunked, with no length."""
    def pieces():
        for start in range(0, len(body), piece):
            yield body[start:start + piece].encode()
    return pieces()


def test_request_body_limit_on_every_service(conf, demo_session):
    """oslo.middleware's sizelimit: 114688 bytes are read, one more is
    413 before the body is read, chunked or not; each service answers in
    its own error shape."""
    token = {"X-Auth-Token": demo_session.token}
    compute = demo_session.compute_endpoint + "/servers"
    volume = demo_session.volume_endpoint + "/volumes"
    image = catalog_url(conf, conf.user, "image") + "/v2/images"
    identity = conf.auth_url + "/v3/auth/tokens"
    fault = {"overLimit": {"code": 413, "message": TOO_LARGE}}
    # Keystone's own oslo.middleware sizelimit answers with webob's HTML
    # page (upstream's shape).
    keystone = "Request is too large."
    cases = [
        # url, body template, answer at the limit, headers, 413 body
        (compute, '{"server": {"name": "%s"}}', 400, token, fault),
        (volume, '{"volume": {"size": 1, "name": "%s"}}', 400, token,
         fault),
        (image, '{"name": "%s"}', 400, token, fault),
        (identity, '{"auth": {"identity": {"methods": ["password"], '
                   '"password": {"user": {"name": "%s", "password": "x", '
                   '"domain": {"name": "Default"}}}}}}', 401, {}, keystone),
    ]
    for url, template, at_limit, headers, too_large in cases:
        status, body = _post(url, _padded(template, LIMIT), headers)
        assert status == at_limit, (url, status, body)
        for data in (_padded(template, LIMIT + 1),
                     _chunked(_padded(template, LIMIT + 1)),
                     _padded(template, 1024 * 1024)):
            status, body = _post(url, data, headers)
            if isinstance(too_large, str):
                assert status == 413 and too_large in body, (url, status,
                                                              body)
            else:
                assert (status, body) == (413, too_large), (url, status,
                                                            body)
