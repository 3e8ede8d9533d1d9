"""A class graded as a sequence of independent gradings: judges that take student after student.

:func:`grade_class` keeps ``jobs`` judges computing. Each is one pytest session
that collects the checks once and then grades student after student
(:mod:`grader.engine.classes.judge`): pytest's start-up, the fork servers' imports and every
answer of the reference are paid once per judge, not per student. A judge
takes the next student whenever it is free and sends back that student's
whole result as plain data, after every worker of that student is gone; the
caller's ``record`` writes it (the gradebook's files are the reports'
business, not the engine's). A judge whose student's call sleeps or stalls
(until the call's limit stops it) says so, and while it waits another judge,
idle or new, takes the next student: a processor is never left idle for a
student who computes nothing (:meth:`_Coordinator.dispatch`).

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

from grader.engine import registry
from grader.engine.confinement import fork_servers
from grader.engine.results import ErrorKind, SubmissionResult, crashed
from grader.engine.submissions.intake import Student, one_line

MOST_JUDGES = 2  # judges per job at most: the others' places, while judges wait on students who compute nothing
DEATHS = 2  # judges that may die grading one student: the first death is graded again, the second recorded
JUDGE_DIED = "the grader's process grading you was killed twice; nothing of yours was graded: "


def identified(result: SubmissionResult, student: Student) -> SubmissionResult:
    """``result`` as the student's, with who they are as the export says: every file written from it shows it."""
    result.submission, result.name, result.email, result.late = student.id, student.name, student.email, student.late
    return result


def described(error: BaseException) -> str:
    """An exception as one line that names it: ``UnicodeEncodeError: ...``, ``zlib.error: ...``."""
    kind = type(error)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
    return one_line(f"{name}: {error}")


# -- the coordinator ------------------------------------------------------------------------------


def grade_class(todo: list[Student], jobs: int, exercises: list[registry.Exercise], pytest_args: list[str],
                record, workdir: Path) -> str:
    """Feed ``todo`` to judges, ``jobs`` of them computing at a time, until all are graded; why the batch stopped,
    if it did ("" if not).

    ``record(student, result)`` is called in this process for every student finished, graded or crashed,
    in the order they finish; judges run pytest with ``pytest_args`` (:func:`grader.engine.options.pytest_command`)
    in ``workdir``.
    """
    batch = _Coordinator(todo, jobs, exercises, pytest_args, record, workdir)
    try:
        batch.dispatch()
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

    def __init__(self, todo: list[Student], jobs: int, exercises: list[registry.Exercise], pytest_args: list[str],
                 record, workdir: Path):
        self.queue, self.jobs, self.exercises, self.pytest_args = list(todo), jobs, exercises, pytest_args
        self.record, self.workdir = record, workdir
        self.selector = selectors.DefaultSelector()
        self.judges: list[_Judge] = []  # every judge started, to stop them all at the end
        self.deaths: dict[str, int] = {}  # student id -> how many judges died grading them
        self.fork_servers = fork_servers.shared(exercises)  # imported once for the class, a copy per judge

    def dispatch(self):
        """Give waiting students to judges until ``jobs`` of them are computing: to an idle judge, else to a new
        one while fewer than :data:`MOST_JUDGES` times ``jobs`` live. Once nobody waits, idle judges are let go.

        A judge whose student's call waits without computing (asleep, stalled on a pipe, until its limit stops
        it) leaves its processor idle; it says so, and for as long as it waits it does not count.
        """
        live = [judge for judge in self.judges if not judge.retired]
        while self.queue and sum(judge.computing for judge in live) < self.jobs:
            idle = next((judge for judge in live if judge.idle), None)
            if idle is not None:
                idle.give(self.queue.pop(0))
            elif len(live) < MOST_JUDGES * self.jobs:
                live.append(self.start_judge(self.queue.pop(0)))
            else:
                break
        if not self.queue:
            for judge in live:
                if judge.idle:
                    judge.give(None)  # it finishes its session and exits

    def start_judge(self, student: Student) -> "_Judge":
        judge = _Judge(self.pytest_args, self.workdir, self.fork_servers)
        self.judges.append(judge)
        self.selector.register(judge.reader, selectors.EVENT_READ, judge)
        judge.give(student)
        return judge

    def handle(self, judge: "_Judge") -> str:
        """Act on the judge's replies that have arrived: why the batch must stop, or ""."""
        for reply in judge.replies():
            if failure := self.act(judge, reply):
                return failure
        return ""

    def act(self, judge: "_Judge", reply: dict | None) -> str:
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
        if "waiting" in reply:
            judge.waiting = reply["waiting"] is True
            self.dispatch()
            return ""
        student, judge.current, judge.waiting = judge.current, None, False
        if reply.get("stopping"):
            self.retire(judge)
        else:
            self.dispatch()  # the next student starts before this one's record is written
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
            self.retire(judge)  # and another judge takes them at once
            return None
        return {"judge_died": judge.why(), "stopping": True}

    def retire(self, judge: "_Judge"):
        """Give this judge no more students; whoever waits goes to another."""
        self.selector.unregister(judge.reader)
        judge.current, judge.retired = None, True
        self.dispatch()

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
                    "from grader.engine.classes.judge import serve; sys.exit(serve(sys.argv[1:]))")
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", same_kit, str(writer), servers, *pytest_args],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self.errors,
                pass_fds=[writer, *(copy.fileno() for copy in copies.values())], text=True, cwd=workdir)
        finally:
            os.close(writer)
            for copy in copies.values():
                copy.close()
        self.reader, self.unread = reader, b""
        self.current: Student | None = None
        self.ready = False  # it has collected the checks and reads students
        self.waiting = False  # its student's call waits without computing (the judge said so)
        self.finishing = self.retired = False  # it was told no student follows; it takes no more

    @property
    def idle(self) -> bool:
        """Alive, holding no student, and able to take one."""
        return self.current is None and not self.finishing and not self.retired

    @property
    def computing(self) -> bool:
        """Holding a student (or starting, with its first) and not waiting on them: it has a processor's work."""
        return self.current is not None and not self.waiting

    def give(self, student: Student | None):
        self.current = student
        try:
            if student is None:
                self.finishing = True
                self.process.stdin.close()  # no more students: the judge finishes its session and exits
            else:
                self.process.stdin.write(json.dumps(student.__dict__) + "\n")
                self.process.stdin.flush()
        except (BrokenPipeError, ValueError):  # it has stopped already; its end of the replies says so next
            pass

    def replies(self) -> list[dict | None]:
        """The replies that arrived whole since the last look, with None last once the judge has stopped (a line
        cut short by its death included). Read in one go: a reply may follow another at once, and a line left in
        a reader's buffer would never wake the selector."""
        chunk = os.read(self.reader, 2**20)
        *lines, self.unread = (self.unread + chunk).split(b"\n")
        return [json.loads(line) for line in lines] + ([] if chunk else [None])

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
        os.close(self.reader)
        self.errors.close()
