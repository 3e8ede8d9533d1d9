"""The kit's autograde step for nbgrader: a course's notebooks graded by the engine, in confinement.

A course made by ``softlookup release nbgrader`` puts :class:`GradeInConfinement`
in place of nbgrader's ``Execute`` in ``Autograde.autograde_preprocessors``.
nbgrader's other steps stay: it still copies and sanitizes the submission,
saves the scores (``SaveAutoGrades`` reads each test cell's outputs, as it
always does), applies late penalties, and keeps formgrader, manual grading and
feedback. Only what decides the scores changes hands.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from nbformat.v4 import new_output
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor

from grader.engine.options import Options
from grader.engine.runner import run_checks
from grader.engine.results import redacted
from grader.engine import notebooks, registry
from grader.engine.results import CheckResult, SubmissionResult
from grader.reports.verdicts import verdict

CHECK_PREFIX = "check-"  # a test cell's grade_id is "check-<check>" (grader.releases.nbgrader_course)

# The last submission graded: nbgrader autogrades a student's notebooks one after another, and makes a
# new preprocessor for each, so one grading serves them all from here. Keyed by the folder and its files.
_last: tuple[tuple, SubmissionResult] | None = None


class GradeInConfinement(NbGraderPreprocessor):
    """Write each autograded test cell's verdict from one engine grading of the whole submission.

    Why: nbgrader's ``Execute`` runs the student's notebook in the same kernel
    as its test cells, so any cell can rebind what a later test cell calls,
    patch a builtin, or stall the kernel past the test cells. This step never
    runs a cell. It makes the submitted notebooks of the assignment (one
    folder: ``from softmax import softmax`` in ``lookup.ipynb`` reads the
    student's ``softmax.ipynb``) into modules and grades them as ``softlookup
    grade`` does: every call into student code in a confined worker with its
    own limits, ``--require-isolation``. Each test cell then gets its check's
    outcome as output: nothing but "passed" for full points; the points as an
    ``execute_result`` when only some cases passed (nbgrader's partial
    credit); an error output otherwise, with ``softlookup check``'s message,
    which for a hidden check is the redacted one (``generate_feedback`` shows
    these outputs). A test cell it cannot map to a check gets an error, never
    an empty output (which nbgrader would count as full marks). Where the
    submission cannot be graded in confinement, it raises: nbgrader then
    reports that student's autograde as failed, instead of recording zeros.
    """

    def preprocess(self, nb, resources):
        student, assignment = resources["nbgrader"]["student"], resources["nbgrader"]["assignment"]
        exercise = registry.BY_MODULE.get(resources["nbgrader"]["notebook"])
        converter = getattr(self.parent, "parent", None)  # nbgrader's Autograde, which made our exporter
        coursedir = getattr(converter, "coursedir", None) or CourseDirectory(parent=self)
        submitted = Path(coursedir.format_path(coursedir.submitted_directory, student, assignment))
        result = self.graded(submitted)
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
                cell.outputs = outputs(result, exercise, str(meta.get("grade_id", "")))
                cell.execution_count = None
        return nb, resources

    def graded(self, folder: Path) -> SubmissionResult:
        """The engine's result for the submission in ``folder``, graded once while its files are unchanged."""
        global _last
        # lstat: the key never reads through a link (a submitted link out of the folder is refused, not followed).
        key = (str(folder), sorted((p.name, p.lstat().st_size, p.lstat().st_mtime_ns) for p in folder.iterdir()))
        if _last is None or _last[0] != key:
            exercises = [e for e in registry.EXERCISES if os.path.lexists(folder / f"{e.module}.ipynb")]
            started = time.monotonic()
            with notebooks.module_folder(folder, prefer_notebooks=True, keep_going=True) as modules:
                result = run_checks(modules, exercises, Options(require_isolation=True))
            self.log.info("softlookup graded %s in confinement: %g/%g points in %.1f s", folder, result.score,
                          result.max_score, time.monotonic() - started)
            _last = (key, redacted(result))
        return _last[1]


def outputs(result: SubmissionResult, exercise: registry.Exercise | None, grade_id: str) -> list:
    """The outputs that make nbgrader's ``determine_grade`` give test cell ``grade_id`` its check's points."""
    check = grade_id.removeprefix(CHECK_PREFIX)
    cases = [c for e in result.exercises for c in e.checks
             if exercise is not None and c.exercise == exercise.module and c.check == check]
    if not grade_id.startswith(CHECK_PREFIX) or not cases:
        where = exercise.module if exercise else "this notebook"
        return [_error(f"{grade_id} is not a check of {where} that the kit graded: grade this cell by hand")]
    problems = [c for c in cases if not c.passed]
    if not problems:
        return [new_output("stream", name="stdout", text="passed\n")]
    lines = list(dict.fromkeys(_line(c) for c in problems))  # a hidden check's redacted message, once
    points = round(sum(c.points for c in cases), 6)
    if points <= 0:
        return [_error(*lines)]
    words, _ = verdict(cases)
    return [new_output("stream", name="stdout", text="\n".join([words, *lines]) + "\n"),
            new_output("execute_result", data={"text/plain": repr(points)}, execution_count=None)]


def _line(case: CheckResult) -> str:
    """How ``softlookup check`` words a failed case; a hidden check's case ids are left out with its inputs."""
    where = f" [{case.case}]" if case.case and not case.hidden else ""
    return f"{case.check}{where} {'could not run' if case.outcome == 'skipped' else 'failed'}: {case.message}"


def _error(*lines: str):
    return new_output("error", ename="CheckFailed", evalue=lines[0], traceback=list(lines))
