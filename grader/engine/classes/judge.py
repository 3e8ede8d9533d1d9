"""A judge: one pytest session that grades student after student, for :mod:`grader.engine.classes.batch`.

The coordinator starts it as a process of its own (:func:`serve`) and keeps
pytest out of its own imports. The judge collects the checks once, then
reads a student per line on stdin and answers a line per student with their
whole result as plain data, after every worker of that student is gone. Its
other lines say it is ready, that a student's call waits without computing
(or no longer does), or why it can grade no one.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import pytest

from grader.engine import errors, options, plugin
from grader.engine.classes import runner
from grader.engine.classes.batch import described, identified
from grader.engine.confinement import fork_servers
from grader.engine.confinement.scratch import run_prefix
from grader.engine.submissions import intake, notebooks
from grader.engine.submissions.intake import Student, one_line

SUBMISSION = "your submission"  # how a message names the folder graded: the student's, or one unpacked for them


class _SessionBroken(Exception):
    """Something raised inside pytest's own run of a check: the session's state can no longer be trusted."""


class JudgeSession:
    """A pytest plugin that replaces the run loop: each student read from ``requests`` runs every check.

    It answers the coordinator one JSON line at a time: ``ready`` once the checks are collected, then per
    student either its result or ``crashed`` with a one-line reason (with ``stopping`` when this judge can
    grade no one else), or ``fatal`` when no student can be graded on this machine.
    """

    def __init__(self, requests, replies):
        self.requests, self.replies = requests, replies

    @pytest.hookimpl(trylast=True)  # once the plugin's Grading is registered
    def pytest_configure(self, config):
        grading = plugin.grading(config)
        grading.batch = True
        grading.sandbox.on_waiting = self.waiting

    def waiting(self, now: bool):
        """A call of this student's waits without computing (``now``), or no longer does: the coordinator may give
        the processor it leaves idle to another judge."""
        self.reply(waiting=now)

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
        code = pytest.main([*pytest_args, "-p", "no:terminal"], plugins=[JudgeSession(requests, replies)])
    if code == pytest.ExitCode.INTERRUPTED:
        return 130
    return 0 if code in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED) \
        else int(code)
