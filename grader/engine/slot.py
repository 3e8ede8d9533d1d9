"""One folder and module of a grading run's sandbox: its live worker, the protocol of a call, what is known to fail.

A :class:`Slot` is what ``submission.lookup`` becomes for one learner (or for
the reference): it starts a worker forked from a fork server
(:mod:`grader.engine.confinement.fork_servers`), confined unless the code is the kit's, sends
one request at a time and trusts nothing that comes back. The whole exchange
of a call is held to its time limit, in the worker's CPU time with a backstop
for waiting (:mod:`grader.engine.confinement.clock`: a busy machine does not count
against the learner; a worker that sends half a message and sleeps is
stopped like one that loops), every message is size- and shape-checked
before it is decoded, and every field is validated and capped here, whatever
the worker was left with: it runs learner code, which can change its own caps.

A call past its limit kills its worker and is a hang: the function is never
called again for that submission, not even through the modules that import it
(their workers get a stand-in for it that says so). So a loop is waited for
once, for its limit. A first call has no more room than a later one: what the
libraries cost once is paid before learner code runs
(:func:`grader.engine.confinement.zygote.prepare_libraries`).
"""

from __future__ import annotations

import os
import select
import signal
import socket
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from grader.engine import registry
from grader.engine.confinement import clean, clock, codec, fork_servers, framing, messages, scratch
from grader.engine.confinement.policy import IMPORT_TIME_LIMIT, MAX_MESSAGE, MEMORY_LIMIT
from grader.engine.confinement.scratch import ScratchBound, remove_tree
from grader.engine.confinement.zygote import START_TIMEOUT, ForkServer, ForkServerError
from grader.engine.errors import KitError, SubmissionError, hang_label
from grader.engine.results import ErrorKind



@dataclass
class Limits:
    time: float = registry.TIME_LIMIT  # seconds of the worker's CPU time per call, the whole exchange included
    memory: int = int(MEMORY_LIMIT * 2**20)  # bytes the code may allocate on top of the worker's own
    needs: str = "numpy"  # the kind of fork server the worker comes from (registry.NEEDS)
    import_time: float = IMPORT_TIME_LIMIT  # seconds of the worker's CPU time to import the module, once


class WorkerHandle:
    """The judge's handle on one live forked worker: its supervisor and own pid, message socket and status pipe."""

    builds_models_later = False  # confined: every model is built before learner code runs

    def __init__(self, fork_server: ForkServer, settings: dict):
        ours, theirs = socket.socketpair()
        status, status_writer = os.pipe()
        self.conn, self.status, self.pid, self.supervisor = ours, os.fdopen(status, "rb", buffering=0), None, None
        try:
            try:
                self.supervisor = fork_server.spawn(settings, [theirs.fileno(), status_writer])
            finally:
                theirs.close()
                os.close(status_writer)
            kind, number = messages.status_line(self._status_line(START_TIMEOUT))  # Malformed: the kit's, in start()
            if kind != "pid":
                raise messages.Malformed("status line")
            self.pid = number
        except BaseException:  # Ctrl-C while it starts, too: no worker is left that no slot knows to stop
            self.kill()
            raise

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
        try:
            kind, number = messages.status_line(self._status_line(2.0))
        except messages.Malformed:
            return "stopped answering"
        if kind == "signal":
            name = signal.Signals(number).name if number in signal.valid_signals() else f"signal {number}"
            why = "ran out of memory or CPU time" if number in (signal.SIGKILL, signal.SIGXCPU) else "crashed"
            return f"{why} (the process died with {name})"
        if kind == "exit":
            return f"ended the whole process (exit code {number}); return a value instead"
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


# Module -> every model spec calls into it have needed in this process, from sandbox to sandbox (Slot.models_needed).
MODELS_NEEDED: dict[str, set] = {}


def expect_models(module: str, specs):
    """Models that calls into ``module`` will need: its first worker builds them all, none is learned late."""
    MODELS_NEEDED.setdefault(module, set()).update(specs)


@dataclass
class Slot:
    """One folder-and-module pair: its live worker, and what is already known to fail."""

    sandbox: "Sandbox"  # the grader.engine.sandbox.Sandbox that made it (not imported: it imports this)
    directory: str | None  # what the worker imports from (a learner's private copy)
    origin: str | None  # the folder as the learner named it, for messages
    module: str
    limits: Limits
    trusted: bool
    readable: list[str] = field(default_factory=list)
    worker: WorkerHandle | None = None
    clocks: clock.Clocks | None = None  # the live worker's, for as long as it lives
    scratch: Path | None = None
    scratch_bound: ScratchBound | None = None  # the judge's, where no tmpfs of the kernel's bounds the scratch
    built: frozenset = frozenset()  # the models the live worker built before learner code ran
    next_id: int = 0
    import_error: SubmissionError | None = None
    hung: dict = field(default_factory=dict)  # function -> the timeout error it gave (trusted slots)
    reads: frozenset | None = frozenset()  # the folder's files its workers said they read (None: any of them)

    def models_needed(self) -> set:
        """Every GPT-2 (tiny or from disk) that calls into this module have needed, in this process.

        A new worker builds all of them before it imports learner code (the
        fork server has built them already: :mod:`grader.engine.confinement.model_cache`).
        The set outlives sandboxes (:data:`MODELS_NEEDED`), and starts with the
        models the check files declare (:func:`expect_models`), so a worker
        restarts only for a model that no check file named.
        """
        return MODELS_NEEDED.setdefault(self.module, set())

    def known_hangs(self) -> dict:
        """(module, function) -> timeout error, for every function of this slot's folder that ran past its limit.

        A learner's hangs are the sandbox's, per folder, so that every module
        of the submission knows them; a trusted slot keeps its own.
        """
        if self.trusted:
            return {(self.module, function): error for function, error in self.hung.items()}
        return self.sandbox.hung.get(self.origin, {})

    def start(self):
        self.scratch = Path(tempfile.mkdtemp(prefix="scratch-", dir=self.sandbox.root))
        self.built = frozenset(self.models_needed())
        settings = {
            "directory": self.directory, "scratch": str(self.scratch), "memory_limit": self.limits.memory,
            "confined": not self.trusted, "readable": self.readable, "forbidden": self.sandbox.forbidden,
            "models": [codec.to_plain(spec)["model_spec"] for spec in sorted(self.built, key=repr)],
            "output_limit": self.sandbox.printed.limit, "model_builder": registry.MODEL_BUILDER,
            "hung": [] if self.trusted else [[module, function] for module, function in self.known_hangs()],
            "group": self.sandbox.groups.get(self.directory or ""),
        }
        fork_server = fork_servers.server("transformers" if self.built else self.limits.needs)
        try:
            self.worker = (WorkerHandle(fork_server, settings) if isinstance(fork_server, ForkServer)
                           else fork_server.worker(settings))  # spawned where Linux's fork server is missing
            ready = framing.receive(self.worker.conn, time.monotonic() + START_TIMEOUT, MAX_MESSAGE)
        except (ForkServerError, OSError, EOFError, TimeoutError, ValueError, codec.EncodingError) as error:
            self.stop()
            raise KitError(f"a worker could not start ({type(error).__name__}: {error})") from None
        try:
            protections, why = messages.ready(ready)
        except messages.Malformed:
            protections, why = None, "its first message was of an unknown form"
        if why:
            self.stop()
            raise KitError(f"a worker could not be set up ({why})")
        if not self.trusted:
            try:
                self.sandbox.note_protections(protections)
            except KitError:  # refused: the worker goes before any learner code could reach it
                self.stop()
                raise
            if not ready["protections"].get("scratch_capped"):
                self.scratch_bound = ScratchBound(self.scratch, self.worker.pid)
        self.clocks = clock.Clocks(self.worker.pid)  # opened once, read by every call's meter

    def stop(self):
        if self.worker is not None:
            self.worker.kill()
        if self.clocks is not None:
            self.clocks.close()
        if self.scratch is not None:
            remove_tree(self.scratch)
        self.worker = self.clocks = self.scratch = self.scratch_bound = None

    def _exchange(self, op: str, function: str, args, meter: clock.Meter, report_arguments: bool = False) -> dict:
        """Send one request and return the worker's validated answer, all within what ``meter`` allows."""
        self.next_id += 1
        request = {"id": self.next_id, "op": op, "module": self.module, "function": function,
                   "args": codec.to_plain(list(args)), "report_arguments": report_arguments}
        stage = f"importing {self.module}.py" if op == "import" else f"running {function}()"
        deadline = self.scratch_bound.watching(meter) if self.scratch_bound else meter
        told, self.reads = self.reads, None  # until an answer says what the worker read, it may have read anything
        try:
            self.worker.conn.settimeout(meter.waiting_limit)  # the worker reads requests itself
            framing.send(self.worker.conn, request)
            # What the call printed comes first, in a message of its own with a small bound: a worker whose
            # cap was raised by learner code has that message dropped, and its answer still counts.
            printed = framing.receive_or_skip(self.worker.conn, deadline, self.sandbox.printed.message_bytes)
            answer = framing.receive(self.worker.conn, deadline, MAX_MESSAGE)
            bound = self.scratch_bound  # looked at once more as the call ends, unless it just was
            filled = bound.exceeded() if bound and bound.due(scratch.LOOK_AT_THE_END_AFTER) else ""
        except (TimeoutError, socket.timeout):
            meter.charge()  # read the clocks before the worker is gone
            filled = getattr(deadline, "why", "")  # where the scratch was watched: whether its bound ended the wait
            if not filled:
                self.stop()
                raise CallStopped(meter.bound or "waiting") from None
        except (EOFError, ConnectionError, OSError):
            ending = self.worker.ending()
            self.stop()
            raise SubmissionError(ErrorKind.CRASH, f"{ending} while {stage}") from None
        except codec.EncodingError as error:
            self.stop()
            raise SubmissionError(ErrorKind.ENCODING, f"{error} while {stage}") from None
        if filled:  # past its scratch's bound, whatever it answered: stopped, and its files go with it
            self.stop()
            raise SubmissionError(ErrorKind.DISK, f"{filled}: it was stopped")
        return self._validated(printed, answer, told)

    def _validated(self, printed: tuple, answer, told: frozenset | None) -> dict:
        """The answer's fields, each of the type and range expected (:mod:`grader.engine.confinement.messages`), or the
        learner's crash if it is not our message.

        ``printed`` is ``(message, size)`` as :func:`framing.receive_or_skip` read
        it. The judge caps what it keeps itself, whatever cap the worker had:
        the worker runs learner code, which can change its own. ``told`` is what
        the slot's workers had said they read before: the answer adds to it.
        """
        report, size = printed
        try:
            fields = messages.answer(answer, self.next_id)
            self.reads = None if told is None or fields["read"] is None else told | fields["read"]
            if report is not None:
                output, lines = messages.printed_report(report, self.next_id, self.sandbox.printed.limit)
        except messages.Malformed as malformed:
            self.stop()
            raise SubmissionError(ErrorKind.CRASH, f"sent a message the grader did not ask for ({malformed})") \
                from None
        if report is None:
            printed = f"... (more than the grader keeps: {size / 2**20:.1f} MB of printed output)"
        else:
            printed = _printed(output, lines, self.sandbox.printed.lines)
        if "value" in fields:
            return {**fields, "output": printed}
        error: messages.ErrorRecord = fields["error"]
        kind, text, type_name = error.kind, error.message, error.type_name
        if kind == ErrorKind.HUNG and text not in {hang_label(*hung) for hung in self.known_hangs()}:
            kind, type_name = ErrorKind.EXCEPTION, "RanPastItsLimit"  # not one the judge stopped
        if kind == ErrorKind.EXCEPTION:
            text = f"{type_name}: {text}" if text else type_name
        return {"error": SubmissionError(kind, text, where=error.where, output=printed), "output": printed}

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
                ErrorKind.MISSING, f"there is no {self.module}.py in {self.origin}: put your file there, or check the "
                "folder name", f"importing {self.module}.py")
            raise self.import_error
        if not self.trusted:
            self.sandbox.budget.check(f"{self.module}.{function}()")
            self.sandbox.last_call = (self.module, function)
        needed = codec.model_specs(list(args))
        if self.worker is not None and not needed <= self.built and not self.worker.builds_models_later:
            self.stop()  # models are built before learner code runs (it could replace the builder): a new worker
        self.models_needed().update(needed)
        if self.worker is None:  # a fresh worker imports first, so import problems say so
            try:
                self._run("import", "", ())
            except SubmissionError as error:
                self.import_error = error
                if error.kind == ErrorKind.TIMEOUT and not self.trusted:  # the modules that import this one skip it
                    self.sandbox.note_hang(self, "", error)
                raise
        try:
            return self._run("call", function, args, report_arguments)
        except SubmissionError as error:
            if error.kind == ErrorKind.TIMEOUT:  # one hang per function is enough to know
                if self.trusted:
                    self.hung[function] = error
                else:
                    self.sandbox.note_hang(self, function, error)
            raise

    def _run(self, op: str, function: str, args, report_arguments: bool = False):
        label = f"{self.module}.{function}()" if op == "call" else f"importing {self.module}.py"
        time_limit = self.limits.time if op == "call" else self.limits.import_time
        if self.worker is None:  # starting a worker is the kit's work (GPT-2 small from disk included): not timed
            self.start()
        budget = None if self.trusted else self.sandbox.budget.left()
        meter = clock.Meter(self.clocks, time_limit, budget, self.sandbox.on_waiting)
        try:
            answer = self._exchange(op, function, args, meter, report_arguments)
        except CallStopped as stopped:
            if stopped.bound == "budget":  # the budget ran out, not the call's own limit: it is not a hang
                raise SubmissionError(ErrorKind.BUDGET, self.sandbox.budget.spent_message("was stopped"), label) from None
            raise SubmissionError(ErrorKind.TIMEOUT, _overrun(stopped.bound, meter), label) from None
        except SubmissionError as error:
            error.label = label
            raise
        finally:
            meter.end()
            if not self.trusted:
                self.sandbox.budget.charge(meter.charge())
        if answer["output"]:
            self.sandbox.printed.add(label, answer["output"])
        if "error" in answer:
            error = answer["error"]
            error.label = label
            if op == "import" and error.kind == ErrorKind.EXCEPTION:  # no function of it could be called at all
                error.kind = ErrorKind.IMPORT
            raise error
        try:
            value = codec.from_plain(answer["value"])
            if not report_arguments:
                return value
            arguments = codec.from_plain(answer["arguments"])
            if not isinstance(arguments, list) or len(arguments) != len(args):
                raise ValueError("the arguments came back in another form")
            return value, arguments
        except (codec.EncodingError, KeyError, TypeError, ValueError, OverflowError, RecursionError) as exc:
            raise SubmissionError(ErrorKind.ENCODING, f"returned something the grader cannot read ({exc})",
                                  label) from None


class CallStopped(Exception):
    """A call reached one of its meter's bounds: ``bound`` is "computing", "waiting" or "budget"."""

    def __init__(self, bound: str):
        super().__init__(bound)
        self.bound = bound


def _overrun(bound: str, meter: clock.Meter) -> str:
    """What a call (or an import) that ran past its limit did, as :meth:`SubmissionError.explain` tells it."""
    if bound == "waiting":
        return (f"waited for more than {meter.waiting_limit:g} s without computing (a sleep, an input() or a lock "
                "that is never released?): the checks wait for no one")
    return (f"computed for more than its {meter.limit:g} s time limit (of CPU time, however busy the machine): "
            "is there a loop that never ends?")


def _printed(output: str, lines: int, keep: int) -> str:
    """The first ``keep`` lines a call printed, and how many more there were."""
    kept = clean.clean_text(output, len(output)).splitlines()
    total = max(lines, len(kept))
    shown = kept[:keep]
    if total > len(shown):
        shown.append(f"... ({total - len(shown)} more lines)")
    return "\n".join(shown)
