"""The kit's steps for nbgrader's autograde: a course's notebooks graded by the engine, in confinement.

A course made by ``softlookup release nbgrader`` puts :class:`GradeInConfinement`
in place of nbgrader's ``Execute`` in ``Autograde.autograde_preprocessors``,
and :class:`DropUnsoundMetadata` in place of its ``DeduplicateIds`` in
``Autograde.sanitize_preprocessors``. nbgrader's other steps stay: it still
copies and sanitizes the submission, saves the scores (``SaveAutoGrades``
reads each test cell's outputs, as it always does), applies late penalties,
and keeps formgrader, manual grading and feedback. Only what decides the
scores changes hands, and nothing in one student's notebook can stop the
run for the others.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from nbformat.v4 import new_output
from nbgrader.coursedir import CourseDirectory
from nbgrader.nbgraderformat import MetadataValidator
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Float

from grader.engine import options
from grader.engine import registry
from grader.engine.submissions.digests import fingerprint
from grader.engine.classes.runner import run_checks
from grader.engine.confinement import system
from grader.engine.options import Options
from grader.engine.results import redacted
from grader.engine.results import CheckResult, SubmissionResult
from grader.engine.submissions import notebooks
from grader.engine.submissions.intake import one_line
from grader.reports.verdicts import verdict

CHECK_PREFIX = "check-"  # a test cell's grade_id is "check-<check>" (grader.releases.nbgrader_course)

# The last submission graded: nbgrader autogrades a student's notebooks one after another, and makes a
# new preprocessor for each, so one grading serves them all from here. Keyed by the folder and its files.
_last: tuple[tuple, SubmissionResult] | None = None
# What DropUnsoundMetadata took out of a notebook, for GradeInConfinement to show in that notebook's feedback:
# (student, notebook) -> one line per cell.
_dropped: dict[tuple[str, str], list[str]] = {}


class DropUnsoundMetadata(NbGraderPreprocessor):
    """Take out of a submitted notebook the nbgrader metadata that would stop ``nbgrader autograde`` for everyone.

    Why: nbgrader's ``DeduplicateIds``, which this step replaces, empties the
    metadata of the earlier cells that repeat a ``grade_id`` (a test or
    solution cell copied in JupyterLab keeps its metadata); nbgrader's own
    schema check then takes the emptied metadata for "an old version of the
    nbgrader metadata format", an error that ends the whole run, so no
    student after this one is autograded. Metadata of another schema version
    does the same. This step runs first and keeps nbgrader's rule (of the
    cells that share a ``grade_id``, the last keeps it), but takes the other
    cells' metadata out whole, and takes out the metadata of any cell that
    nbgrader's validator refuses: those cells become ordinary cells, so
    nbgrader's later steps only ever see metadata they accept. What that
    costs is the student's alone (a test cell whose metadata is gone is not
    scored), and each cell is named in nbgrader's log and, through
    :class:`GradeInConfinement`, in the notebook's feedback.
    """

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        validator, kept_ids, dropped = MetadataValidator(), set(), []
        for number in range(len(nb.cells), 0, -1):  # from the last cell up, as nbgrader deduplicates
            cell = nb.cells[number - 1]
            if "nbgrader" not in cell.get("metadata", {}):
                continue
            why = _unsound(validator, cell, kept_ids)
            if why:
                del cell.metadata["nbgrader"]
                dropped.append(f"cell {number} of {info['notebook']}.ipynb {why}: it counts as an ordinary cell")
                self.log.warning("softlookup: %s (student %s)", dropped[-1], info["student"])
        if dropped:
            _dropped[(info["student"], info["notebook"])] = dropped[::-1]
        return nb, resources


def _unsound(validator: MetadataValidator, cell, kept_ids: set) -> str:
    """Why a cell's nbgrader metadata cannot be left to nbgrader's steps ("" if it can); ``kept_ids``: the
    grade ids of the cells below it that keep theirs."""
    try:
        validator.validate_cell(cell)  # a version other than nbgrader's, a field missing or of the wrong type
        meta = cell.metadata["nbgrader"]
        grade_id = meta["grade_id"] if meta["grade"] or meta["solution"] or meta["locked"] else None
    except Exception as error:  # whatever the student wrote there, nbgrader's validator or a lookup fails on it
        return f"has nbgrader metadata that nbgrader refuses ({one_line(f'{type(error).__name__}: {error}', 160)})"
    if grade_id is None:
        return ""
    if grade_id in kept_ids:
        return f"repeats the grade_id {one_line(repr(grade_id), 80)} of a cell below it (a copied cell?)"
    kept_ids.add(grade_id)
    return ""


LIMITS = ("time_limit", "import_time_limit", "memory_limit", "time_budget")  # softlookup grade's, configurable


def _limit(name: str) -> Float:
    """One of softlookup grade's limits as a setting of nbgrader's configuration, with the option's help."""
    return Float(None, allow_none=True, help=options.DECLARED[name]["help"]).tag(config=True)


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

    Its limits are ``softlookup grade``'s options, set in ``nbgrader_config.py``
    (``c.GradeInConfinement.time_limit = 10``); unset, the kit's defaults.
    """

    time_limit = _limit("time_limit")
    import_time_limit = _limit("import_time_limit")
    memory_limit = _limit("memory_limit")
    time_budget = _limit("time_budget")

    def grading_options(self) -> Options:
        """Full confinement, and the limits configured; a limit that is wrong is one line naming its setting."""
        limits = {name: getattr(self, name) for name in LIMITS}
        chosen = Options(require_isolation=True, **limits)
        if problem := chosen.problem():
            for name in LIMITS:
                problem = problem.replace(options.flag(name), f"c.GradeInConfinement.{name}")
            raise ValueError(f"nbgrader_config.py: {problem}")
        return chosen

    def preprocess(self, nb, resources):
        student, assignment = resources["nbgrader"]["student"], resources["nbgrader"]["assignment"]
        exercise = registry.BY_MODULE.get(resources["nbgrader"]["notebook"])
        converter = getattr(self.parent, "parent", None)  # nbgrader's Autograde, which made our exporter
        coursedir = getattr(converter, "coursedir", None) or CourseDirectory(parent=self)
        submitted = Path(coursedir.format_path(coursedir.submitted_directory, student, assignment))
        # The course holds the reference (its source notebooks), every student's work and nbgrader's gradebook:
        # where the files rest on their modes (root, no Landlock), it is closed to the workers' uids first.
        system.close_to_workers([coursedir.root])
        result = self.graded(submitted)
        dropped = _dropped.pop((student, resources["nbgrader"]["notebook"]), [])
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
                cell.outputs = outputs(result, exercise, str(meta.get("grade_id", "")))
                cell.execution_count = None
                if dropped:  # said once, in the first test cell: what feedback shows of DropUnsoundMetadata
                    note = "\n".join(f"softlookup: {line}" for line in dropped) + "\n"
                    cell.outputs.insert(0, new_output("stream", name="stdout", text=note))
                    dropped = []
        return nb, resources

    def graded(self, folder: Path) -> SubmissionResult:
        """The engine's result for the submission in ``folder``, graded once while its files are unchanged."""
        global _last
        key = (str(folder), fingerprint(folder))  # the warm server's rule: every file, a link as a link
        if _last is None or _last[0] != key:
            exercises = [e for e in registry.EXERCISES if os.path.lexists(folder / f"{e.module}.ipynb")]
            started = time.monotonic()
            with notebooks.module_folder(folder, prefer_notebooks=True, keep_going=True) as modules:
                result = run_checks(modules, exercises, self.grading_options())
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
