"""The learner's side of the boundary: a supervisor, and a confined worker that answers one call at a time.

On Linux the fork server (:mod:`grader.engine.confinement.zygote`) starts :func:`supervise` for one
folder and module. Two processes come of it:

* the *supervisor* is trusted and never runs learner code: it enters new
  namespaces (:mod:`grader.engine.confinement.confine`), forks the worker, tells the judge the
  worker's pid, waits for it and reports how it ended on a status pipe that
  the worker does not hold;
* the *worker* builds the GPT-2 models its calls will need, confines itself,
  reports which protections hold, and only then imports the learner's module
  and serves calls.

On macOS and Windows a spawned interpreter (:mod:`grader.engine.confinement.spawner`) sets itself
up instead, unconfined, and serves calls through the same :class:`Worker`.

Nothing the worker sends is trusted by the judge: a learner's module may
patch anything in this process, and the worst it can do is send back wrong
numbers, which the checks then mark wrong.

Messages (length-prefixed JSON, see :mod:`grader.engine.confinement.codec`): the worker says
``{"ready": true, "protections": {...}}`` (or ``{"ready": false, "error": ...}``);
then for each request ``{"id", "op": "import"|"call", "module", "function", "args"}``
(and ``"report_arguments": true`` when a check asks whether the arguments were changed)
it answers with two messages: ``{"id", "output", "lines"}``, where ``output`` is the start of
what the call printed and ``lines`` how many lines it printed (the judge reads this one with a
small bound of its own, and drops it whole if it is larger), then ``{"id", "value"}`` (with
``"arguments"`` as the call left them) or ``{"id", "error"}``; a learner's worker adds ``"read"``,
the files of the learner's folder it has read so far (:mod:`grader.engine.confinement.reads`).

A function that ran past its time limit earlier in the same grading is not run again, even
through another module: the judge lists it in :attr:`Settings.hung`, and before the learner's
module is imported the worker puts a stand-in in its place that raises :class:`RanPastItsLimit`
(so ``from softmax import softmax`` in ``lookup.py`` binds the stand-in; :mod:`~grader.engine.confinement.stand_ins`).
"""

from __future__ import annotations

import dis
import errno
import importlib
import io
import os
import select
import socket
import sys
import traceback
from dataclasses import dataclass, field

import numpy as np

from grader.engine.confinement import codec, framing, model_cache
from grader.engine.confinement.policy import CPU_BACKSTOP, OUTPUT_CHARS, SCRATCH_BYTES, SCRATCH_FILES
from grader.engine.confinement.protections import MEMORY_REFUSED, SIGNAL_REFUSED
from grader.engine.confinement.reads import Reads
from grader.engine.confinement.stand_ins import RanPastItsLimit, install_stand_ins
from grader.engine.results import ErrorKind

# What a learner's worker sees of the environment: nothing of the grader's (tokens, paths, passwords).
LEARNER_ENVIRONMENT = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HF_HUB_OFFLINE": "1",
                       "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                       "MKL_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}


@dataclass(frozen=True)
class Settings:
    """What the judge tells the fork server about one worker (sent as JSON)."""

    directory: str | None  # put first on sys.path; None for the kit's own modules
    scratch: str  # an empty folder to work in; the judge removes it
    memory_limit: int  # bytes of address space the code may add to what the worker maps
    confined: bool = True  # a learner's worker; trusted ones (reference, kit) are only limited
    readable: list[str] = field(default_factory=list)  # folders a confined worker may read besides Python's
    forbidden: list[str] = field(default_factory=list)  # folders carved out of those (the kit itself)
    models: list[dict] = field(default_factory=list)  # every GPT-2 (tiny or from disk) the calls need, built before learner code runs
    model_builder: str = ""  # the module that builds them (registry.MODEL_BUILDER): the engine names no lesson module
    output_limit: int = OUTPUT_CHARS  # characters of printed output kept per call
    hung: list[list[str]] = field(default_factory=list)  # [module, function] that ran past their time limit
    group: int | None = None  # the group that may read the learner's copy, where a root grader gives uids of their own
    cpu_backstop: int = CPU_BACKSTOP  # seconds of CPU for the whole worker, in case the judge dies
    scratch_bytes: int = SCRATCH_BYTES  # what its scratch folder may hold (a tmpfs's size, or the judge's bound)
    scratch_files: int = SCRATCH_FILES  # the files and folders it may hold
    file_bytes: int = SCRATCH_BYTES  # the largest file it may write (RLIMIT_FSIZE)


# -- the supervisor ------------------------------------------------------------------------


def supervise(data_fd: int, status_fd: int, settings: Settings):
    """Run in the fork server's child: set up, fork the worker, report its pid and its end. Never returns."""
    from grader.engine.confinement import confine  # Linux's confinement: only Linux forks workers

    confine.die_with_parent()  # the fork server ends when the judge does, and takes us along
    os.setsid()  # a session and process group of its own: no group, session or terminal signal joins it to the judge
    host_uid = os.geteuid()
    ids, namespaces = None, {}
    if settings.confined:
        obstacle = confine.own_uid_obstacle()
        if not obstacle:  # a root grader: the worker gets a uid of its own, and its scratch folder
            ids = confine.own_ids(os.getpid(), settings.group)
            os.chown(settings.scratch, *ids)
        namespaces = confine.enter_namespaces(settings.scratch, settings.scratch_bytes, settings.scratch_files, ids)
        if obstacle and host_uid == 0:
            namespaces["notes"].append(obstacle)
    alive, alive_writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(status_fd)
        os.close(alive_writer)
        confine.die_with_parent()
        if select.select([alive], [], [], 0)[0]:  # the supervisor died before the line above took effect
            os._exit(1)
        serve(data_fd, settings, namespaces, host_uid, ids, keep=(alive,))
    os.close(data_fd)
    os.close(alive)
    os.write(status_fd, f"pid {pid}\n".encode())
    _, status = os.waitpid(pid, 0)
    ending = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit {os.waitstatus_to_exitcode(status)}"
    os.write(status_fd, f"{ending}\n".encode())
    os._exit(0)


# -- the worker ---------------------------------------------------------------------------


def serve(data_fd: int, settings: Settings, namespaces: dict, host_uid: int, ids: tuple[int, int] | None, keep=()):
    """Set up, confine, report, then answer requests until the judge hangs up. Never returns."""
    from grader.engine.confinement import confine

    conn = socket.socket(fileno=data_fd)
    try:
        _isolate(settings, keep=(data_fd, *keep))
        models = model_cache.build(settings)
        if settings.confined:
            protections = confine.restrict(
                read=confine.python_installation(settings.forbidden) + list(settings.readable),
                write=[settings.scratch, "/dev/null"],
                forbidden=list(settings.forbidden), closed=list(settings.forbidden),
                unlisted=[os.path.dirname(settings.scratch)], memory_bytes=settings.memory_limit,
                cpu_seconds=settings.cpu_backstop, file_bytes=settings.file_bytes, host_uid=host_uid, ids=ids,
                namespaces=namespaces).to_plain()
        else:
            confine.set_limits(settings.memory_limit, settings.cpu_backstop, settings.file_bytes)
            protections = {}
    except BaseException as exc:  # trusted code failed: say so rather than run learner code unprotected
        refuse(conn, exc)
    answer(conn, settings, models, protections)


def refuse(conn, exc: BaseException):
    """Tell the judge that setting up failed, and end: no learner code runs in a worker set up halfway."""
    framing.send(conn, {"ready": False, "error": describe(exc, None)})
    os._exit(1)


def answer(conn, settings: Settings, models: dict, protections: dict, build_later: bool = False):
    """Report ready with ``protections``, then serve the judge's requests until it hangs up. Never returns."""
    if settings.directory:
        sys.path.insert(0, settings.directory)
    sys.dont_write_bytecode = True
    reads = Reads(settings.directory) if settings.confined and settings.directory else None  # before learner code
    framing.send(conn, {"ready": True, "protections": protections})
    Worker(conn, settings, models, build_later, reads).serve()
    os._exit(0)


def _isolate(settings: Settings, keep: tuple[int, ...]):
    os.setsid()  # the worker leads a session and group of its own too, apart from its supervisor's
    os.chdir(settings.scratch)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # output from C code goes nowhere
        os.dup2(devnull, fd)
    os.close(devnull)
    for fd in _open_descriptors():  # nothing of the fork server's or the judge's stays reachable
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass
    if settings.confined:
        os.environ.clear()
        os.environ.update(LEARNER_ENVIRONMENT, HOME=settings.scratch, TMPDIR=settings.scratch,
                          MPLCONFIGDIR=settings.scratch)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def _open_descriptors() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return list(range(3, 256))


class _Printed(io.TextIOBase):
    """sys.stdout for learner code: keeps the start of what is printed, counts the rest."""

    def __init__(self, limit: int):
        self.limit, self.kept, self.size, self.lines = limit, [], 0, 0

    def writable(self):
        return True

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.lines += text.count("\n")
        if self.size < self.limit:
            piece = text[: self.limit - self.size]
            self.kept.append(piece)
            self.size += len(piece)
        return len(text)

    def text(self) -> str:
        return "".join(self.kept)


def _in_learner_files(filename: str, directory: str | None) -> bool:
    return bool(directory) and os.path.abspath(filename).startswith(os.path.abspath(directory))


def _learner_frame(tb, directory: str | None):
    """The innermost traceback frame in the learner's files, as (file, line, code)."""
    found = None
    for frame in traceback.extract_tb(tb):
        if _in_learner_files(frame.filename, directory):
            found = (os.path.basename(frame.filename), frame.lineno, (frame.line or "").strip())
    return found


def _raised_by_learner(exc: BaseException, directory: str | None) -> bool:
    """Whether a ``raise`` in the learner's files raised ``exc``: by the instruction its innermost frame stopped at,
    never by the words of a line, so a library's NotImplementedError (from its Python or its C) is no stub's."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and _in_learner_files(tb.tb_frame.f_code.co_filename, directory) \
        and tb.tb_frame.f_code.co_code[tb.tb_lasti] == dis.opmap["RAISE_VARARGS"]


# Why the confinement refused a call, in the lesson's terms: judged from the exception and where it was raised.
_REFUSED_ERRNOS = {errno.EPERM, errno.EACCES}
_FILTER_ERRNOS = {SIGNAL_REFUSED: "signal", MEMORY_REFUSED: "memory"}
_NETWORK_MODULES = ("socket.py", "ssl.py", "urllib", "http", "requests", "huggingface_hub")
_PROCESS_MODULES = ("subprocess.py", "multiprocessing", "concurrent/futures/process.py", "popen_", "pty.py")


def _refusal(exc: BaseException) -> str | None:
    """"network", "process", "signal", "memory" or "file: PATH" when the confinement refused what the code asked
    for, else None: the seccomp filter's own errnos say which of the last two, whatever call was made."""
    if isinstance(exc, OSError) and exc.errno in _FILTER_ERRNOS:
        return _FILTER_ERRNOS[exc.errno]
    if not isinstance(exc, OSError) or exc.errno not in _REFUSED_ERRNOS:
        return None
    files = [frame.filename for frame in traceback.extract_tb(exc.__traceback__)]
    if any(part in name for name in files for part in _NETWORK_MODULES):
        return "network"
    if any(part in name for name in files for part in _PROCESS_MODULES):
        return "process"
    if exc.filename is not None:
        return f"file: {exc.filename}"
    return "process" if exc.errno == errno.EPERM else None  # os.fork, os.kill: refused by seccomp or Landlock


class MissingFunction(AttributeError):
    """The module a check calls has no function of the name it calls (renamed or deleted): a status of its own."""


_KINDS = ((SystemExit, ErrorKind.EXIT), (MissingFunction, ErrorKind.MISSING_FUNCTION),
          (MemoryError, ErrorKind.MEMORY), (codec.EncodingError, ErrorKind.ENCODING), (SyntaxError, ErrorKind.SYNTAX),
          (RanPastItsLimit, ErrorKind.HUNG))  # by the exception's type, in order


def describe(exc: BaseException, directory: str | None) -> dict:
    """A plain-data account of an exception: kind, message and where in the learner's code."""
    refusal = _refusal(exc)
    if refusal:
        kind = ErrorKind.REFUSED
    elif isinstance(exc, NotImplementedError) and _raised_by_learner(exc, directory):
        kind = ErrorKind.NOT_IMPLEMENTED  # the stub's raise: not started; a library's is an exception
    elif isinstance(exc, SyntaxError) and exc.lineno is None and str(exc.filename or "").endswith(".ipynb"):
        kind = ErrorKind.INVALID  # notebooks.write_modules' stand-in for a notebook it could not read: no code at all
    else:
        kind = next((kind for raised, kind in _KINDS if isinstance(exc, raised)), ErrorKind.EXCEPTION)
    where = _learner_frame(exc.__traceback__, directory)
    if isinstance(exc, SyntaxError) and exc.filename:
        where = (os.path.basename(exc.filename), exc.lineno, (exc.text or "").strip())
    try:
        message = refusal or str(exc)
    except BaseException:  # a learner's exception whose __str__ raises
        message = ""
    return {"kind": kind, "type": type(exc).__name__, "message": message[:2000], "where": where}


class Worker:
    def __init__(self, conn, settings: Settings, models: dict, build_later: bool = False, reads: Reads | None = None):
        self.conn, self.settings, self.models, self.build_later = conn, settings, models, build_later
        self.reads = reads
        self.stand_ins_waiting = bool(settings.hung)

    def prepared(self, value):
        """An argument as the learner's function receives it: a ModelSpec becomes its model.

        Every model was built before learner code ran (the judge lists them in
        :attr:`Settings.models`): built later, it would be built by whatever the
        learner's module had made of the builder and its libraries. Only an
        unconfined worker (a learner's own macOS or Windows, where their code
        could change the kit itself) builds one later, with ``build_later``,
        rather than be replaced by a fresh interpreter for each model.
        """
        if isinstance(value, codec.ModelSpec):
            if value not in self.models and self.build_later:
                self.models[value] = importlib.import_module(self.settings.model_builder).build(value)
            if value not in self.models:
                raise LookupError("the judge sent a model that this worker did not build before the learner's code")
            return self.models[value]
        if isinstance(value, (tuple, list)):
            return type(value)(self.prepared(v) for v in value)
        return value

    def handle(self, request) -> dict:
        args = self.prepared(codec.from_plain(request.get("args"), specs=True) or [])
        if self.stand_ins_waiting:  # within the first request's time limit: learner modules are imported
            self.stand_ins_waiting = False
            install_stand_ins(self.settings.hung, self.settings.directory)
        module = importlib.import_module(request["module"])
        if request["op"] == "import":
            return {"value": None}
        function = getattr(module, request["function"], None)
        if not callable(function):
            raise MissingFunction(f"{request['module']}.py has no function {request['function']}()")
        value = codec.to_plain(function(*args))
        if request.get("report_arguments"):  # the judge compares them with what it sent
            return {"value": value, "arguments": codec.to_plain(list(args))}
        return {"value": value}

    def serve(self):
        while True:
            try:
                request = framing.receive(self.conn, None, 2**31)
            except (EOFError, OSError):
                return
            printed = _Printed(self.settings.output_limit)
            sys.stdout = sys.stderr = printed
            try:
                answer = self.handle(request)
            except BaseException as exc:  # the learner's code may raise anything, SystemExit included
                answer = {"error": describe(exc, self.settings.directory)}
            answer["id"] = request["id"]
            if self.reads is not None:
                answer["read"] = self.reads.report()
            framing.send(self.conn, {"id": request["id"], "output": printed.text(), "lines": printed.lines}, answer)

