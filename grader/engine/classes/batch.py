"""A class graded as a sequence of independent gradings: judges that take student after student.

:func:`grade_class` starts ``jobs`` judges. Each is one pytest session
that collects the checks once and then grades student after student
(:class:`_Batch`): pytest's start-up, the fork servers' imports and every
answer of the reference are paid once per judge, not per student. A judge
takes the next student whenever it is free and sends back that student's
whole result as plain data, after every worker of that student is gone; the
caller's ``record`` writes it (the gradebook's files are the reports'
business, not the engine's).

No student stops the class. Whatever grading one student raises (a zip that
cannot be read, a notebook the judge cannot turn into a module, a result it
cannot encode) becomes that student's result, ``invalid`` or ``crashed``
with a one-line reason, and the judge goes on. A judge that dies in the
middle of a student (killed by the machine, by another user, or by a route
of the student's that nothing else stopped) costs that student alone: they
are graded again once on a new judge, and if that one dies too they are
recorded as ``judge-died`` (:attr:`~grader.engine.results.ErrorKind.JUDGE_DIED`),
and a new judge takes the rest. Nothing of one student (prints, copies, errors)
outlives their turn: it lives in the grading's per-submission state, which
:meth:`grader.engine.plugin.Grading.end_submission` clears.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from grader.engine import errors, options, plugin, registry
from grader.engine.classes import runner
from grader.engine.confinement import fork_servers
from grader.engine.confinement.scratch import run_prefix
from grader.engine.results import ErrorKind, SubmissionResult, crashed
from grader.engine.submissions import intake, notebooks
from grader.engine.submissions.intake import Student, one_line

DEATHS = 2  # judges that may die grading one student: the first death is graded again, the second recorded
JUDGE_DIED = "the grader's process grading you was killed twice; nothing of yours was graded: "
SUBMISSION = "your submission"  # how a message names the folder graded: the student's, or one unpacked for them


def identified(result: SubmissionResult, student: Student) -> SubmissionResult:
    """``result`` as the student's, with who they are as the export says: every file written from it shows it."""
    result.submission, result.name, result.email, result.late = student.id, student.name, student.email, student.late
    return result


def described(error: BaseException) -> str:
    """An exception as one line that names it: ``UnicodeEncodeError: ...``, ``zlib.error: ...``."""
    kind = type(error)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
    return one_line(f"{name}: {error}")


# -- a judge: one pytest session, student after student ---------------------------------------


class _SessionBroken(Exception):
    """Something raised inside pytest's own run of a check: the session's state can no longer be trusted."""


class _Batch:
    """A pytest plugin that replaces the run loop: each student read from ``requests`` runs every check.

    It answers the coordinator one JSON line at a time: ``ready`` once the checks are collected, then per
    student either its result or ``crashed`` with a one-line reason (with ``stopping`` when this judge can
    grade no one else), or ``fatal`` when no student can be graded on this machine.
    """

    def __init__(self, requests, replies):
        self.requests, self.replies = requests, replies

    @staticmethod
    @pytest.hookimpl(trylast=True)  # once the plugin's Grading is registered
    def pytest_configure(config):
        plugin.grading(config).batch = True

    @pytest.hookimpl(tryfirst=True)  # instead of pytest's own loop, which would run each check once
    def pytest_runtestloop(self, session):
        self.reply(ready=True)
        for line in self.requests:
            student = Student(**json.loads(line))
            try:
                result = self.graded(session, student)
                answer = json.dumps({"student": student.id, "result": result.to_plain()})
            except errors.KitError as error:  # raised only where no student's code runs: the machine's fault
                self.reply(fatal=one_line(error))
                return True
            except _SessionBroken as error:  # pytest's state is unknown now: this judge stops, another takes the rest
                self.reply(student=student.id, crashed=described(error.__cause__), stopping=True)
                return True
            except Exception as error:  # anything one submission makes happen is that submission's result
                self.reply(student=student.id, crashed=described(error))
            else:
                self.send(answer)
        return True

    def reply(self, **fields):
        self.send(json.dumps(fields))

    def send(self, line: str):
        self.replies.write(line + "\n")
        self.replies.flush()

    def graded(self, session, student: Student):
        """Unpack, turn notebooks into modules, grade: the student's result."""
        with tempfile.TemporaryDirectory(prefix=run_prefix("student"), ignore_cleanup_errors=True) as scratch:
            folder, problem = Path(scratch), student.problem  # a submission with a problem is not read at all
            if not problem:
                try:
                    folder = intake.unpacked(student, Path(scratch))
                except ValueError as error:
                    problem = str(error)
            if problem:
                result = self.grade_one(session, folder, problem)
            else:  # notebooks become modules before grading: the engine only ever grades modules
                with notebooks.module_folder(folder, keep_going=True) as modules:
                    result = self.grade_one(session, modules, problem)
        return identified(result, student)

    @staticmethod
    def grade_one(session, folder: Path, problem: str):
        grading = plugin.grading(session.config)
        grading.begin_submission(folder, problem, shown=SUBMISSION)
        try:
            for index, item in enumerate(session.items):
                following = session.items[index + 1] if index + 1 < len(session.items) else None
                item.ihook.pytest_runtest_protocol(item=item, nextitem=following)
                if session.shouldfail or session.shouldstop:
                    raise session.Interrupted(session.shouldstop or session.shouldfail)
        except Exception as error:
            raise _SessionBroken() from error
        finally:
            result = grading.end_submission()  # the student's workers stop whatever happened
        return result


def serve(argv: list[str]) -> int:
    """A judge (``serve([FD, SERVERS, *PYTEST_ARGS])``): students from stdin, a line per student to FD.

    SERVERS names the copies of the coordinator's fork servers this judge forks its workers from (JSON:
    kind -> [descriptor, log]).
    """
    replies, pytest_args = os.fdopen(int(argv[0]), "w"), argv[2:]
    for needs, (descriptor, log) in json.loads(argv[1]).items():
        fork_servers.adopt(needs, descriptor, log)
    requests = os.fdopen(os.dup(0), "r")  # pytest's capture points descriptor 0 at /dev/null
    runner.stop_cleanly_on_sigterm()
    options.stay_offline()
    with runner.plugins_named_only(), open(os.devnull, "w") as quiet:
        sys.stdout = quiet  # pytest's own reporting is not wanted here; errors still reach stderr
        code = pytest.main([*pytest_args, "-p", "no:terminal"], plugins=[_Batch(requests, replies)])
    if code == pytest.ExitCode.INTERRUPTED:
        return 130
    return 0 if code in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED) \
        else int(code)


# -- the coordinator ------------------------------------------------------------------------------


def grade_class(todo: list[Student], jobs: int, exercises: list[registry.Exercise], pytest_args: list[str],
                record, workdir: Path) -> str:
    """Feed ``todo`` to ``jobs`` judges until all are graded; why the batch stopped, if it did ("" if not).

    ``record(student, result)`` is called in this process for every student finished, graded or crashed,
    in the order they finish; judges run pytest with ``pytest_args`` (:func:`grader.engine.classes.runner.pytest_args`)
    in ``workdir``.
    """
    batch = _Coordinator(todo, exercises, pytest_args, record, workdir)
    try:
        for _ in range(min(jobs, len(todo))):
            batch.start_judge()
        while batch.selector.get_map():
            for key, _ in batch.selector.select():
                if failure := batch.handle(key.data):
                    return failure
        return ""
    finally:
        batch.stop()


class _Coordinator:
    """The students waiting, the judges grading them, and what each judge's replies mean.

    A judge whose pytest session broke says so: that student is recorded as crashed. A judge that dies
    while it holds a student (killed, even before it was ready) hands that student to a new judge, first in
    line, once (:data:`DEATHS` judges in all); a student whose judges all died is recorded as judge-died with
    the last one's end, and a new judge takes the rest. Only a judge that stops by itself before it is
    ready (a usage error of pytest's), or one that finds this machine unable to grade anyone (``fatal``),
    stops the batch.
    """

    def __init__(self, todo: list[Student], exercises: list[registry.Exercise], pytest_args: list[str], record,
                 workdir: Path):
        self.queue, self.exercises, self.pytest_args = list(todo), exercises, pytest_args
        self.record, self.workdir = record, workdir
        self.selector = selectors.DefaultSelector()
        self.judges: list[_Judge] = []
        self.deaths: dict[str, int] = {}  # student id -> how many judges died grading them
        self.fork_servers = fork_servers.shared(exercises)  # imported once for the class, a copy per judge

    def start_judge(self):
        judge = _Judge(self.pytest_args, self.workdir, self.fork_servers)
        self.judges.append(judge)
        self.selector.register(judge.replies, selectors.EVENT_READ, judge)
        judge.give(self.queue.pop(0) if self.queue else None)

    def handle(self, judge: "_Judge") -> str:
        """Act on the judge's next reply: why the batch must stop, or ""."""
        reply = judge.next_reply()
        if reply is None:  # the judge stopped
            if judge.current is None:  # it had finished
                self.retire(judge)
                return ""
            if judge.interrupted():  # Ctrl-C reached the judges first: the grading stops, nobody is to blame
                raise KeyboardInterrupt
            if not judge.ready and not judge.killed():
                return judge.failure()
            reply = self.died(judge)
            if reply is None:
                return ""
        if "fatal" in reply:  # decided before the student's code ran: this machine's fault, not theirs
            return f"no student can be graded here: {one_line(reply['fatal'], 600)}"
        if "ready" in reply:
            judge.ready = True
            return ""
        student = judge.current
        if reply.get("stopping"):
            self.retire(judge)
        else:
            judge.give(self.queue.pop(0) if self.queue else None)
        try:
            if "judge_died" in reply:
                result = crashed(student.id, self.exercises, one_line(reply["judge_died"]), ErrorKind.JUDGE_DIED,
                                 said=JUDGE_DIED)
            elif "crashed" in reply:
                result = crashed(student.id, self.exercises, one_line(reply["crashed"]))
            else:
                result = SubmissionResult.from_plain(reply["result"])
            self.record(student, identified(result, student))
        except Exception as error:  # a result that cannot be read or written is that student's alone
            self.record(student, identified(crashed(student.id, self.exercises, described(error)), student))
        return ""

    def died(self, judge: "_Judge") -> dict | None:
        """A judge died holding a student: None once the student waits, first in line, for a new judge; the
        reply that records them judge-died once :data:`DEATHS` judges have died grading them."""
        student = judge.current
        self.deaths[student.id] = self.deaths.get(student.id, 0) + 1
        if self.deaths[student.id] < DEATHS:
            self.queue.insert(0, student)
            self.retire(judge)  # the new judge it starts takes them at once
            return None
        return {"judge_died": judge.why(), "stopping": True}

    def retire(self, judge: "_Judge"):
        """Give this judge no more students; while students wait, a new judge takes its place."""
        self.selector.unregister(judge.replies)
        judge.current = None
        if self.queue:
            self.start_judge()

    def stop(self):
        for judge in self.judges:
            judge.stop()
        for server in self.fork_servers.values():
            server.close()


class _Judge:
    """A judge process and the student it is grading."""

    def __init__(self, pytest_args: list[str], workdir: Path, shared: dict[str, fork_servers.SharedForkServer]):
        reader, writer = os.pipe()
        self.errors = tempfile.TemporaryFile()
        copies = {needs: server.copy() for needs, server in shared.items()}
        servers = json.dumps({needs: [copy.fileno(), str(shared[needs].log)] for needs, copy in copies.items()})
        same_kit = (f"import sys; sys.path.insert(0, {str(registry.PACKAGE_DIR.parent)!r}); "  # the coordinator's code
                    "from grader.engine.classes.batch import serve; sys.exit(serve(sys.argv[1:]))")
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", same_kit, str(writer), servers, *pytest_args],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self.errors,
                pass_fds=[writer, *(copy.fileno() for copy in copies.values())], text=True, cwd=workdir)
        finally:
            os.close(writer)
            for copy in copies.values():
                copy.close()
        self.replies = os.fdopen(reader, "r")
        self.current: Student | None = None
        self.ready = False  # it has collected the checks and reads students

    def give(self, student: Student | None):
        self.current = student
        try:
            if student is None:
                self.process.stdin.close()  # no more students: the judge finishes its session and exits
            else:
                self.process.stdin.write(json.dumps(student.__dict__) + "\n")
                self.process.stdin.flush()
        except (BrokenPipeError, ValueError):  # it has stopped already; its end of the replies says so next
            pass

    def next_reply(self) -> dict | None:
        """The judge's next reply, or None once it has stopped (a line cut short by its death included)."""
        line = self.replies.readline()
        return json.loads(line) if line.endswith("\n") else None

    def interrupted(self) -> bool:
        """Whether the judge stopped because it was interrupted (Ctrl-C reaches every process of a terminal)."""
        return self.process.wait() in (130, -signal.SIGINT)

    def failure(self) -> str:
        """Why a judge that never started grading stopped: a usage error of pytest's, or its last line."""
        lines = self._error_lines()
        usage = [line.removeprefix("ERROR: ") for line in lines if line.startswith("ERROR: ")]
        why = usage[0] if usage else (lines[-1] if lines else self._exit())
        return one_line(f"a judge stopped while grading {self.current.id}: {why}")

    def why(self) -> str:
        """Why a judge stopped in the middle of a student, in one line: its last error line, or how it ended."""
        lines = [line.removeprefix("INTERNALERROR> ") for line in self._error_lines()]
        return one_line(f"the judge grading it stopped ({lines[-1] if lines else self._exit()})")

    def _error_lines(self) -> list[str]:
        self.process.wait()
        self.errors.seek(0)
        return [line for line in self.errors.read().decode(errors="replace").splitlines() if line.strip()]

    def killed(self) -> bool:
        """Whether a signal ended the judge (rather than the judge stopping by itself)."""
        return self.process.wait() < 0

    def _exit(self) -> str:
        code = self.process.returncode
        return f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()  # a judge stops cleanly on SIGTERM, which nohup does not ignore
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        try:
            self.process.stdin.close()
        except (BrokenPipeError, ValueError):
            pass
        self.replies.close()
        self.errors.close()
