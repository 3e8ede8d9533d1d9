"""Results kept between gradings of one folder, and the rule that says when they still hold.

The warm server answers ``softlookup check`` after ``softlookup check``, and
``--watch`` grades again after every save; both keep what a grading
computed (the reference's and the kit's answers, each exercise's result) in
a :class:`Keeper`. A kept result is given back only while every file its
grading read is as it was, by content, and no file was added to or removed
from the folder (:func:`~grader.engine.submissions.digests.fingerprint` of the folder graded).

What a grading read is what its workers imported or opened of the learner's
folder (:mod:`grader.engine.confinement.reads`: the exercise's module, a helper, a package,
a data file, an exercise imported through another), plus the exercise's own
module whatever they said; a worker whose report cannot be believed, a folder
that holds a link, or a grading whose reads were not told, read everything.
So an edit to ``lookup.py`` grades ``lookup`` alone, and an edit to
``softmax.py`` every exercise that imports it. A worker sees only its private
copy of the folder, so a file's time never reaches it: only contents count.

``softlookup grade`` resumes by a whole student's work instead, across runs
(:func:`~grader.engine.submissions.digests.work_digest`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from grader.engine import plugin, registry
from grader.engine.classes.runner import run_checks
from grader.engine.options import Options
from grader.engine.results import ErrorKind, SubmissionResult
from grader.engine.submissions import notebooks
from grader.engine.submissions.digests import fingerprint

# Why a check gave no answer, when it depends on the moment.
NOT_KEPT = {ErrorKind.TIMEOUT, ErrorKind.MEMORY, ErrorKind.DISK, ErrorKind.CRASH, ErrorKind.KIT}


class Keeper:
    """What is kept between gradings: the trusted answers, and each exercise's last result with what it read."""

    def __init__(self):
        self.answers: dict[str, dict] = {}  # the reference's and the kit's answers, as a grading's sandbox keeps them
        self.answers_stamp = None  # the solutions (and options) they were computed with
        self.results: dict[tuple, tuple] = {}  # (folder, options, exercise) -> (state, result, unprotected)
        self.kept: list[str] = []  # the exercises whose result the last grading kept

    def grade(self, directory: Path, exercises: list[registry.Exercise], chosen: Options = Options(),
              verbose: bool = False) -> SubmissionResult:
        """:func:`run_checks`'s result, grading again each exercise whose grading read a file that changed.

        The fingerprint is taken before grading: a file saved meanwhile changes the next one, never this one.
        """
        self._refresh_answers(chosen)
        now = {name.replace(os.sep, "/"): entry for name, entry in fingerprint(Path(directory), times=False).items()}
        key = (str(learners_folder(Path(directory))), chosen)
        kept = {} if verbose else {  # -v shows pytest's log, which only a real run has
            e.module: found for e in exercises
            if (found := self.results.get((*key, e.module))) and found[0] == self._state(now, found[0][2])}
        todo = [e for e in exercises if e.module not in kept]
        session = _Session(self.answers)
        fresh = (run_checks(directory, todo, chosen, verbose=verbose, plugins=[session])
                 if todo else SubmissionResult(str(directory)))
        for result in fresh.exercises:
            if any(c.error in NOT_KEPT for c in result.checks):
                self.results.pop((*key, result.name), None)
            else:
                read = session.read_by(result.name)
                self.results[(*key, result.name)] = (self._state(now, read), result, fresh.unprotected)
        self.kept = list(kept)
        by_name = {name: found[1] for name, found in kept.items()} | {e.name: e for e in fresh.exercises}
        unprotected = sorted({line for found in kept.values() for line in found[2]} | set(fresh.unprotected))
        return SubmissionResult(fresh.submission, [by_name[e.module] for e in exercises if e.module in by_name],
                                fresh.seconds, unprotected)

    def _state(self, now: dict[str, tuple], read: frozenset | None) -> tuple:
        """What a result graded at ``now`` depends on: the answers' stamp, the folder's entries (a file by name
        alone), the files ``read`` by content (every file where None, or where a link may lead to any)."""
        entries = tuple(sorted((name, "file" if isinstance(entry[0], int) else entry) for name, entry in now.items()))
        if read is None or any(entry[0] == "link" for entry in now.values()):
            read = frozenset(now)
        contents = tuple(sorted((name, now[name]) for name in read if name in now))
        return self.answers_stamp, entries, read, contents

    def _refresh_answers(self, chosen: Options):
        """Forget the trusted answers when the solutions they came from (or the options) are not the same."""
        stamp = (chosen, tuple(fingerprint(chosen.reference_folder).items()))
        if stamp != self.answers_stamp:
            self.answers, self.answers_stamp = {}, stamp


def learners_folder(graded: Path) -> Path:
    """The learner's folder that ``graded`` stands for: itself, or the folder its modules were made from
    (:func:`~grader.engine.submissions.notebooks.module_folder` makes a new one, in a new place, for each check)."""
    made = notebooks.made_from(graded)
    return next(iter(made.values())).parent if made else graded


class _Session:
    """A pytest plugin that gives the grading's sandbox the keeper's trusted answers instead of an empty record,
    and takes what each exercise's checks read."""

    def __init__(self, answers: dict):
        self.answers = answers
        self.reads: dict | None = None  # module -> paths, or None for any; None: the grading never said

    @pytest.hookimpl(trylast=True)
    def pytest_configure(self, config):
        plugin.grading(config).sandbox.answers = self.answers

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session):
        self.reads = plugin.grading(session.config).submission.reads

    def read_by(self, module: str) -> frozenset | None:
        """The files an exercise's grading read, its own module always among them: None for "any file"."""
        if self.reads is None or self.reads.get(module, frozenset()) is None:
            return None
        return self.reads.get(module, frozenset()) | {f"{module}.py"}
