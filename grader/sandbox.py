"""The judge's side of the boundary: worker processes, time limits and proxies.

Checks call ``submission.lookup.soft_lookup(3.0, keys, values, 1.5)`` as if the
learner's module were imported. Each call travels as plain data to a worker
process (one per folder and module, forked from a server that has already
imported numpy, and torch when GPT-2 is graded), and the answer comes back as
plain data, or as a :class:`SubmissionError` that says what went wrong in
words a learner understands. A call that runs past its time limit kills its
worker; the next call gets a fresh one, so one bad function costs one check.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import time
import types
from contextlib import contextmanager
from dataclasses import dataclass, field

from grader import codec
from grader.worker import Settings, serve

STARTUP_TIMEOUT = 120.0  # seconds for a worker to start (the fork server may be importing torch)
PREPARE_TIMEOUT = 300.0  # seconds to build a call's arguments (loading the real GPT-2 from disk)
MAX_MESSAGE = 256 * 2**20

_context = multiprocessing.get_context("forkserver")
_preloaded: set[str] = set()


def preload(gpt2: bool) -> None:
    """Start the fork server early, with numpy (and torch and transformers if ``gpt2``) imported in it.

    Workers are forked from this server, so an import paid here (torch and
    transformers take seconds) is paid once per judge process, not per worker.
    Only the first call has an effect: the server cannot learn new modules later.
    """
    from multiprocessing import forkserver

    if _preloaded:
        return
    _preloaded.update(["grader.worker", "numpy", *(["grader.gpt2"] if gpt2 else [])])
    _context.set_forkserver_preload(sorted(_preloaded))
    forkserver.ensure_running()


@contextmanager
def _without_main_module():
    """Hide the judge's ``__main__`` while starting a worker.

    multiprocessing re-runs the parent's main script in every child it starts
    (so that pickled functions defined there resolve). Workers need nothing from
    it, and re-running ``softlookup``, pytest or a notebook kernel per worker
    would only cost time or fail.
    """
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


@dataclass
class Limits:
    time: float = 5.0  # seconds of wall time per call
    memory: int = 2 * 2**30  # bytes the learner may allocate on top of the worker's own


@dataclass
class SubmissionError(Exception):
    """A call into learner code did not return a value; ``kind`` says why."""

    kind: str  # not_implemented, exception, syntax, exit, memory, encoding, timeout, crash
    message: str
    label: str = "your code"  # "lookup.soft_lookup()" or "importing lookup.py"
    where: tuple | None = None  # (file, line, code) in the learner's files

    def __str__(self):
        return self.explain()

    def explain(self) -> str:
        name = self.label
        place = ""
        if self.where:
            file, line, code = self.where
            place = f" at {file} line {line}" + (f": `{code}`" if code else "")
        if self.kind == "not_implemented":
            return f"{name} is not implemented yet (it still raises NotImplementedError)."
        if self.kind == "timeout":
            return f"{name} ran past its {self.message} time limit: is there a loop that never ends?"
        if self.kind == "memory":
            return f"{name} tried to use more memory than allowed{place}."
        if self.kind == "exit":
            return f"{name} tried to end the program (sys.exit({self.message})){place}; return a value instead."
        if self.kind == "syntax":
            return f"Python could not read your file: {self.message}{place}."
        if self.kind == "missing":
            return f"{self.message[0].upper()}{self.message[1:]}: put your file there, or check the folder name."
        if self.kind == "encoding":
            return f"{name} {self.message}."
        if self.kind == "crash":
            return f"{name} {self.message}."
        return f"{name} raised {self.message}{place}."


@dataclass
class _Slot:
    """One folder-and-module pair: its live worker, and what is already known to fail."""

    directory: str | None
    module: str
    limits: Limits
    process: multiprocessing.Process | None = None
    conn: object = None
    scratch: str | None = None  # the worker's working folder, removed with it
    next_id: int = 0
    import_error: SubmissionError | None = None
    hung: dict = field(default_factory=dict)  # function -> the timeout error it gave

    # -- process life ---------------------------------------------------------
    def start(self):
        parent, child = _context.Pipe()
        self.scratch = tempfile.mkdtemp(prefix="softlookup-worker-")
        settings = Settings(directory=self.directory, scratch=self.scratch, memory_limit=self.limits.memory)
        self.process = _context.Process(target=serve, args=(child, settings), daemon=True)
        with _without_main_module():
            self.process.start()
        child.close()
        self.conn = parent
        self._receive(STARTUP_TIMEOUT, "start")

    def stop(self):
        if self.process is not None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.process.kill()
            self.process.join(5)
            self.conn.close()
            shutil.rmtree(self.scratch, ignore_errors=True)
        self.process = self.conn = self.scratch = None

    # -- messages ---------------------------------------------------------------
    def _receive(self, timeout: float, stage: str) -> dict:
        """The worker's next message; TimeoutError (worker killed) if none comes in time."""
        if not self.conn.poll(timeout):
            self.stop()
            raise TimeoutError
        try:
            return codec.loads(self.conn.recv_bytes(MAX_MESSAGE))
        except (EOFError, OSError, ValueError):  # it died, or sent what is not our JSON
            error = self._death(stage)
            self.stop()
            raise error from None

    def _death(self, stage: str) -> SubmissionError:
        self.process.join(1)
        code = self.process.exitcode
        if code is None:
            message = f"sent a message the grader cannot read while {stage}"
        elif code < 0:
            name = signal.Signals(-code).name
            why = "ran out of memory or CPU time" if -code in (signal.SIGKILL, signal.SIGXCPU) else "crashed"
            message = f"{why} (the process died with {name}) while {stage}"
        else:
            message = f"ended the whole process (exit code {code}) while {stage}; return a value instead"
        return SubmissionError("crash", message)

    def _request(self, op: str, function: str, args, time_limit: float) -> dict:
        if self.process is None:
            self.start()
        self.next_id += 1
        request = {"id": self.next_id, "op": op, "module": self.module, "function": function,
                   "args": codec.to_plain(list(args))}
        self.conn.send_bytes(codec.dumps(request))
        stage = f"importing {self.module}.py" if op == "import" else f"running {function}()"
        for timeout in (PREPARE_TIMEOUT, time_limit):
            answer = self._receive(timeout, stage)
            if answer.get("id") != self.next_id:
                self.stop()
                raise SubmissionError("crash", "sent a message the grader did not ask for")
        return answer

    # -- what checks use ----------------------------------------------------------
    def call(self, function: str, args: tuple):
        """Run ``module.function(*args)`` in the worker; raise SubmissionError if it fails."""
        if self.import_error is not None:
            raise self.import_error
        if function in self.hung:
            raise self.hung[function]
        if self.directory and not os.path.isfile(os.path.join(self.directory, f"{self.module}.py")):
            self.import_error = SubmissionError(
                "missing", f"there is no {self.module}.py in {self.directory}", f"importing {self.module}.py")
            raise self.import_error
        if self.process is None:  # a fresh worker imports first, so import problems say so
            try:
                self._run("import", "", ())
            except SubmissionError as error:
                self.import_error = error
                raise
        try:
            return self._run("call", function, args)
        except SubmissionError as error:
            if error.kind == "timeout":  # one hang per function is enough to know
                self.hung[function] = error
            raise

    def _run(self, op: str, function: str, args):
        label = f"{self.module}.{function}()" if op == "call" else f"importing {self.module}.py"
        try:
            answer = self._request(op, function, args, self.limits.time)
        except TimeoutError:
            raise SubmissionError("timeout", f"{self.limits.time:g} s", label) from None
        except SubmissionError as error:
            error.label = label
            raise
        if "error" in answer:
            info = answer["error"]
            where = tuple(info["where"]) if info["where"] else None
            raise SubmissionError(info["kind"], _exception_text(info), label, where)
        try:
            return codec.from_plain(answer["value"])
        except (codec.EncodingError, KeyError, TypeError, ValueError) as exc:
            raise SubmissionError("encoding", f"returned something the grader cannot read ({exc})", label) from None


def _exception_text(info: dict) -> str:
    if info["kind"] in ("exit", "syntax", "encoding"):
        return info["message"]
    return f"{info['type']}: {info['message']}" if info["message"] else info["type"]


class Pool:
    """All workers of one grading session, keyed by folder and module."""

    def __init__(self):
        self.slots: dict[tuple, _Slot] = {}

    def slot(self, directory: str | None, module: str, limits: Limits) -> _Slot:
        key = (directory, module)
        if key not in self.slots:
            self.slots[key] = _Slot(directory, module, limits)
        return self.slots[key]

    def close(self):
        for slot in self.slots.values():
            slot.stop()
        self.slots.clear()


class KitError(RuntimeError):
    """Trusted code (a reference solution, the kit's GPT-2) failed: the grader's problem, not the learner's."""


class Namespace:
    """``namespace.module.function(*args)`` runs that function in a worker.

    ``Namespace(pool, "path/to/submission", limits_for)`` is a learner's
    folder. A trusted namespace (the reference solutions, or the kit's own
    modules with ``package="grader"``) runs in workers too, so the judge never
    imports torch, but its failures raise :class:`KitError` instead of being
    blamed on the learner.
    """

    def __init__(self, pool: Pool, directory: str | None, limits_for, package: str = "", trusted: bool = False):
        self._pool, self._directory, self._limits_for = pool, directory, limits_for
        self._package, self._trusted = package, trusted

    def __getattr__(self, module):
        if module.startswith("_"):
            raise AttributeError(module)
        name = f"{self._package}.{module}" if self._package else module
        slot = self._pool.slot(self._directory, name, self._limits_for(name))
        return _Module(slot, self._trusted)


class _Module:
    def __init__(self, slot: _Slot, trusted: bool):
        self._slot, self._trusted = slot, trusted

    def __getattr__(self, function):
        if function.startswith("_"):
            raise AttributeError(function)

        def call(*args):
            try:
                return self._slot.call(function, args)
            except SubmissionError as error:
                if self._trusted:
                    raise KitError(str(error)) from None
                raise

        call.__name__ = function
        return call
