"""The host connector: os-brick asked once, its answer reused for TTL
seconds, then asked again; each caller gets its own copy with the
initiator we log in as; a reused answer is still a visible hop."""

from osprofiler import profiler

from minicompute.virt.libvirt import host_connector


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def _connector(monkeypatch, clock):
    calls = []

    def fetch(root_helper, my_ip, multipath, enforce_multipath, host=None):
        calls.append((my_ip, host))
        return {"ip": my_ip, "host": host, "initiator": "os-brick's",
                "multipath": False}

    from os_brick.initiator import connector
    monkeypatch.setattr(connector, "get_connector_properties", fetch)
    return host_connector.HostConnector(
        "192.0.2.10", "compute1", "iqn.2004-10.org.ministack:abc",
        ttl=300, clock=clock), calls


def test_asked_once_then_reused_until_the_ttl(monkeypatch):
    clock = Clock()
    conn, calls = _connector(monkeypatch, clock)
    first = conn.get()
    assert first == {"ip": "192.0.2.10", "host": "compute1",
                     "initiator": "iqn.2004-10.org.ministack:abc",
                     "multipath": False}
    first["initiator"] = "changed by a caller"
    clock.now += 299
    assert conn.get()["initiator"] == "iqn.2004-10.org.ministack:abc"
    assert calls == [("192.0.2.10", "compute1")]
    clock.now += 1
    conn.get()
    assert len(calls) == 2


def test_a_reused_answer_is_still_a_traced_hop(monkeypatch):
    clock = Clock()
    conn, _ = _connector(monkeypatch, clock)
    conn.get()
    stored = []
    from osprofiler import notifier
    saved = notifier.get()
    notifier.set(stored.append)
    profiler.init("unit-key")
    try:
        clock.now += 12.34
        conn.get()
    finally:
        profiler.clean()
        notifier.set(saved)
    starts = [n for n in stored if n["name"] == "os_brick-start"]
    assert len(starts) == 1, stored
    ours = starts[0]["info"]["ministack"]
    assert ours["name"] == host_connector.NAME
    assert ours["details"] == {"cached": True, "age_s": 12.3}
