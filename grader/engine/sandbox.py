"""The judge's side of the boundary: sessions, workers, time limits and proxies.

Checks call ``submission.lookup.soft_lookup(3.0, keys, values, 1.5)`` as if the
learner's module were imported. Each call travels as plain data to a worker
process (one per folder and module, forked by a :class:`~grader.engine.zygote.ForkServer`
and confined by :mod:`grader.engine.confine`), and the answer comes back as plain
data, or as a :class:`SubmissionError` that says what went wrong in words a
learner understands.

The judge trusts nothing that comes back: the whole exchange of a call is
held to its time limit (a worker that sends half a message and sleeps is
killed like one that loops), every message is size- and shape-checked before
it is decoded, every field is validated and capped by the judge itself (what
a call printed has its own, much smaller bound), and learner text is stripped
of control characters and made encodable.

Time is bounded twice. A call that runs past its limit kills its worker; the
next call gets a fresh one, and the function that hung is never called again
for that submission, not even through the modules that import it (their
workers get a stand-in for it that says so). And all of a submission's calls
together share a time budget (:attr:`Session.budget`): once it is spent, the
remaining checks fail at once with a message that says so. Trusted calls
(the reference, the kit) count against neither.

Learners' workers see a private copy of their folder, never the folder
itself: links that lead outside it are refused before anything runs.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import signal
import socket
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from grader.engine import codec, registry
from grader.engine.options import TIME_BUDGET
from grader.engine.confine import Protections
from grader.engine.zygote import ForkServer, ForkServerError

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # grader/
KIT_ROOT = PACKAGE_DIR.parent
STARTUP_TIMEOUT = 120.0  # seconds for a worker to start (building the real GPT-2 from disk included)
MAX_MESSAGE = 96 * 2**20  # a 64 MB array, base64-encoded, and change
PRINTED_LINES = 20  # lines of a call's printed output kept for the learner
COPY_LIMITS = (500, 20 * 2**20)  # files and bytes a submission folder may hold
# What each kind of fork server imports before forking, from the lightest; a kind can serve those before it.
SERVER_KINDS = {"numpy": ["numpy", "grader.engine.worker"],
                "torch": ["numpy", "grader.engine.worker", "torch"],
                "transformers": ["numpy", "grader.engine.worker", registry.MODEL_BUILDER]}  # torch and transformers come with it
ERROR_KINDS = {"not_implemented", "exception", "syntax", "exit", "memory", "encoding", "refused", "hung"}
IMPORT_TIME_LIMIT = 30.0  # seconds to import a module: a library the fork server did not preload (scipy, say) included
MAX_LINES_COUNTED = 10**9  # a worker's count of printed lines, believed up to this


@dataclass
class Limits:
    time: float = 5.0  # seconds of wall time per call, the whole exchange included
    memory: int = 2 * 2**30  # bytes the code may allocate on top of the worker's own
    needs: str = "numpy"  # the kind of fork server the worker comes from (see SERVER_KINDS)


@dataclass
class SubmissionError(Exception):
    """A call into learner code did not return a value; ``kind`` says why."""

    kind: str  # one of ERROR_KINDS, or timeout, budget, crash, missing, invalid
    message: str
    label: str = "your code"  # "lookup.soft_lookup()" or "importing lookup.py"
    where: tuple | None = None  # (file, line, code) in the learner's files
    output: str = ""  # what the call printed, if anything

    def __str__(self):
        return self.explain()

    def explain(self) -> str:
        return codec.clean_text(self._explained(), 5000)  # paths and labels too: every part must be encodable

    def _explained(self) -> str:
        name = self.label
        place = ""
        if self.where:
            file, line, code = self.where
            place = f" at {file} line {line}" + (f": `{code}`" if code else "")
        if self.kind == "not_implemented":
            return f"{name} is not implemented yet (it still raises NotImplementedError)."
        if self.kind == "timeout":
            return f"{name} ran past its {self.message} time limit: is there a loop that never ends?"
        if self.kind == "hung":
            verb = "calls" if self.message.endswith("()") else "imports"
            return (f"{name} was stopped{place}: it {verb} {self.message}, which ran past its time limit earlier "
                    f"in this grading and is not run again: fix {self.message} first")
        if self.kind == "budget":
            return f"{name} {self.message}"
        if self.kind == "memory":
            return f"{name} tried to use more memory than allowed{place}."
        if self.kind == "exit":
            return f"{name} tried to end the program (sys.exit({self.message})){place}; return a value instead."
        if self.kind == "syntax":
            return f"Python could not read your file: {self.message}{place}."
        if self.kind in ("missing", "invalid"):
            return f"{self.message[0].upper()}{self.message[1:]}."
        if self.kind == "refused":
            category, _, path = self.message.partition(": ")
            what, why = _REFUSALS.get(category, ("was refused something", "the checks run confined"))
            return f"{name} {what.format(path)}{place}: {why}."
        if self.kind in ("encoding", "crash"):
            return f"{name} {self.message}."
        return f"{name} raised {self.message}{place}."


# What the confinement refused, in the lesson's terms: the worker names which ("network", "process", "file: PATH").
_REFUSALS = {
    "network": ("tried to open a network connection",
                "the checks run offline, so code can neither download nor send anything"),
    "process": ("tried to start or signal another process",
                "the checks run your functions in one process, so compute the answer in Python itself"),
    "file": ("tried to open {}, outside its own folder",
             "your code may read only its own folder and Python's libraries, and write only a temporary folder"),
}


class KitError(RuntimeError):
    """Trusted code (a reference solution, the kit's GPT-2) failed: the grader's problem, not the learner's."""


class IsolationError(KitError):
    """Isolation was required and this machine does not offer all of it."""


# -- one worker ----------------------------------------------------------------------------


class _Worker:
    """A live worker: its supervisor and its own pid, its message socket and its status pipe."""

    def __init__(self, server: ForkServer, settings: dict):
        ours, theirs = socket.socketpair()
        status, status_writer = os.pipe()
        try:
            self.supervisor = server.spawn(settings, [theirs.fileno(), status_writer])
        finally:
            theirs.close()
            os.close(status_writer)
        self.conn, self.status, self.pid = ours, os.fdopen(status, "rb", buffering=0), None
        self.pid = int(self._status_line(STARTUP_TIMEOUT).removeprefix("pid "))

    def _status_line(self, timeout: float) -> str:
        """The supervisor's next line ("pid N", "exit N" or "signal N"), or "" if none comes in time."""
        line, deadline = b"", time.monotonic() + timeout
        while not line.endswith(b"\n") and len(line) < 64:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.status], [], [], remaining)[0]:
                break
            chunk = os.read(self.status.fileno(), 1)
            if not chunk:
                break
            line += chunk
        return line.decode(errors="replace").strip()

    def ending(self) -> str:
        """How the worker ended, in words, as its supervisor saw it."""
        line = self._status_line(2.0)
        kind, _, value = line.partition(" ")
        if kind == "signal" and value.isdigit():
            number = int(value)
            name = signal.Signals(number).name if number in signal.valid_signals() else f"signal {number}"
            why = "ran out of memory or CPU time" if number in (signal.SIGKILL, signal.SIGXCPU) else "crashed"
            return f"{why} (the process died with {name})"
        if kind == "exit" and value.lstrip("-").isdigit():
            return f"ended the whole process (exit code {value}); return a value instead"
        return "stopped answering"

    def kill(self):
        for pid in (self.pid, self.supervisor):
            if pid:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        self.conn.close()
        self.status.close()


# -- one folder and module -------------------------------------------------------------------


@dataclass
class _Slot:
    """One folder-and-module pair: its live worker, and what is already known to fail."""

    session: "Session"
    directory: str | None  # what the worker imports from (a learner's private copy)
    origin: str | None  # the folder as the learner named it, for messages
    module: str
    limits: Limits
    trusted: bool
    readable: list[str] = field(default_factory=list)
    worker: _Worker | None = None
    scratch: Path | None = None
    built: frozenset = frozenset()  # the models the live worker built before learner code ran
    next_id: int = 0
    import_error: SubmissionError | None = None
    hung: dict = field(default_factory=dict)  # function -> the timeout error it gave (trusted slots)

    def models_needed(self) -> set:
        """Every GPT-2 (tiny or from disk) that calls into this module have needed, in this session.

        A new worker builds all of them before it imports learner code; the
        session keeps the set across a class's students, so only the first
        student's workers restart when a check asks for a model not seen yet.
        """
        return self.session.models_needed.setdefault(self.module, set())

    def known_hangs(self) -> dict:
        """(module, function) -> timeout error, for every function of this slot's folder that ran past its limit.

        A learner's hangs are the session's, per folder, so that every module
        of the submission knows them; a trusted slot keeps its own.
        """
        if self.trusted:
            return {(self.module, function): error for function, error in self.hung.items()}
        return self.session.hung.get(self.origin, {})

    def start(self):
        self.scratch = Path(tempfile.mkdtemp(prefix="scratch-", dir=self.session.root))
        self.built = frozenset(self.models_needed())
        settings = {
            "directory": self.directory, "scratch": str(self.scratch), "memory_limit": self.limits.memory,
            "confined": not self.trusted, "readable": self.readable, "forbidden": self.session.forbidden,
            "models": [codec.to_plain(spec)["model_spec"] for spec in sorted(self.built, key=repr)],
            "output_limit": self.session.output_limit, "model_builder": registry.MODEL_BUILDER,
            "hung": [] if self.trusted else [[module, function] for module, function in self.known_hangs()],
        }
        fork_server = server("transformers" if self.built else self.limits.needs)
        try:
            self.worker = _Worker(fork_server, settings)
            ready = codec.receive(self.worker.conn, time.monotonic() + STARTUP_TIMEOUT, MAX_MESSAGE)
        except (ForkServerError, OSError, EOFError, TimeoutError, ValueError, codec.EncodingError) as error:
            self.stop()
            raise KitError(f"a worker could not start ({type(error).__name__}: {error})") from None
        if not isinstance(ready, dict) or ready.get("ready") is not True:
            error = ready.get("error") if isinstance(ready, dict) else None
            self.stop()
            detail = codec.clean_text(f"{error.get('type')}: {error.get('message')}", 300) if isinstance(
                error, dict) else "no reason given"
            raise KitError(f"a worker could not be set up ({detail})")
        if not self.trusted:
            self.session.note_protections(ready.get("protections"))

    def stop(self):
        if self.worker is not None:
            self.worker.kill()
        if self.scratch is not None:
            _remove(self.scratch)
        self.worker = self.scratch = None

    def _exchange(self, op: str, function: str, args, time_limit: float, report_arguments: bool = False) -> dict:
        """Send one request and return the worker's validated answer, all within ``time_limit``."""
        if self.worker is None:
            self.start()
        self.next_id += 1
        request = {"id": self.next_id, "op": op, "module": self.module, "function": function,
                   "args": codec.to_plain(list(args)), "report_arguments": report_arguments}
        deadline = time.monotonic() + time_limit
        stage = f"importing {self.module}.py" if op == "import" else f"running {function}()"
        try:
            self.worker.conn.settimeout(time_limit)
            codec.send(self.worker.conn, request)
            # What the call printed comes first, in a message of its own with a small bound: a worker whose
            # cap was raised by learner code has that message dropped, and its answer still counts.
            printed = codec.receive_or_skip(self.worker.conn, deadline, self.session.output_bytes)
            answer = codec.receive(self.worker.conn, deadline, MAX_MESSAGE)
        except (TimeoutError, socket.timeout):
            self.stop()
            raise TimeoutError from None
        except (EOFError, ConnectionError, OSError):
            ending = self.worker.ending()
            self.stop()
            raise SubmissionError("crash", f"{ending} while {stage}") from None
        except codec.EncodingError as error:
            self.stop()
            raise SubmissionError("encoding", f"{error} while {stage}") from None
        return self._validated(printed, answer)

    def _validated(self, printed: tuple, answer) -> dict:
        """The answer's fields, each of the type and size expected, or a crash if it is not our message.

        ``printed`` is ``(message, size)`` as :func:`codec.receive_or_skip` read
        it. The judge caps what it keeps itself, whatever cap the worker had:
        the worker runs learner code, which can change its own.
        """
        report, size = printed
        if not isinstance(answer, dict) or answer.get("id") != self.next_id or ("value" in answer) == (
                "error" in answer) or (report is not None and (
                not isinstance(report, dict) or report.get("id") != self.next_id)):
            self.stop()
            raise SubmissionError("crash", "sent a message the grader did not ask for")
        if report is None:
            printed = f"... (more than the grader keeps: {size / 2**20:.1f} MB of printed output)"
        else:
            output = report.get("output") if isinstance(report.get("output"), str) else ""
            lines = report.get("lines") if type(report.get("lines")) is int else 0
            printed = _printed(output[: self.session.output_limit], min(max(lines, 0), MAX_LINES_COUNTED),
                               self.session.printed_lines)
        if "value" in answer:
            return {"value": answer["value"], "arguments": answer.get("arguments"), "output": printed}
        error = answer["error"] if isinstance(answer["error"], dict) else {}
        kind = error.get("kind") if error.get("kind") in ERROR_KINDS else "exception"
        where = error.get("where")
        if not (isinstance(where, list) and len(where) == 3 and type(where[1]) is int):
            where = None
        else:
            where = (codec.clean_text(str(where[0]), 100), where[1], codec.clean_text(str(where[2]), 200))
        text = codec.clean_text(str(error.get("message", "")), 2000)
        if kind == "hung" and text not in {hang_label(module, function) for module, function in self.known_hangs()}:
            kind, error = "exception", {**error, "type": "RanPastItsLimit"}  # not a function the judge stopped
        if kind == "exception":
            kind_name = codec.clean_text(str(error.get("type", "Exception")), 100)
            text = f"{kind_name}: {text}" if text else kind_name
        return {"error": SubmissionError(kind, text, where=where, output=printed), "output": printed}

    # -- what checks use ----------------------------------------------------------------
    def call(self, function: str, args: tuple, report_arguments: bool = False):
        """Run ``module.function(*args)`` in the worker; raise SubmissionError if it fails.

        With ``report_arguments``, returns ``(value, arguments)``: the arguments
        as the call left them, for a check that the function did not change them.
        """
        if self.import_error is not None:
            raise self.import_error
        hung = self.known_hangs().get((self.module, function))
        if hung is not None:
            raise hung
        module_file = os.path.join(self.directory or "", f"{self.module}.py")
        if self.directory and not self.trusted and not os.path.isfile(module_file):
            self.import_error = SubmissionError(
                "missing", f"there is no {self.module}.py in {self.origin}: put your file there, or check the "
                "folder name", f"importing {self.module}.py")
            raise self.import_error
        if not self.trusted:
            self.session.check_budget(f"{self.module}.{function}()")
            self.session.last_call = (self.module, function)
        needed = codec.model_specs(list(args))
        if self.worker is not None and not needed <= self.built:
            self.stop()  # models are built before learner code runs (it could replace the builder): a new worker
        self.models_needed().update(needed)
        if self.worker is None:  # a fresh worker imports first, so import problems say so
            try:
                self._run("import", "", ())
            except SubmissionError as error:
                self.import_error = error
                if error.kind == "timeout" and not self.trusted:  # the modules that import this one skip it
                    self.session.note_hang(self, "", error)
                raise
        try:
            return self._run("call", function, args, report_arguments)
        except SubmissionError as error:
            if error.kind == "timeout":  # one hang per function is enough to know
                if self.trusted:
                    self.hung[function] = error
                else:
                    self.session.note_hang(self, function, error)
            raise

    def _run(self, op: str, function: str, args, report_arguments: bool = False):
        label = f"{self.module}.{function}()" if op == "call" else f"importing {self.module}.py"
        time_limit = self.limits.time if op == "call" else max(self.limits.time, IMPORT_TIME_LIMIT)
        if self.worker is None:  # starting a worker is the kit's work (GPT-2 small from disk included): not timed
            self.start()
        left = None if self.trusted else self.session.budget_left()
        allowed = time_limit if left is None else max(min(time_limit, left), 0.01)
        started = time.monotonic()
        try:
            answer = self._exchange(op, function, args, allowed, report_arguments)
        except TimeoutError:
            if allowed < time_limit:  # the budget ran out, not the call's own limit: it is not a hang
                raise SubmissionError("budget", self.session.budget_spent("was stopped"), label) from None
            raise SubmissionError("timeout", f"{time_limit:g} s", label) from None
        except SubmissionError as error:
            error.label = label
            raise
        finally:
            if not self.trusted:
                self.session.spent += time.monotonic() - started
        if answer["output"]:
            self.session.printed.add(label, answer["output"])
        if "error" in answer:
            error = answer["error"]
            error.label = label
            raise error
        try:
            value = codec.from_plain(answer["value"])
            if not report_arguments:
                return value
            arguments = codec.from_plain(answer["arguments"])
            if not isinstance(arguments, list) or len(arguments) != len(args):
                raise ValueError("the arguments came back in another form")
            return value, arguments
        except (codec.EncodingError, KeyError, TypeError, ValueError, RecursionError) as exc:
            raise SubmissionError("encoding", f"returned something the grader cannot read ({exc})", label) from None


class PrintLog(list):
    """``(call, what it printed)`` for the check running now, held to ``limit`` characters in all.

    A check may call learner code hundreds of times; what it keeps of their
    prints is bounded by the judge, whatever each call printed.
    """

    def __init__(self, limit: int):
        super().__init__()
        self.limit, self.size, self.dropped = limit, 0, 0

    def add(self, label: str, text: str):
        if self.size >= self.limit:
            self.dropped += 1
            return
        if len(text) > self.limit - self.size:
            text = text[: self.limit - self.size] + "…"
        self.size += len(text)
        self.append((label, text))

    def clear(self):
        super().clear()
        self.size = self.dropped = 0


def hang_label(module: str, function: str) -> str:
    """How a function that hung is named to the learner: "softmax.softmax()", or "softmax.py" for its import."""
    return f"{module}.{function}()" if function else f"{module}.py"


def _printed(output: str, lines: int, keep: int) -> str:
    """The first ``keep`` lines a call printed, and how many more there were."""
    kept = codec.clean_text(output, len(output)).splitlines()
    total = max(lines, len(kept))
    shown = kept[:keep]
    if total > len(shown):
        shown.append(f"... ({total - len(shown)} more lines)")
    return "\n".join(shown)


def _remove(path: Path):
    def writable_and_retry(function, failed, _):
        os.chmod(os.path.dirname(failed), 0o700)
        function(failed)

    shutil.rmtree(path, onerror=writable_and_retry)


# -- fork servers, shared by every session of this process -------------------------------------

_servers: dict[str, ForkServer] = {}
_server_logs: list[Path] = []


def server(needs: str) -> ForkServer:
    """A fork server that has imported what ``needs`` names, started on first use and kept for the process.

    A server that has imported more serves too (transformers' server can fork
    a torch worker), so grading GPT-2 and exercise 5 together imports torch
    once. Started once, a server serves every later session: a test run, a
    class graded in batch or a notebook checking again pays for its imports once.
    """
    kinds = list(SERVER_KINDS)
    running = [kind for kind in kinds[kinds.index(needs):] if kind in _servers]
    if running:
        return _servers[running[0]]
    if not _server_logs:
        _server_logs.append(Path(tempfile.mkdtemp(prefix=f"softlookup-{os.getpid()}-servers-")))
        atexit.register(shutdown)
    _servers[needs] = ForkServer(SERVER_KINDS[needs], _server_logs[0] / f"{needs}.log")
    return _servers[needs]


def preload(needs: str = "numpy"):
    """Start the fork servers now, so that their imports overlap with whatever the judge does next."""
    server("numpy")
    server(needs)


def shutdown():
    """Stop the fork servers (at exit; a server also stops by itself when this process dies)."""
    for handle in _servers.values():
        handle.close()
    _servers.clear()
    for folder in _server_logs:
        shutil.rmtree(folder, ignore_errors=True)
    _server_logs.clear()


# -- a grading session ------------------------------------------------------------------------


class Session:
    """Everything one grading run starts: private copies of submissions, workers, their scratch folders.

    All of it lives in one temporary folder (``softlookup-<pid>-*``) that
    :meth:`close` removes; a later session removes any left by a run that
    was killed outright.
    """

    def __init__(self, require_isolation: bool = False, all_output: bool = False, forbidden=()):
        _remove_abandoned_sessions()
        self.root = Path(tempfile.mkdtemp(prefix=f"softlookup-{os.getpid()}-"))
        self.require_isolation = require_isolation
        self.output_limit = 2**20 if all_output else 4000  # characters of printed output kept per call
        # What the message of a call's printed output may take: JSON writes a character in up to 12 bytes.
        self.output_bytes = 12 * self.output_limit + 4096
        self.printed_lines = 10**6 if all_output else PRINTED_LINES
        # Carved out of what learners may read, wherever they lie (the kit installed in site-packages):
        self.forbidden = sorted({str(PACKAGE_DIR), str(KIT_ROOT / "solutions"), str(KIT_ROOT / "tests"),
                                 *map(str, forbidden)})
        self.slots: dict[tuple, _Slot] = {}
        self.copies: dict[str, str | SubmissionError] = {}
        self.protections: Protections | None = None
        self.printed = PrintLog(self.output_limit)  # (call, what it printed) for the check running now
        self.last_call: tuple[str, str] | None = None  # (module, function) the check running now called last
        self.answers: dict[str, dict] = {}  # trusted calls already made: their answers, as plain data
        self.budget: float | None = TIME_BUDGET  # seconds for all of one submission's calls; None: no budget
        self.spent = 0.0  # seconds the current submission's calls have taken so far
        self.hung: dict[str, dict[tuple[str, str], SubmissionError]] = {}  # folder -> (module, function) -> error
        self.models_needed: dict[str, set] = {}  # module -> the model specs its workers build: see _Slot.models_needed

    def begin_submission(self, budget: float | None = TIME_BUDGET):
        """A new submission is graded next: its calls get a whole budget, and no function is known to hang."""
        self.budget, self.spent = budget, 0.0
        self.hung.clear()
        self.printed.clear()

    def budget_left(self) -> float | None:
        return None if self.budget is None else self.budget - self.spent

    def budget_spent(self, what: str) -> str:
        return (f"{what}: this submission's calls have used up their time budget ({self.budget:g} s for all of "
                "them together), so the checks from here on fail without running your code. Make your slowest "
                "functions faster (the reference solutions need a few seconds for everything) and check again; "
                "an instructor can allow more time with --time-budget SECONDS")

    def check_budget(self, label: str):
        """Raise SubmissionError ("budget") if the current submission's calls have used up its time budget."""
        left = self.budget_left()
        if left is not None and left <= 0:
            raise SubmissionError("budget", self.budget_spent("was not run"), label)

    def note_hang(self, slot: "_Slot", function: str, error: SubmissionError):
        """Remember that ``slot``'s function ran past its limit, for every module of the same folder.

        Workers of that folder started before now would still call it (through
        ``from softmax import softmax``): they are stopped, and their next call
        starts a worker that gets a stand-in instead (forking one takes milliseconds).
        """
        known = self.hung.setdefault(slot.origin, {})
        if (slot.module, function) in known:
            return
        known[(slot.module, function)] = error
        for (directory, _, trusted), other in self.slots.items():
            if directory == slot.origin and not trusted and other.worker is not None:
                other.stop()

    def note_protections(self, plain):
        """Record what a learner's worker reported; refuse to go on without isolation if it was required."""
        try:
            reported = Protections(**plain)
        except TypeError:
            raise KitError("a worker reported its protections in an unknown form") from None
        if self.protections is None:
            self.protections = reported
        if self.require_isolation and reported.missing():
            raise IsolationError("isolation is required and this machine lacks " + "; ".join(reported.missing()))

    def trusted_answer(self, directory: str | None, module: str, function: str, args, limits: Limits):
        """A trusted function's answer (the reference's, the kit's), computed once per session and arguments.

        A class of 200 asks the reference the same hidden questions 200 times;
        each is answered by a worker once and rebuilt from plain data after.
        """
        key = json.dumps([directory, module, function, codec.to_plain(list(args))], sort_keys=True)
        if key not in self.answers:
            try:
                value = self.slot(directory, module, limits, trusted=True).call(function, args)
            except SubmissionError as error:
                raise KitError(str(error)) from None
            self.answers[key] = codec.to_plain(value)
        return codec.from_plain(self.answers[key])

    def probe(self) -> Protections:
        """The protections a learner's worker gets here, measured by starting one that runs nothing."""
        if self.protections is None:
            slot = _Slot(self, None, None, "probe", Limits(), trusted=False)
            try:
                slot.start()
            finally:
                slot.stop()
        return self.protections

    def copy_of(self, directory: str) -> str:
        """A private, read-only copy of a learner's folder: what their workers import from.

        Raises SubmissionError ("invalid") for a folder with links that lead
        outside it, or more files than any exercise needs.
        """
        if directory not in self.copies:
            target = Path(tempfile.mkdtemp(prefix="submission-", dir=self.root))
            try:
                _copy_submission(Path(directory), target)
                os.chmod(target, 0o755)
                self.copies[directory] = str(target)
            except SubmissionError as error:
                self.copies[directory] = error
        found = self.copies[directory]
        if isinstance(found, SubmissionError):
            raise found
        return found

    def slot(self, directory: str | None, module: str, limits: Limits, trusted: bool) -> _Slot:
        key = (directory, module, trusted)
        if key not in self.slots:
            if trusted or directory is None:
                self.slots[key] = _Slot(self, directory, directory, module, limits, trusted)
            else:
                copy = self.copy_of(directory)
                self.slots[key] = _Slot(self, copy, directory, module, limits, trusted, readable=[copy])
        return self.slots[key]

    def release(self, directory: str):
        """Stop the workers of one learner's folder and remove its copy (the next learner's turn)."""
        for key in [key for key in self.slots if key[0] == directory and not key[2]]:
            self.slots.pop(key).stop()
        self.hung.pop(directory, None)
        copy = self.copies.pop(directory, None)
        if isinstance(copy, str):
            _remove(Path(copy))

    def close(self):
        for slot in self.slots.values():
            slot.stop()
        self.slots.clear()
        if self.root.exists():
            _remove(self.root)


def _copy_submission(source: Path, target: Path):
    files, size = 0, 0
    for folder, subfolders, names in os.walk(source, followlinks=False):
        subfolders[:] = [name for name in subfolders if name != "__pycache__" and not name.startswith(".")]
        relative = Path(folder).relative_to(source)
        for name in [*subfolders, *names]:
            path = Path(folder) / name
            if path.is_symlink():
                real = path.resolve()
                if real != source.resolve() and source.resolve() not in real.parents:
                    raise SubmissionError("invalid", f"{relative / name} in {source} is a link to {real}, outside "
                                                     "the folder: put the file itself there")
        for name in subfolders:
            (target / relative / name).mkdir()
        for name in names:
            path = Path(folder) / name
            if not path.is_file() or name.startswith("."):
                continue
            files, size = files + 1, size + path.stat().st_size
            if files > COPY_LIMITS[0] or size > COPY_LIMITS[1]:
                raise SubmissionError("invalid", f"{source} holds more than {COPY_LIMITS[0]} files or "
                                                 f"{COPY_LIMITS[1] // 2**20} MB: submit only your modules")
            shutil.copyfile(path, target / relative / name)


def _remove_abandoned_sessions():
    """Remove the folders of sessions whose process is gone (killed before it could clean up)."""
    for folder in Path(tempfile.gettempdir()).glob("softlookup-*-*"):
        pid = folder.name.split("-")[1]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except PermissionError:
            pass


# -- proxies that checks use ---------------------------------------------------------------------


class Namespace:
    """``namespace.module.function(*args)`` runs that function in a worker.

    ``Namespace(session, "path/to/submission", limits_for)`` is a learner's
    folder. A trusted namespace (the reference solutions, or the kit's own
    modules with ``package="grader.lesson"``) runs in unconfined workers, so the
    judge never imports torch, and its failures raise :class:`KitError`
    instead of being blamed on the learner.
    """

    def __init__(self, session: Session, directory: str | None, limits_for, package: str = "",
                 trusted: bool = False):
        self._session, self._directory, self._limits_for = session, directory, limits_for
        self._package, self._trusted = package, trusted

    def __getattr__(self, module):
        if module.startswith("_"):
            raise AttributeError(module)
        name = f"{self._package}.{module}" if self._package else module
        return _Module(self, name)


class _Module:
    def __init__(self, namespace: Namespace, name: str):
        self._namespace, self._name = namespace, name

    def __getattr__(self, function):
        if function.startswith("_"):
            raise AttributeError(function)
        return _Function(self._namespace, self._name, function)


class _Function:
    """``module.function``: calling it runs the function in a worker and returns its value."""

    def __init__(self, namespace: Namespace, module: str, name: str):
        self._namespace, self._module, self.__name__ = namespace, module, name

    def __call__(self, *args):
        namespace = self._namespace
        if namespace._trusted:  # the kit's answers depend on their arguments only: ask once per session
            return namespace._session.trusted_answer(namespace._directory, self._module, self.__name__, args,
                                                     namespace._limits_for(self._module))
        return self._slot().call(self.__name__, args)

    def arguments_after(self, *args):
        """``(value, arguments)``: the value, and the arguments as the call left them (compared by the judge)."""
        return self._slot().call(self.__name__, args, report_arguments=True)

    def _slot(self) -> _Slot:
        namespace = self._namespace
        return namespace._session.slot(namespace._directory, self._module, namespace._limits_for(self._module),
                                       trusted=False)
