"""API worker processes: one listening socket served by several forks.

One CPython process runs Python on one core at a time (the GIL), so a
REST API in one process stops at one core however many threads it has.
Upstream runs cinder-api as ``osapi_volume_workers`` processes (default:
the CPU count) for that reason; :class:`WorkerProcesses` does the same for
a ministack API, each worker serving the inherited socket with waitress's
threads (:func:`ministack.wsgi_server.serve`).

The order of events is what keeps the forks safe:

1. :meth:`~WorkerProcesses.start` binds the listening socket, then forks
   every worker *before the parent starts any thread*: a fork copies only
   the forking thread, and a lock another thread held at that moment would
   stay locked in the child for good. A worker that dies is therefore not
   forked again (by then the parent has threads): the service stops and
   the supervisor restarts the daemon.
2. Each worker runs ``after_fork`` (the service drops the database
   connections it inherited, which it must not share, and makes its own
   thread pools), then blocks until the parent calls
   :meth:`~WorkerProcesses.ready`: the parent finishes its start-up work
   first (minicinder rebuilds its exports), so no request is served by a
   half-recovered backend.
3. The workers serve until SIGTERM, which the kernel also sends them when
   the parent dies (``PR_SET_PDEATHSIG``: a killed parent must not leave
   them holding its port); then ``before_exit`` runs (jobs in flight
   finish) and the worker exits.
4. The parent only supervises (:meth:`~WorkerProcesses.wait`): a worker
   that exits ends the service; on stop every worker gets SIGTERM, and
   SIGKILL after ``stop_timeout`` seconds.
"""

import ctypes
import logging
import os
import signal
import socket
import threading
import time

from ministack import wsgi_server

LOG = logging.getLogger(__name__)

# waitress's default listen backlog.
BACKLOG = 1024
_STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}
_PR_SET_PDEATHSIG = 1


def listen(host, port, backlog=BACKLOG):
    """A bound, listening TCP socket on ``host:port`` (IPv4 or IPv6)."""
    family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    return socket.create_server((host, port), family=family,
                                backlog=backlog)


class WorkerProcesses:
    """``workers`` forked processes serving ``app`` on one socket.

    :param after_fork: called first in each worker.
    :param before_exit: called in each worker once it stopped serving.
    """

    def __init__(self, app, host, port, workers, threads=8,
                 ident="ministack", after_fork=None, before_exit=None,
                 stop_timeout=60):
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.app = app
        self.host = host
        self.port = port
        self.workers = workers
        self.threads = threads
        self.ident = ident
        self.after_fork = after_fork
        self.before_exit = before_exit
        self.stop_timeout = stop_timeout
        self.pids = []
        self.failed = False
        self._socket = None
        self._go = None

    # --- the parent ---

    def start(self):
        """Bind and fork the workers; they wait for :meth:`ready`."""
        if threading.active_count() > 1:
            LOG.warning("Forking API workers while %d threads run (%s): a "
                        "lock one of them holds stays held in the workers",
                        threading.active_count() - 1,
                        ", ".join(t.name for t in threading.enumerate()
                                  if t is not threading.current_thread()))
        self._socket = listen(self.host, self.port)
        go_read, self._go = os.pipe()
        parent = os.getpid()
        # Blocked until a worker has its own handlers: a SIGTERM right
        # after the fork would otherwise kill it without its clean-up.
        signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        try:
            for index in range(self.workers):
                pid = os.fork()
                if pid == 0:   # the worker: never returns
                    os.close(self._go)
                    code = 1
                    try:
                        code = self._work(index, go_read, parent)
                    except BaseException:
                        LOG.exception("API worker %d failed", index)
                    finally:
                        os._exit(code)
                self.pids.append(pid)
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
        os.close(go_read)
        LOG.info("Serving on http://%s:%s with %d worker processes (%s) of "
                 "%d threads", self.host, self.port, self.workers,
                 ", ".join(str(pid) for pid in self.pids), self.threads)

    def ready(self):
        """Let the workers serve (closing the pipe they block on)."""
        if self._go is not None:
            os.close(self._go)
            self._go = None

    def wait(self, stop_event, interval=0.5):
        """Supervise until ``stop_event`` is set or a worker exits (which
        sets it and :attr:`failed`), then stop the workers."""
        try:
            while not stop_event.wait(interval):
                for pid in list(self.pids):
                    done, status = os.waitpid(pid, os.WNOHANG)
                    if done:
                        self.pids.remove(pid)
                        self.failed = True
                        LOG.error("API worker %d exited (%s); stopping the "
                                  "service", pid, _describe(status))
                        stop_event.set()
        finally:
            self.stop()

    def stop(self):
        """SIGTERM every worker, wait for them, SIGKILL the late ones."""
        self.ready()   # a worker still waiting to start must see the stop
        for pid in self.pids:
            _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + self.stop_timeout
        while self.pids:
            for pid in list(self.pids):
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    self.pids.remove(pid)
            if not self.pids:
                break
            if time.monotonic() > deadline:
                for pid in self.pids:
                    LOG.error("API worker %d did not stop in %s s; killing "
                              "it", pid, self.stop_timeout)
                    _signal(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                self.pids = []
                break
            time.sleep(0.05)
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    # --- a worker ---

    def _work(self, index, go_read, parent):
        stop_event = threading.Event()

        def _on_signal(_signum, _frame):
            stop_event.set()
        for signum in _STOP_SIGNALS:
            signal.signal(signum, _on_signal)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
        _terminate_with_parent()
        if self.after_fork is not None:
            self.after_fork()
        try:
            self._serve(index, go_read, parent, stop_event)
        finally:
            if self.before_exit is not None:
                self.before_exit()
        LOG.info("API worker %d (pid %d) stopped", index, os.getpid())
        return 0

    def _serve(self, index, go_read, parent, stop_event):
        os.read(go_read, 1)   # EOF: the parent is ready (or gone)
        os.close(go_read)
        # A parent gone before prctl took effect sent no signal (its pid
        # is the one before the fork: getppid() now would name init).
        if stop_event.is_set() or os.getppid() != parent:
            return
        LOG.info("API worker %d (pid %d) serving", index, os.getpid())
        wsgi_server.serve(self.app, self.host, self.port,
                          threads=self.threads, stop_event=stop_event,
                          ident=self.ident, sockets=[self._socket])


def _terminate_with_parent():
    """Ask Linux for SIGTERM when the parent dies (``PR_SET_PDEATHSIG``):
    a parent killed with SIGKILL must not leave workers holding its port
    while the supervisor starts a new daemon."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0) != 0:
        LOG.warning("API worker %d: prctl(PR_SET_PDEATHSIG) failed (%s); "
                    "it will outlive a killed parent", os.getpid(),
                    os.strerror(ctypes.get_errno()))


def _signal(pid, signum):
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _describe(status):
    if os.WIFSIGNALED(status):
        return "signal %s" % signal.Signals(os.WTERMSIG(status)).name
    return "exit code %d" % os.waitstatus_to_exitcode(status)
