"""minicompute.virt.libvirt.guest_agent against a fake agent (no libvirt)."""

import base64
import json

import libvirt
import pytest

from minicompute.virt.libvirt import guest_agent


class FakeDomain:
    def name(self):
        return "guest-1"


class FakeAgent:
    """Plays qemu-ga: guest-exec returns a pid; guest-exec-status reports
    `exited` after `polls` calls."""

    def __init__(self, polls=2, status=None, fail_pings=0):
        self.polls = polls
        self.status = status or {"exitcode": 0}
        self.fail_pings = fail_pings
        self.commands = []

    def __call__(self, domain, command, timeout, flags):
        command = json.loads(command)
        self.commands.append(command)
        name = command["execute"]
        if name == "guest-ping":
            if self.fail_pings:
                self.fail_pings -= 1
                raise libvirt.libvirtError("QEMU guest agent is not connected")
            return json.dumps({"return": {}})
        if name == "guest-exec":
            return json.dumps({"return": {"pid": 42}})
        if name == "guest-exec-status":
            self.polls -= 1
            if self.polls > 0:
                return json.dumps({"return": {"exited": False}})
            return json.dumps({"return": dict(exited=True, **self.status)})
        raise AssertionError("unexpected command %s" % name)


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


@pytest.fixture
def clock():
    return FakeClock()


def b64(data):
    return base64.b64encode(data).decode()


def install(monkeypatch, agent):
    monkeypatch.setattr(guest_agent.libvirt_qemu, "qemuAgentCommand", agent)
    return agent


def test_guest_exec_runs_and_decodes(monkeypatch, clock):
    agent = install(monkeypatch, FakeAgent(polls=3, status={
        "exitcode": 0, "out-data": b64(b"vdb 1G\n"),
        "err-data": b64(b"warn\n")}))
    result = guest_agent.guest_exec(FakeDomain(), ["lsblk", "-b"],
                                    sleep=clock.sleep, clock=clock)
    assert result == (0, "vdb 1G\n", "warn\n")
    assert agent.commands[0] == {"execute": "guest-exec", "arguments": {
        "path": "lsblk", "arg": ["-b"], "capture-output": True}}
    assert agent.commands[1:] == [
        {"execute": "guest-exec-status", "arguments": {"pid": 42}}] * 3


def test_guest_exec_sends_input_and_returns_bytes(monkeypatch, clock):
    agent = install(monkeypatch, FakeAgent(polls=1, status={
        "exitcode": 0, "out-data": b64(b"\x00\xff")}))
    code, out, err = guest_agent.guest_exec(
        FakeDomain(), ["dd", "of=/dev/vdb"], input_data=b"\x01\x02",
        text=False, sleep=clock.sleep, clock=clock)
    assert (code, out, err) == (0, b"\x00\xff", b"")
    assert agent.commands[0]["arguments"]["input-data"] == b64(b"\x01\x02")


def test_guest_exec_reports_exit_code_and_signal(monkeypatch, clock):
    install(monkeypatch, FakeAgent(polls=1, status={"exitcode": 3}))
    assert guest_agent.guest_exec(FakeDomain(), ["false"], sleep=clock.sleep,
                                  clock=clock)[0] == 3
    install(monkeypatch, FakeAgent(polls=1, status={"signal": 9}))
    assert guest_agent.guest_exec(FakeDomain(), ["sleep"], sleep=clock.sleep,
                                  clock=clock)[0] == -9


def test_guest_exec_times_out(monkeypatch, clock):
    install(monkeypatch, FakeAgent(polls=10 ** 6))
    with pytest.raises(guest_agent.GuestAgentTimeout):
        guest_agent.guest_exec(FakeDomain(), ["sleep", "99"], timeout=5,
                               sleep=clock.sleep, clock=clock)
    assert clock.now >= 5


def test_guest_exec_refuses_oversized_input(monkeypatch):
    agent = install(monkeypatch, FakeAgent())
    with pytest.raises(ValueError):
        guest_agent.guest_exec(FakeDomain(), ["dd"], input_data=b"x" * (
            guest_agent.MAX_INPUT_BYTES + 1))
    assert agent.commands == []


def test_libvirt_errors_become_guest_agent_errors(monkeypatch):
    def broken(domain, command, timeout, flags):
        raise libvirt.libvirtError("agent not connected")

    install(monkeypatch, broken)
    with pytest.raises(guest_agent.GuestAgentError, match="guest-exec"):
        guest_agent.guest_exec(FakeDomain(), ["true"])


def test_wait_for_agent_retries_until_ping_answers(monkeypatch, clock):
    agent = install(monkeypatch, FakeAgent(fail_pings=3))
    took = guest_agent.wait_for_agent(FakeDomain(), timeout=60, interval=1,
                                      sleep=clock.sleep, clock=clock)
    assert took == 3
    assert [c["execute"] for c in agent.commands] == ["guest-ping"] * 4


def test_wait_for_agent_times_out(monkeypatch, clock):
    install(monkeypatch, FakeAgent(fail_pings=10 ** 6))
    with pytest.raises(guest_agent.GuestAgentTimeout, match="guest-ping"):
        guest_agent.wait_for_agent(FakeDomain(), timeout=10, interval=1,
                                   sleep=clock.sleep, clock=clock)
