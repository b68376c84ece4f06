"""The one way ministack runs an external command.

Every call to ``lvcreate``, ``losetup``, ``tgtadm``, ``virsh``... goes
through :func:`execute` with an argv list, never a shell string. Failures are
logged with the command, its exit code and both output streams, and raised
as :class:`ministack.exception.ProcessExecutionError`.

Code that needs a command runner takes one as an argument (default
:func:`execute`) so unit tests can pass a recording fake instead.
"""

import logging
import os
import re
import shutil
import subprocess

from osprofiler import profiler

from ministack import exception

LOG = logging.getLogger(__name__)

#: options whose value is a secret (``tgtadm ... --password <chap secret>``)
SECRET_OPTIONS = ("--password", "--passwd", "--secret")


def masked(argv):
    """``argv`` fit for a log or an error message: the value of every
    :data:`SECRET_OPTIONS` option (``--opt value`` or ``--opt=value``) is
    replaced by ``***``."""
    out = []
    for part in argv:
        option, eq, _ = part.partition("=")
        if out and out[-1] in SECRET_OPTIONS:
            out.append("***")
        elif eq and option in SECRET_OPTIONS:
            out.append(option + "=***")
        else:
            out.append(part)
    return out


_WORD = re.compile(r"^[a-z][a-z0-9_-]*$")


def span_name(argv):
    """A command's name in a trace: the program and its subcommand
    (``tgtadm target new``, ``qemu-img convert``, ``lvcreate``), never
    its arguments (a CHAP secret can be one)."""
    name = os.path.basename(argv[0])
    if name == "tgtadm":
        words = [argv[i + 1] for i, part in enumerate(argv[:-1])
                 if part in ("--mode", "-m", "--op", "-o")]
        return " ".join([name] + words)
    if len(argv) > 1 and _WORD.match(argv[1]):
        return "%s %s" % (name, argv[1])
    return name


def execute(*cmd, **kwargs):
    """:func:`_execute`, as a COMMAND span when the thread is traced."""
    return traced(_execute, *cmd, **kwargs)


def traced(run, *cmd, **kwargs):
    """``run(*cmd, **kwargs)``, as a COMMAND span named after ``cmd``
    when the thread is traced: the executor's, and a command's request
    sent another way (tgtd's management socket,
    :func:`minicinder.volume.targets.tgtd_socket.execute`)."""
    if profiler.get() is None:
        return run(*cmd, **kwargs)
    from ministack.trace import profiler as ms_profiler
    argv = [str(part) for part in cmd]
    with ms_profiler.span("command", "COMMAND", span_name(argv),
                          details=lambda: {"argv": masked(argv)[:24]}):
        return run(*cmd, **kwargs)


def _execute(*cmd, check_exit_code=True, timeout=120, input=None,
             env=None):
    """Run ``cmd`` (an argv tuple) and return ``(stdout, stderr)`` as text.

    :param check_exit_code: ``True`` to accept only 0, or a list of
        acceptable exit codes, or ``False`` to accept any.
    :param timeout: seconds before the command is killed.
    :param input: text fed to the command's standard input.
    :raises ProcessExecutionError: the command failed, timed out or is
        missing.
    """
    argv = [str(part) for part in cmd]
    shown = masked(argv)
    LOG.debug("Running cmd: %s", shown)
    try:
        proc = subprocess.run(argv, input=input, capture_output=True,
                              text=True, timeout=timeout, env=env,
                              check=False)
    except FileNotFoundError:
        raise exception.ProcessExecutionError(
            cmd=shown, exit_code=127, stderr="%s: not found" % argv[0])
    except subprocess.TimeoutExpired as exc:
        raise exception.ProcessExecutionError(
            cmd=shown, exit_code=-9,
            stdout=exc.stdout or "", stderr="timed out after %ss" % timeout)
    if check_exit_code is True:
        ok = proc.returncode == 0
    elif check_exit_code is False:
        ok = True
    else:
        ok = proc.returncode in check_exit_code
    if not ok:
        LOG.warning("Command %s exited %s; stdout=%r stderr=%r",
                    shown, proc.returncode, proc.stdout, proc.stderr)
        raise exception.ProcessExecutionError(
            cmd=shown, exit_code=proc.returncode,
            stdout=proc.stdout, stderr=proc.stderr)
    return proc.stdout, proc.stderr


def require_tools(*tools, hint="install the Debian packages with "
                  "devstack/stack.sh"):
    """Fail at start-up, naming the tool, if any of ``tools`` is missing.

    :raises MissingTool: for the first tool not found on PATH.
    """
    for tool in tools:
        if shutil.which(tool) is None:
            raise exception.MissingTool(tool=tool, hint=hint)
