"""What a graded class turns into: per-student files, the gradebook, and (from :mod:`grader.reports.summary`) the
reteach summary.

Every function here reads :class:`~grader.engine.results.SubmissionResult` objects
and nothing else; ``softlookup grade`` calls them, and a class graded by any
other road (the Gradescope autograder, say) could call them too.

Per student, in :func:`student_folder` ``(OUT, id)`` (``OUT/<student>/``, the id
itself unless it could be taken for one of the kit's own files):
``softlookup.json`` (the whole result, which also marks the student as
graded), ``results.json`` (Gradescope's schema), ``feedback.md`` and
``feedback.html``. For the class, in ``OUT/``: :data:`CLASS_FILES`,
``grades.csv``, ``summary.md`` and ``summary.html``, and the gradebook
import of the platform the class came from (:mod:`grader.platforms`).

Everything a student wrote is inert wherever it lands: what the student sees
is :func:`~grader.engine.results.redacted` (a hidden check says that it
failed, never its inputs, expected values or prints), the same for
results.json, feedback.md and feedback.html; a spreadsheet takes no cell of a
student's for a formula (:func:`csv_text`); Markdown quotes a student's text
as text and HTML escapes it (:mod:`grader.reports.feedback`, one model rendered as both).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
from pathlib import Path

from grader.engine.results import SubmissionResult, redacted, sync_folder, writable, writable_copy, write_atomically
from grader.engine.submissions.intake import NAME_BYTES
from grader.reports import feedback, integrity, shards, summary
from grader.reports.gradescope import gradescope
from grader.reports.inert import csv_text
from grader.reports.integrity import Integrity
from grader.reports.verdicts import points

RESULT_FILE = "softlookup.json"
CLASS_FILES = ("grades.csv", "summary.md", "summary.html")  # the kit's own files in OUT, beside the students' folders
# The gradebook imports written beside them for the platform a class came from (grader.platforms): no student's.
IMPORT_FILES = ("canvas-gradebook.csv", "moodle-grading-worksheet.csv")
RESERVED = CLASS_FILES + IMPORT_FILES + (shards.MARKER,)  # names no student's folder takes
_MARK = "_"  # what starts a student's folder whose id cannot be its name


# -- where a student's files go ------------------------------------------------------------------


def student_folder(out: Path, student: str) -> Path:
    """The folder of ``student``'s files in ``out``: where they are written and where a rerun finds them.

    It is named by the id, except for an id that could be taken for one of
    the kit's own entries in ``out``: one of :data:`RESERVED` (in any case,
    for file systems that ignore case), a hidden name (``.x``, as the kit's
    temporary files are), an empty one, or one that starts with ``_`` itself;
    those get ``_`` in front (``grades.csv`` -> ``_grades.csv``, ``_x`` ->
    ``__x``), so no two ids share a folder and no id takes a kit file's name.
    An id that cannot be a file name at all (too long, a ``/``, text the file
    system cannot encode) gets ``_~``, a readable part and a digest of the id.
    """
    name = student
    if not name or name.startswith((".", _MARK)) or name.casefold() in {f.casefold() for f in RESERVED}:
        name = _MARK + name
    if "/" in name or "\0" in name or writable(name) != name or len(name.encode("utf-8")) > NAME_BYTES:
        digest = hashlib.sha256(student.encode("utf-8", "surrogatepass")).hexdigest()[:20]
        readable = writable(student).replace("/", "_").replace("\0", "_").encode("utf-8")[:200]
        name = f"{_MARK}~{readable.decode('utf-8', 'ignore')}-{digest}"
    return Path(out) / name


def write_class(out: Path, graded: dict[str, SubmissionResult], exercises: list[str],
                findings: Integrity | None = None):
    """The class's files in ``out`` (:data:`CLASS_FILES`): the gradebook and the summary, in Markdown and HTML.

    A folder in the way (a student's, from a version of the kit that named
    every folder by its id) is moved to where :func:`student_folder` puts it.
    """
    out = Path(out)
    for name in RESERVED:
        if (out / name).is_dir() and not (out / name).is_symlink():
            os.rename(out / name, student_folder(out, name))  # refuses, rather than merges, if that exists too
    write_atomically(out / "grades.csv", grades_csv(graded, exercises, findings))
    write_atomically(out / "summary.md", summary.markdown(graded, findings))
    write_atomically(out / "summary.html", summary.page(graded, findings))


# -- a student's feedback ------------------------------------------------------------------------


def feedback_texts(result: SubmissionResult, student: str) -> tuple[str, str]:
    """feedback.md and feedback.html: one :func:`grader.reports.feedback.model` (redacted there), rendered as
    Markdown and as a page."""
    told = feedback.model(result, student)
    return feedback.markdown(told), feedback.page(told)


def write_student(folder: Path, student: str, result: SubmissionResult, graded_with: dict | None = None):
    """The student's four files in ``folder`` (:func:`student_folder`): :func:`write_feedback`, then
    :func:`write_record`, which marks the student as graded."""
    write_feedback(folder, student, result)
    write_record(folder, student, result, graded_with)


def write_feedback(folder: Path, student: str, result: SubmissionResult):
    """results.json, feedback.md and feedback.html in ``folder``, redacted, each one's content on the disk
    before its name (:func:`write_record` puts the names there, with the record's)."""
    folder.mkdir(parents=True, exist_ok=True)
    shown = redacted(result)  # once for the three (each would redact it again, to the same)
    write_atomically(folder / "results.json", json.dumps(gradescope(shown), indent=2) + "\n", durable=True)
    text, page = feedback_texts(shown, student)
    write_atomically(folder / "feedback.md", text, durable=True)
    write_atomically(folder / "feedback.html", page, durable=True)


def write_record(folder: Path, student: str, result: SubmissionResult, graded_with: dict | None = None):
    """softlookup.json, the instructor's record (:func:`record`), whose presence marks the student as graded,
    with ``graded_with``: what the grading read (the student's work, the settings), by which a later run
    tells whether it still holds. On the disk when this returns, with the names of the files written before
    it in ``folder`` (so a power cut never leaves a record without the feedback it stands on)."""
    plain = {"student": student, "graded_with": graded_with or {}, **record(result).to_plain()}
    write_atomically(folder / RESULT_FILE, json.dumps(plain) + "\n", durable=True)
    sync_folder(folder)  # the record's name, and those of the files it stands on, written before it
    sync_folder(folder.parent)  # the student's folder itself


def record(result: SubmissionResult) -> SubmissionResult:
    """What softlookup.json keeps: the whole result, hidden messages included, its texts writable, less
    what learner code printed during a check it passed, which no report shows (and which, kept, would grow
    the record with every call of a student who prints)."""
    kept = writable_copy(result)
    for exercise in kept.exercises:
        for check in exercise.checks:
            if check.passed:
                check.printed = ""
    return kept


def read_student(folder: Path) -> tuple[str, SubmissionResult, dict] | None:
    """A graded student's id, result and what the grading read (:func:`write_record`), or None if ``folder``
    (:func:`student_folder`) holds no complete result."""
    try:
        plain = json.loads((folder / RESULT_FILE).read_text())
        graded_with = plain.pop("graded_with", {})
        return plain.pop("student"), SubmissionResult.from_plain(plain), dict(graded_with)
    except (OSError, ValueError, KeyError, TypeError):
        return None


# -- the class -----------------------------------------------------------------------------------


def grades_csv(graded: dict[str, SubmissionResult], exercises: list[str], findings: Integrity | None = None) -> str:
    """``student,name,email,late,score,max_score,status``, one column per exercise, ``edition`` (the kit that
    graded the row, :func:`grader.engine.edition.kit_edition`) and, for GitHub Classroom's clones, the kit's files
    each repository changed; a row per student.

    The id, name and email are the students' text (as the export gave them) and go through :func:`csv_text`;
    every other cell is the kit's (a number, a status, ``yes`` for a late submission) and stays as it is, so
    the numbers stay numbers. Lines end in CRLF, as RFC 4180 has it: the csv module quotes a cell only for
    the line ending it writes, and a lone CR in an unquoted cell would start a new row in a spreadsheet.
    """
    return grades_table({student: grade_row(student, result, exercises) for student, result in graded.items()},
                        exercises, findings)


def grade_row(student: str, result: SubmissionResult, exercises: list[str]) -> list[str]:
    """The student's row of :func:`grades_csv`, its cells as written."""
    scores = {exercise.name: exercise.score for exercise in result.exercises}
    return [csv_text(student), csv_text(result.name), csv_text(result.email), "yes" if result.late else "",
            points(result.score), points(result.max_score), result.status,
            *[points(scores.get(name, 0.0)) for name in exercises], result.edition]


def grades_table(rows: dict[str, list[str]], exercises: list[str], findings: Integrity | None = None) -> str:
    """:func:`grades_csv` from rows already made (:func:`grade_row`), by student id: a class run keeps them, and
    writes the gradebook again after each student for the price of joining them."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")  # RFC 4180's: a cell holding either is then quoted
    kit_column = findings is not None and findings.kit_changes is not None  # read from GitHub Classroom
    writer.writerow(["student", "name", "email", "late", "score", "max_score", "status", *exercises, "edition"]
                    + [integrity.KIT_COLUMN] * kit_column)
    writer.writerows(rows[student] + ([csv_text(integrity.kit_cell(findings, student))] if kit_column else [])
                     for student in sorted(rows))
    return out.getvalue()
