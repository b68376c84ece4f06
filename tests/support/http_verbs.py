"""``get``/``post``/``put``/``delete`` for the in-process test clients:
each is ``self.request(METHOD, path, ...)``, with a body for POST and
PUT."""


class Verbs:
    """Mix into a client whose ``request(method, path, body=None, **kw)``
    sends one request."""

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, body, **kw)

    def put(self, path, body=None, **kw):
        return self.request("PUT", path, body, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)
