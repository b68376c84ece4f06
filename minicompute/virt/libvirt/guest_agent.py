"""Run commands inside a guest through its QEMU guest agent.

libvirt relays JSON commands to qemu-ga over the guest's virtio-serial
channel ``org.qemu.guest_agent.0`` (see ``config.AGENT_CHANNEL_NAME``).
Running a command is two agent calls: ``guest-exec`` starts it and
returns a pid, then ``guest-exec-status`` is polled until ``exited``; the
captured output comes back base64-encoded.

This is how the functional tests (and operators) look at a volume from
the inside: ``lsblk``, ``cat /sys/block/vdb/size``, ``dd``.

Errors: a libvirt failure becomes :class:`GuestAgentError`, a deadline
:class:`GuestAgentTimeout`. Sleeping and the clock are parameters so unit
tests never really wait.
"""

import base64
import json
import time

import libvirt
import libvirt_qemu

from ministack import exception

#: Seconds one agent round trip may take (libvirt's own timeout).
COMMAND_TIMEOUT = 10

#: Largest ``input_data`` per :func:`guest_exec`. Measured with QEMU 7.2 /
#: libvirt 9.0: 128 KiB (175 KB of base64 JSON) passes, 192 KiB makes the
#: agent channel time out ("Guest agent not available for now"). Split
#: bigger writes into several commands (``dd seek=``).
MAX_INPUT_BYTES = 128 * 1024


class GuestAgentError(exception.MinistackException):
    msg_fmt = "Guest agent of %(domain)s failed: %(reason)s"


class GuestAgentTimeout(GuestAgentError):
    msg_fmt = "Guest agent of %(domain)s: %(what)s not done after %(timeout)ss"


def agent_command(domain, execute, arguments=None, timeout=COMMAND_TIMEOUT):
    """Send one agent command and return its ``return`` value.

    :param domain: a running ``libvirt.virDomain``.
    :param execute: the command name, e.g. ``guest-ping``.
    :raises GuestAgentError: the agent is not connected, did not answer
        within ``timeout`` seconds, or returned an error.
    """
    command = {"execute": execute}
    if arguments is not None:
        command["arguments"] = arguments
    try:
        reply = libvirt_qemu.qemuAgentCommand(domain, json.dumps(command),
                                              timeout, 0)
    except libvirt.libvirtError as exc:
        raise GuestAgentError(domain=domain.name(),
                              reason="%s: %s" % (execute, exc)) from exc
    return json.loads(reply).get("return")


def wait_for_agent(domain, timeout=60, interval=0.5, *, sleep=time.sleep,
                   clock=time.monotonic):
    """Wait until the guest agent answers ``guest-ping``.

    :returns: the seconds it took.
    :raises GuestAgentTimeout: no answer within ``timeout`` seconds.
    """
    start = clock()
    while True:
        try:
            agent_command(domain, "guest-ping", timeout=2)
            return clock() - start
        except GuestAgentError:
            # Not connected yet (still booting) answers at once; keep trying.
            if clock() - start >= timeout:
                raise GuestAgentTimeout(domain=domain.name(),
                                        what="guest-ping", timeout=timeout)
        sleep(interval)


def guest_exec(domain, argv, timeout=60, input_data=None, text=True,
               interval=0.2, *, sleep=time.sleep, clock=time.monotonic):
    """Run ``argv`` in the guest and wait for it, like ``subprocess.run``.

    :param argv: the command and its arguments; ``argv[0]`` is looked up
        on the agent's PATH.
    :param input_data: bytes fed to the command's standard input, at most
        :data:`MAX_INPUT_BYTES`.
    :param text: decode stdout/stderr as UTF-8 (invalid bytes replaced);
        False returns bytes.
    :returns: ``(exit_code, stdout, stderr)``; a command killed by a
        signal has ``exit_code == -signal``, as in :mod:`subprocess`.
    :raises GuestAgentTimeout: still running after ``timeout`` seconds
        (the agent has no way to kill it; it keeps running in the guest).
    :raises ValueError: ``input_data`` is too big for the agent channel.
    """
    if input_data is not None and len(input_data) > MAX_INPUT_BYTES:
        raise ValueError("input_data is %d bytes; the guest agent takes at "
                         "most %d per command" % (len(input_data),
                                                  MAX_INPUT_BYTES))
    arguments = {"path": argv[0], "arg": list(argv[1:]),
                 "capture-output": True}
    if input_data is not None:
        arguments["input-data"] = base64.b64encode(input_data).decode()
    pid = agent_command(domain, "guest-exec", arguments)["pid"]
    start = clock()
    while True:
        status = agent_command(domain, "guest-exec-status", {"pid": pid})
        if status.get("exited"):
            break
        if clock() - start >= timeout:
            raise GuestAgentTimeout(domain=domain.name(),
                                    what="command %s" % list(argv),
                                    timeout=timeout)
        sleep(interval)
    if "signal" in status:
        exit_code = -status["signal"]
    else:
        exit_code = status.get("exitcode", 0)
    stdout = base64.b64decode(status.get("out-data", ""))
    stderr = base64.b64decode(status.get("err-data", ""))
    if text:
        stdout = stdout.decode("utf-8", "replace")
        stderr = stderr.decode("utf-8", "replace")
    return exit_code, stdout, stderr
