"""The request context: who is asking, and which request this is.

One :class:`RequestContext` is built per API request by
:class:`ministack.wsgi.ContextMiddleware`, handed to every layer, and
carried across RPC by :class:`ministack.rpc.RequestContextSerializer`, so a
single ``global_request_id`` follows a user's request through the logs of
miniapi, minicompute and minicinder.

It extends oslo.context's RequestContext, which is what oslo.log reads to
print ``[req-... user project]`` on every line.
"""

from oslo_context import context as oslo_context


class RequestContext(oslo_context.RequestContext):
    """User, project, roles and request ids of one request."""

    def __init__(self, *args, **kwargs):
        # Whether the caller is a service (nova talking to cinder with a
        # service token). Identity fills it in; noauth never sets it.
        self.is_service = kwargs.pop("is_service", False)
        super().__init__(*args, **kwargs)
        if self.is_admin is None or self.is_admin is False:
            self.is_admin = "admin" in (self.roles or [])

    def to_dict(self):
        values = super().to_dict()
        values["is_service"] = self.is_service
        return values

    @classmethod
    def from_dict(cls, values, **kwargs):
        kwargs.setdefault("is_service", values.get("is_service", False))
        kwargs.setdefault("roles", values.get("roles", []))
        return super().from_dict(values, **kwargs)

    def elevated(self):
        """A copy of this context with the admin role (Nova's elevated())."""
        values = self.to_dict()
        ctx = self.from_dict(values)
        ctx.is_admin = True
        if "admin" not in ctx.roles:
            ctx.roles = list(ctx.roles) + ["admin"]
        return ctx


def get_admin_context(**kwargs):
    """A context for work the service does on its own behalf."""
    return RequestContext(user_id=None, project_id=None, roles=["admin"],
                          is_admin=True, overwrite=False, **kwargs)
