"""Spawned workers: where Linux's fork server cannot be used (macOS, Windows), each worker is a fresh interpreter.

Windows has no ``fork``, and macOS makes it unsafe once torch (or Apple's
Accelerate, which numpy may use) has started threads, which is why Python's
multiprocessing spawns there. So a worker here is ``python -I`` started
afresh: it imports numpy (and torch and transformers for GPT-2) itself,
receives its :class:`grader.engine.confinement.worker.Settings` as its first message,
sets itself up and serves calls through the very :class:`grader.engine.confinement.worker.Worker`
a forked worker runs, over its stdin and stdout (:mod:`grader.engine.confinement.pipes`),
with results as the same plain data (:mod:`grader.engine.confinement.codec`). The judge
holds the deadlines: a call past its limit kills the worker, whatever it is
doing. Nothing confines the worker: it reports
:func:`grader.engine.confinement.protections.unconfined`.

The imports are paid once per worker, and out of sight: a
:class:`SpawnServer` keeps one spare worker of its kind importing ahead, and
starts the next spare as soon as one is taken. A worker whose judge has gone
(its stdin closed) exits at once, even in the middle of a learner's loop.

Both ends live here, as both ends of the fork server live in :mod:`grader.engine.confinement.zygote`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from grader.engine.confinement import codec, framing, protections, system
from grader.engine.confinement.pipes import PipeConnection
from grader.engine.confinement.system import FIXED, PASSED_ON
from grader.engine.confinement.zygote import PACKAGE_PARENT, ForkServerError, last_words, prepare_libraries

# What an interpreter needs of the environment on Windows (SYSTEMROOT for its sockets and random numbers) and
# macOS (TMPDIR, the account's own temporary folder), passed on where it is set.
SYSTEM_VARIABLES = ("SYSTEMROOT", "WINDIR", "COMSPEC", "PATHEXT", "TEMP", "TMP", "TMPDIR", "USERPROFILE",
                    "LOCALAPPDATA", "APPDATA", "PROGRAMDATA", "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE")
MAX_SETTINGS = 2**20
WINDOWS_FAILURE = 0xC0000000  # an exit status from here up is an exception of Windows's (0xC0000005: a crash)


class SpawnedWorkerHandle:
    """The judge's handle on one spawned worker: its process and its connection."""

    builds_models_later = True  # a model first needed by a later call is built there (worker.Worker.prepared)

    def __init__(self, process: subprocess.Popen, conn: PipeConnection):
        self.process, self.conn, self.pid = process, conn, process.pid

    def ending(self) -> str:
        """How the worker ended, in words, from its exit status."""
        try:
            code = self.process.wait(2.0)
        except subprocess.TimeoutExpired:
            return "stopped answering"
        if code < 0:  # a signal (macOS)
            number = -code
            name = signal.Signals(number).name if number in signal.valid_signals() else f"signal {number}"
            why = "ran out of memory or CPU time" if name in ("SIGKILL", "SIGXCPU") else "crashed"
            return f"{why} (the process died with {name})"
        if code >= WINDOWS_FAILURE:
            return f"crashed (the process ended with status {code:#x})"
        return f"ended the whole process (exit code {code}); return a value instead"

    def kill(self):
        try:
            self.process.kill()
        except OSError:
            pass
        self.conn.close()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            pass


class SpawnServer:
    """Spawned workers of one kind (``modules`` imported), with one spare always importing ahead."""

    def __init__(self, modules: list[str], log: Path):
        self.modules, self.log = modules, log
        self.spare = self._launch()

    def _launch(self) -> SpawnedWorkerHandle:
        command = (f"import sys; sys.path.append({PACKAGE_PARENT!r}); "
                   "from grader.engine.confinement.spawner import main; main()")
        names = (*PASSED_ON, *SYSTEM_VARIABLES)
        environment = {name: os.environ[name] for name in names if name in os.environ} | FIXED
        executable = sys.executable
        if sys.platform == "win32" and getattr(sys, "_base_executable", executable) != executable:
            # A venv's python.exe on Windows only starts the real one: killing it would leave the worker running.
            # So start the real one in the venv's stead, as multiprocessing does there (bpo-35797).
            executable, environment["__PYVENV_LAUNCHER__"] = sys._base_executable, sys.executable
        to_worker, worker_reads = os.pipe()
        worker_writes, from_worker = os.pipe()
        try:
            with open(self.log, "ab") as errors:
                process = subprocess.Popen([executable, "-I", "-c", command, *self.modules], stdin=to_worker,
                                           stdout=from_worker, stderr=errors, env=environment,
                                           cwd=tempfile.gettempdir())
        finally:
            os.close(to_worker)
            os.close(from_worker)
        return SpawnedWorkerHandle(process, PipeConnection(worker_writes, worker_reads))

    def worker(self, settings: dict) -> SpawnedWorkerHandle:
        """A worker for ``settings``: the spare, told its settings; a new spare starts importing meanwhile."""
        taken, self.spare = self.spare, self._launch()
        try:
            framing.send(taken.conn, settings)
        except OSError:
            taken.kill()
            raise ForkServerError(f"a worker stopped before it started{last_words(self.log)}") from None
        return taken

    def close(self):
        self.spare.kill()


def learner_environment(scratch: str) -> dict:
    """What a learner's spawned worker sees of the environment: the forked worker's, and what this system needs."""
    from grader.engine.confinement.worker import LEARNER_ENVIRONMENT

    kept = {name: os.environ[name] for name in ("PATH", *SYSTEM_VARIABLES) if name in os.environ}
    return {**LEARNER_ENVIRONMENT, **kept, "HOME": scratch, "TMPDIR": scratch, "TEMP": scratch, "TMP": scratch,
            "MPLCONFIGDIR": scratch}


def main():
    """The spawned worker itself: import, wait for the settings, set up, serve. Never returns."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole console: the judge decides what stops
    conn = PipeConnection(os.dup(0), os.dup(1), on_end=lambda: os._exit(0))  # the judge gone: end, now
    _silence(0, 1)  # what the learner's C code prints goes nowhere, not into the messages
    try:
        prepare_libraries(sys.argv[1:])
    except BaseException as exc:  # a library that does not import here: the judge hears which, and why
        why = f"{type(exc).__name__}: {exc}"
        print(why, file=sys.stderr)  # the spawn server's log, whose last line the judge shows if the pipe is gone
        framing.send(conn, {"ready": False, "error": {"type": type(exc).__name__, "message": str(exc)}})
        os._exit(1)
    from grader.engine.confinement import model_cache, worker

    try:
        settings = worker.Settings(**framing.receive(conn, None, MAX_SETTINGS))
    except (EOFError, OSError, TypeError, ValueError, codec.EncodingError):
        os._exit(0)  # a spare nobody took, or not a judge's message
    try:
        os.chdir(settings.scratch)
        _silence(2)
        if settings.confined:
            os.environ.clear()
            os.environ.update(learner_environment(settings.scratch))
        models = model_cache.build(settings)
    except BaseException as exc:  # the kit's own setting up failed: say so
        worker.refuse(conn, exc)
    report = protections.unconfined(system.name()).to_plain() if settings.confined else {}
    worker.answer(conn, settings, models, report, build_later=True)


def _silence(*descriptors: int):
    devnull = os.open(os.devnull, os.O_RDWR)
    for descriptor in descriptors:
        os.dup2(devnull, descriptor)
    os.close(devnull)
