"""The exception base shared by every ministack service.

Hierarchy (each service adds its own small subclasses)::

    MinistackException          msg_fmt template + kwargs, ``code`` for HTTP
     ├── Invalid                400
     │    └── InvalidInput
     ├── Forbidden              403
     ├── NotFound               404
     ├── Conflict               409
     ├── ConfigError            start-up: a bad or missing option
     ├── MissingTool            start-up: a system command is not installed
     └── ProcessExecutionError  an external command failed

Errors are translated once at each boundary: library exceptions become one
of these inside the adapter that called the library, and these become HTTP
fault bodies in the API layer (see ``ministack.wsgi``).
"""


class MinistackException(Exception):
    """Base exception: formats ``msg_fmt`` with the keyword arguments."""

    msg_fmt = "An unknown exception occurred."
    code = 500

    def __init__(self, message=None, **kwargs):
        self.kwargs = kwargs
        self.kwargs.setdefault("code", self.code)
        if message is None:
            try:
                message = self.msg_fmt % kwargs
            except (KeyError, TypeError):
                # A programming error in the caller: keep the template rather
                # than hiding the original problem behind a formatting error.
                message = self.msg_fmt
        self.message = str(message)
        super().__init__(self.message)

    def format_message(self):
        return self.message


class Invalid(MinistackException):
    msg_fmt = "Bad request: %(reason)s"
    code = 400


class InvalidInput(Invalid):
    msg_fmt = "Invalid input received: %(reason)s"


class Forbidden(MinistackException):
    msg_fmt = "Policy doesn't allow %(action)s to be performed."
    code = 403


class NotFound(MinistackException):
    msg_fmt = "Resource could not be found."
    code = 404


class Conflict(MinistackException):
    msg_fmt = "Conflict: %(reason)s"
    code = 409


class ConfigError(MinistackException):
    msg_fmt = "Configuration error: %(reason)s"


class MissingTool(MinistackException):
    msg_fmt = "Required system tool %(tool)s was not found on PATH (%(hint)s)."


class ProcessExecutionError(MinistackException):
    msg_fmt = ("Command %(cmd)s failed with exit code %(exit_code)s.\n"
               "stdout: %(stdout)r\nstderr: %(stderr)r")

    def __init__(self, cmd=None, exit_code=None, stdout="", stderr=""):
        self.cmd = cmd
        self.exit_code = exit_code
        self.stdout = stdout
        self.stderr = stderr
        super().__init__(cmd=" ".join(cmd or []), exit_code=exit_code,
                         stdout=stdout, stderr=stderr)
