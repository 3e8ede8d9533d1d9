"""The child process that runs learner code: limits first, then one call at a time.

This module runs on the untrusted side of the boundary. It answers requests
from :mod:`grader.sandbox` over a pipe, and everything it sends back is plain
data made by :func:`grader.codec.to_plain`. Nothing here is trusted by the
judge: a learner's module may patch anything in this process, and the worst
it can do is send back wrong numbers, which the checks then mark wrong.

Messages (JSON): the worker says ``{"ready": true}`` once its limits are set;
then for each request ``{"id", "op": "import"|"call", "module", "function", "args"}``
it answers ``{"id", "started": true}`` once the arguments are built (GPT-2
models are built here, outside the learner's time limit), then
``{"id", "value": ...}`` or ``{"id", "error": {...}}``.
"""

from __future__ import annotations

import ctypes
import importlib
import io
import os
import resource
import signal
import sys
import traceback
from dataclasses import dataclass

from grader import codec


@dataclass(frozen=True)
class Settings:
    directory: str | None  # put first on sys.path; None for the kit's own modules
    scratch: str  # an empty folder to work in; the judge removes it
    memory_limit: int  # bytes of address space the learner may add
    cpu_backstop: int = 900  # seconds of CPU for the whole worker, in case the judge dies


class _Discard(io.TextIOBase):
    """sys.stdout for learner code: what it prints is not graded, and a flood costs nothing."""

    def writable(self):
        return True

    def write(self, text):
        return len(text)


def _die_with_parent():
    """Ask Linux to kill this process if its parent dies (prctl PR_SET_PDEATHSIG)."""
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def _address_space_now() -> int:
    try:
        with open("/proc/self/status") as status:  # Linux; elsewhere the limit counts from 0
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _set_limits(settings: Settings):
    # The address-space limit is counted from what this process already maps
    # (numpy, maybe torch), so the learner gets `memory_limit` bytes on top.
    limit = _address_space_now() + settings.memory_limit
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CPU, (settings.cpu_backstop, settings.cpu_backstop + 5))
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 2**20, 64 * 2**20))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def _isolate(settings: Settings):
    os.setsid()  # own process group: the judge kills learner children with it
    _die_with_parent()
    os.chdir(settings.scratch)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # output from C code and subprocesses goes nowhere too
        os.dup2(devnull, fd)
    sys.stdout = sys.stderr = _Discard()
    if settings.directory:
        sys.path.insert(0, settings.directory)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def _learner_frame(tb, directory: str | None):
    """The innermost traceback frame in the learner's files, as (file, line, code)."""
    found = None
    for frame in traceback.extract_tb(tb):
        if directory and os.path.abspath(frame.filename).startswith(os.path.abspath(directory)):
            found = (os.path.basename(frame.filename), frame.lineno, (frame.line or "").strip())
    return found


def describe(exc: BaseException, directory: str | None) -> dict:
    """A plain-data account of an exception: kind, message and where in the learner's code."""
    if isinstance(exc, NotImplementedError):
        kind = "not_implemented"
    elif isinstance(exc, SystemExit):
        kind = "exit"
    elif isinstance(exc, MemoryError):
        kind = "memory"
    elif isinstance(exc, codec.EncodingError):
        kind = "encoding"
    elif isinstance(exc, SyntaxError):
        kind = "syntax"
    else:
        kind = "exception"
    where = _learner_frame(exc.__traceback__, directory)
    if isinstance(exc, SyntaxError) and exc.filename:
        where = (os.path.basename(exc.filename), exc.lineno, (exc.text or "").strip())
    try:
        message = str(exc)
    except BaseException:  # a learner's exception whose __str__ raises
        message = ""
    return {"kind": kind, "type": type(exc).__name__, "message": message[:2000], "where": where}


class Worker:
    def __init__(self, conn, settings: Settings):
        self.conn, self.settings = conn, settings
        self.models: dict = {}

    def send(self, message):
        self.conn.send_bytes(codec.dumps(message))

    def build_argument(self, value):
        if isinstance(value, codec.ModelSpec):
            key = (value.kind, value.part, value.seed, value.head, value.path)
            if key not in self.models:
                from grader import gpt2  # torch is imported only where GPT-2 is used

                self.models[key] = gpt2.build(value)
            return self.models[key]
        if isinstance(value, (tuple, list)):
            return type(value)(self.build_argument(v) for v in value)
        return value

    def handle(self, request) -> dict:
        args = self.build_argument(codec.from_plain(request.get("args")) or [])
        self.send({"id": request["id"], "started": True})
        module = importlib.import_module(request["module"])
        if request["op"] == "import":
            return {"value": None}
        function = getattr(module, request["function"], None)
        if not callable(function):
            raise AttributeError(f"{request['module']}.py has no function {request['function']}()")
        return {"value": codec.to_plain(function(*args))}

    def serve(self):
        self.send({"ready": True})
        while True:
            try:
                request = codec.loads(self.conn.recv_bytes())
            except EOFError:
                return
            try:
                answer = self.handle(request)
            except BaseException as exc:  # the learner's code may raise anything, SystemExit included
                answer = {"error": describe(exc, self.settings.directory)}
            answer["id"] = request["id"]
            self.send(answer)


def serve(conn, settings: Settings):
    """Process entry point (a multiprocessing target)."""
    _isolate(settings)
    _set_limits(settings)
    Worker(conn, settings).serve()
