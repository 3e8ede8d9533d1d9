"""The fork server: a clean Python that imports the heavy modules once, then forks workers on request.

Both ends live here. The judge starts :class:`ForkServer`, a separate
interpreter (``python -I``: no current folder on its path, no PYTHON*
variables) with a small allow-listed environment, so that nothing of the
judge (its memory, its arguments, its secrets) is copied into a worker. The
fork server imports numpy (and torch and transformers for GPT-2) once; a worker
forked from it costs a few milliseconds instead of seconds.

The two talk over a socket pair that only they hold: there is no listening
socket, and a worker closes every descriptor it inherits, so no learner code
can ask the fork server for anything. A request is a worker's
:class:`grader.engine.confinement.worker.Settings` (JSON) with two descriptors attached (the
worker's end of its message socket and the write end of its status pipe);
the answer is the supervisor's pid.

A class graded by several judges pays the imports once, not once per judge:
the batch's coordinator starts a :class:`SharedForkServer`, which forks
nothing but copies of itself, one per judge, each with a socket pair of its
own (:meth:`SharedForkServer.copy`); the judge adopts its copy
(:meth:`ForkServer.adopt`) and uses it as one it had started. A copy never
hears of another judge, and no worker is forked from the shared one itself.
A copy is not the judge's child, so a judge that dies does not kill it: it
sees its socket close, waits :data:`LEAVE_WAIT` for its workers' supervisors
and goes, taking them along (each dies with its parent).
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from grader.engine.confinement.system import FIXED, PASSED_ON

PACKAGE_PARENT = str(Path(__file__).resolve().parents[3])  # the folder that holds grader/
START_TIMEOUT = 120.0  # seconds to import torch and transformers on a loaded machine
LEAVE_WAIT = 2.0  # seconds a fork server the judge is done with waits for its supervisors to end


class ForkServerError(RuntimeError):
    """The fork server could not start, or stopped answering."""


def last_words(log) -> str:
    """The last line a fork server or spawned worker wrote to its log, as the tail of an error (": ..."), or ""."""
    try:
        lines = log.read_text(errors="replace").strip().splitlines()
    except OSError:
        lines = []
    return f": {lines[-1]}" if lines else ""


def _start(modules: list[str], log: Path, role: str) -> tuple[subprocess.Popen, socket.socket]:
    """A fork server's process, importing ``modules`` in the background, and our end of its control socket."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    command = (f"import sys; sys.path.append({PACKAGE_PARENT!r}); "
               "from grader.engine.confinement.zygote import main; main()")
    environment = {name: os.environ[name] for name in PASSED_ON if name in os.environ} | FIXED
    with open(log, "wb") as errors:
        process = subprocess.Popen(
            [sys.executable, "-I", "-c", command, str(theirs.fileno()), role, *modules],
            pass_fds=[theirs.fileno()], env=environment, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=errors, cwd="/",
            start_new_session=True)  # no process a worker can name shares the judge's group or session
    theirs.close()
    return process, ours


def _stop(process: subprocess.Popen | None, control: socket.socket):
    control.close()  # a fork server exits when it sees the socket close
    if process is None:
        return
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class ForkServer:
    """The judge's handle on one fork server, started in the background with ``modules`` imported."""

    def __init__(self, modules: list[str], log: Path):
        self.log = log
        self.process, self.control = _start(modules, log, "workers")
        self.ready = False

    @classmethod
    def adopt(cls, control: socket.socket, log: Path) -> "ForkServer":
        """A handle on a copy of a :class:`SharedForkServer` (another process's), reached through ``control``."""
        server = cls.__new__(cls)
        server.log, server.process, server.control, server.ready = log, None, control, False
        return server

    def _answer(self, timeout: float) -> dict:
        self.control.settimeout(timeout)
        try:
            data = self.control.recv(4096)
        except (socket.timeout, OSError):
            data = b""
        if not data:
            raise ForkServerError(f"the worker server stopped{last_words(self.log)}")
        return json.loads(data)

    def wait_until_ready(self):
        """Wait for the fork server to have imported its modules (it says so once, on its control socket)."""
        if not self.ready:
            self._answer(START_TIMEOUT)
            self.ready = True

    def spawn(self, settings: dict, descriptors: list[int]) -> int:
        """Fork a worker with ``settings``, handing it ``descriptors``; returns its supervisor's pid."""
        self.wait_until_ready()
        try:
            socket.send_fds(self.control, [json.dumps(settings).encode()], descriptors)
        except OSError:
            raise ForkServerError(f"the worker server stopped{last_words(self.log)}") from None
        return int(self._answer(30.0)["pid"])

    def close(self):
        _stop(self.process, self.control)


class SharedForkServer:
    """The coordinator's handle on a fork server whose copies serve a batch's judges, one copy each."""

    def __init__(self, modules: list[str], log: Path):
        self.log = log
        self.process, self.control = _start(modules, log, "copies")

    def copy(self) -> socket.socket:
        """The control socket of a new copy, for a judge to :meth:`~ForkServer.adopt`.

        Asked at once, made once the imports are done: the copy says it is
        ready as a fork server does. If this one has stopped, the socket's
        other end is closed and the judge reads why from the log.
        """
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            socket.send_fds(self.control, [b"copy"], [theirs.fileno()])
        except OSError:
            pass
        finally:
            theirs.close()
        return ours

    def close(self):
        _stop(self.process, self.control)


def _leave():
    """Exit as soon as the supervisors forked from here have ended, not after a second of torch's own teardown.

    The judge has stopped their workers by now, so they end within milliseconds; waited for, none is left to
    an init that may never reap it (a container's first process often does not). One still there after
    :data:`LEAVE_WAIT` is killed as this process ends (each asked for that with ``die_with_parent``).
    """
    deadline = time.monotonic() + LEAVE_WAIT
    while time.monotonic() < deadline:
        try:
            os.waitpid(-1, os.WNOHANG)  # SIGCHLD is ignored here: this raises once no child is left at all
        except ChildProcessError:
            break
        time.sleep(0.005)
    os._exit(0)


def prepare_libraries(modules: list[str]):
    """Import ``modules`` and pay, here in trusted code, what their first use costs once, before any learner code.

    A call into learner code is held to its time limit from its first call on (:mod:`grader.engine.confinement.clock`): no
    allowance for one-time costs, which learner code could buy by looking as if it paid one. So the costs that
    right code pays on its first use of the libraries the lessons use are paid before a worker is forked (or, on
    macOS and Windows, before a spare is handed out) and inherited: torch.func's first transform imports 1.2 s
    of torch (33,000 page faults) that a worker would otherwise pay inside a learner's call.
    """
    for name in modules:
        importlib.import_module(name)
    torch = sys.modules.get("torch")
    if torch is None:
        return
    torch.set_num_threads(1)
    ones = torch.ones(2, 2, requires_grad=True)
    torch.func.grad(lambda x: (x * x).sum())(torch.ones(2))
    torch.func.vmap(torch.softmax, in_dims=(0, None))(torch.ones(2, 2), -1)
    torch.nn.functional.softmax(ones @ ones, dim=-1).sum().backward()


def main():
    """A fork server's process: import, then fork workers (or, shared, copies of itself) on request."""
    from grader.engine.confinement import confine

    control = socket.socket(fileno=int(sys.argv[1]))
    confine.die_with_parent()
    prepare_libraries(sys.argv[3:])
    confine.prepare()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # supervisors and copies are reaped by the kernel
    if sys.argv[2] == "copies":
        _fork_copies(control)
    _fork_workers(control)


def _fork_copies(control: socket.socket):
    """A shared fork server's loop: each request hands over a judge's control socket, served by a fresh copy."""
    from grader.engine.confinement import confine

    while True:
        try:
            _, descriptors, _, _ = socket.recv_fds(control, 64, 1)
        except (OSError, KeyboardInterrupt):
            descriptors = []
        if not descriptors:  # the coordinator is done with it
            _leave()
        if os.fork() == 0:
            try:
                control.close()
                confine.die_with_parent()  # not inherited: the copy goes when this one does
                _fork_workers(socket.socket(fileno=descriptors[0]))
            finally:
                os._exit(70)
        os.close(descriptors[0])


def _fork_workers(control: socket.socket):
    """A fork server's loop: a worker forked per request, until the judge closes ``control``."""
    from grader.engine.confinement import model_cache, worker

    control.send(b'{"ready": true}')
    while True:
        try:
            data, descriptors, _, _ = socket.recv_fds(control, 65536, 2)
        except (OSError, KeyboardInterrupt):
            data = b""
        if not data:  # the judge is done with it
            _leave()
        settings = worker.Settings(**json.loads(data))
        try:
            model_cache.prebuild(settings)  # once per model, here: the worker forked next inherits it
        except Exception:  # the worker builds it itself, and reports why it cannot
            pass
        # The libraries' objects, frozen out of the collector's reach: a worker's collections would otherwise walk
        # (and so copy, page by page) torch's and transformers' hundreds of thousands of objects it inherited.
        gc.freeze()
        pid = os.fork()
        if pid == 0:
            try:
                control.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                worker.supervise(*descriptors, settings)
            finally:
                os._exit(70)
        for descriptor in descriptors:
            os.close(descriptor)
        control.send(json.dumps({"pid": pid}).encode())
