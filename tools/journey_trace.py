"""The osprofiler side of tools/journey.py: trace one request, then show
its hops as ``ministack-trace show`` does and name the journey page.

The request carries osprofiler's ``X-Trace-Info``/``X-Trace-HMAC``
headers, signed with the lab's HMAC key, exactly as ``openstack
--os-profile <key>`` sends them; the compute API's osprofiler middleware
starts the trace from them and every daemon adds its spans. The key, the
trace store and the page's address are read from miniapi's config
(``[profiler] enabled, hmac_keys, connection_string``, ``[trace] listen,
listen_port``), a root-only file: the journey runs as root.
"""

import time

import journey_lab as lab

MINIAPI_CONF = "/etc/ministack/miniapi.conf"


class Tracing:
    """Tracing of the journey's requests, or why there is none
    (``off``: a sentence; the journey goes on untraced)."""

    def __init__(self, hmac_key=None, connection=None, page=None, off=None):
        self.hmac_key, self.connection = hmac_key, connection
        self.page, self.off = page, off

    @classmethod
    def from_config(cls, path=MINIAPI_CONF):
        conf = lab._ini(path)
        if conf.get("profiler", "enabled", fallback="false").strip().lower() \
                not in ("true", "1", "yes", "on"):
            return cls(off="tracing is off in this lab "
                           "([profiler] enabled in %s)" % path)
        keys = [k.strip() for k in conf.get(
            "profiler", "hmac_keys", fallback="").split(",") if k.strip()]
        connection = conf.get("profiler", "connection_string", fallback="")
        if not keys or not connection:
            return cls(off="[profiler] hmac_keys or connection_string is "
                           "missing in %s" % path)
        page = None
        port = conf.get("trace", "listen_port", fallback="0").strip()
        if port not in ("", "0"):
            host = conf.get("trace", "listen", fallback="127.0.0.1")
            if host in ("0.0.0.0", "::"):
                host = "127.0.0.1"
            if ":" in host:
                host = "[%s]" % host
            page = "http://%s:%s/trace/" % (host, port)
        return cls(keys[0], connection, page)

    def headers(self):
        """A new trace: ``(trace_id, headers)`` for one request, or
        ``(None, {})`` when tracing is off."""
        if self.off:
            return None, {}
        from osprofiler import profiler
        from osprofiler import web
        profiler.init(self.hmac_key)
        try:
            return (profiler.get().get_base_id(),
                    web.get_trace_id_headers())
        finally:
            profiler.clean()

    def settled(self, trace_id, handler, timeout=30):
        """The stored trace once the compute's ``handler`` span (the
        cast's other end, e.g. ``attach_volume``) is in it, every span
        has stopped and no new one came since the last look. The cast's
        spans on the compute host can land after the volume reads in-use.

        :returns: (trace or None, whether it settled before the timeout)
        """
        from ministack.trace import hops
        deadline = time.monotonic() + timeout
        last = trace = None
        while time.monotonic() < deadline:
            try:
                trace = hops.load(self.connection, trace_id)
            except hops.TraceNotFound:
                trace = None
            shape = trace and (
                len(trace["hops"]),
                all(hop["duration_ms"] is not None for hop in trace["hops"]),
                any(hop["actor"] == "nova-compute" and
                    hop["name"] == handler for hop in trace["hops"]))
            if shape and all(shape[1:]) and shape == last:
                return trace, True
            last = shape
            time.sleep(0.5)
        return trace, False

    def show(self, what, trace_id, handler):
        """Print the hop table of ``trace_id`` and the page's URL.

        :param handler: the compute's method the request casts
            (``attach_volume``...): the trace is complete with its spans.
        """
        lab.heading("The %s, hop by hop (osprofiler trace %s)" % (
            what, trace_id))
        if self.off:
            lab.say("   no trace: %s" % self.off)
            return None
        lab.command("ministack-trace show %s" % trace_id)
        trace, settled = self.settled(trace_id, handler)
        if trace is None:
            lab.say("   no span stored for trace %s: is osprofiler enabled "
                    "in every daemon ([profiler])?" % trace_id)
            return None
        if not settled:
            lab.say("   (still incomplete: no finished %s span from "
                    "nova-compute yet)" % handler)
        from ministack.trace import hops
        for line in hops.format_table(trace).splitlines():
            lab.say("   " + line)
        if self.page:
            lab.say("   the journey page: %s%s" % (self.page, trace_id))
        return trace
