"""Canvas: "Download Submissions" in, a gradebook CSV that Canvas's "Import" takes back out.

In. Canvas zips one flat folder of files, each named (``ContentZipper`` in
instructure/canvas-lms, ``lib/content_zipper.rb``)::

    <sortable name>[_LATE]_<user id>_<attachment id>_<file name>   an uploaded file
    <sortable name>[_LATE]_<user id>_text.html                     a text entry
    <sortable name>[_LATE]_<user id>_link.html                     a URL entry

The sortable name ("Doe, Jane") is lower-cased and stripped of everything but
word characters ("doejane", accents kept), and any ``_<digits>_`` in it is
collapsed so that the first ``_<digits>_`` is always the user id. An
anonymous assignment has ``anon_<anonymous id>`` in place of name and id, with
``LATE_`` before it. Canvas renames a file whose name the student already
used (a resubmission) ``softmax-1.py``, ``softmax-2.py`` (``Attachment.
make_unique_filename``): the newest copy of each exercise file is graded
under the name the student gave it, and the older ones are named as ignored.

Out. The gradebook import (``GradebookImporter``): a header row that starts
``Student, ID`` and ends its student columns with ``Section``
(``Student, ID, SIS User ID, SIS Login ID, Section``, as Canvas's own export
writes), then one column per assignment named ``<title> (<assignment id>)``;
an optional ``Points Possible`` row; a row per student, matched by the ``ID``
column, the Canvas user id the export carries.
"""

from __future__ import annotations

import csv
import io
import os
import re
from pathlib import Path

from grader.reports import inert, verdicts
from grader.engine import registry
from grader.engine.results import SubmissionResult
from grader.engine.intake import Student
from grader.platforms import link_problem, plain_name, printable

NAME = "canvas"
TITLE = "Canvas export"
IMPORT_FILE = "canvas-gradebook.csv"
IMPORT_HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]

_FILE = re.compile(r"""^(?: (?P<name>\w*?)(?P<late>_LATE)?_(?P<user>\d+)              # doejane[_LATE]_12345
                          | (?P<anon_late>LATE_)?(?P<anon>anon_[A-Za-z0-9]+) )       # or [LATE_]anon_x7Kq2
                       _(?: (?P<attachment>\d+)_(?P<file>.+) | (?P<entry>text|link)\.html )$""", re.VERBOSE)
_RESUBMITTED = re.compile(r"^(?P<stem>.+)-(?P<copy>\d+)(?P<suffix>\.[^.]+)$")
# The files an exercise is graded from: only these are renamed back when Canvas numbered a resubmission.
_EXERCISE_FILES = {f"{e.module}{suffix}" for e in registry.EXERCISES for suffix in (".py", ".ipynb")}


def recognised(entry: os.DirEntry) -> bool:
    return entry.is_file(follow_symlinks=False) and _FILE.match(entry.name) is not None


def read(folder: Path, entries: list[os.DirEntry]) -> tuple[list[Student], list[tuple[str, str]]]:
    """A student per Canvas user id (or anonymous id), with their files under the names they gave them."""
    students: dict[str, Student] = {}
    copies: dict[tuple[str, str], list[tuple[int, str, str]]] = {}  # (student, name) -> [(copy, entry, path)]
    ignored = []
    for entry in entries:
        shown = printable(entry.name)
        found = _FILE.match(entry.name)
        if found is None or entry.is_dir(follow_symlinks=False):
            ignored.append((shown, "not named as Canvas names a submitted file "
                                   "(<name>_<user id>_<file id>_<file name>)"))
            continue
        user = found["user"] or found["anon"]
        student = students.setdefault(user, Student(user, "", name=printable(found["name"] or "")))
        student.late = student.late or bool(found["late"] or found["anon_late"])
        if entry.is_symlink():
            student.problem = link_problem(shown)
            continue
        given = f"{found['entry']}.html" if found["entry"] else found["file"]
        copy, original = _original(given)
        if plain_name(original) is None:
            ignored.append((shown, "its file name cannot name a file in a folder"))
            continue
        copies.setdefault((user, original), []).append((copy, shown, entry.path))
    for (user, original), found_copies in copies.items():
        *older, (_, _, newest) = sorted(found_copies)
        students[user].files[original] = newest
        ignored += [(shown, f"an older copy of {original} (Canvas numbers a resubmitted file -1, -2, ...)")
                    for _, shown, _ in older]
    return list(students.values()), ignored


def _original(name: str) -> tuple[int, str]:
    """The name the student gave a file, and which copy Canvas made of it: ``softmax-2.py`` is copy 2 of
    ``softmax.py``; a name that is not an exercise's file is taken as it is (copy 0)."""
    found = _RESUBMITTED.match(name)
    if found and f"{found['stem']}{found['suffix']}" in _EXERCISE_FILES:
        return int(found["copy"]), f"{found['stem']}{found['suffix']}"
    return 0, name


def gradebook_import(graded: dict[str, SubmissionResult], assignment: str) -> str:
    """The CSV that Canvas's gradebook "Import" reads: the student columns of Canvas's own export, the
    assignment's column, its points possible, and each student's total, matched by Canvas user id.

    ``assignment`` names the column as Canvas does, ``<title> (<assignment id>)``, so that the scores land
    in that assignment; a title without an id makes Canvas create a new assignment of that name.
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    possible = max((result.max_score for result in graded.values()), default=0)
    writer.writerow([*IMPORT_HEADER, inert.csv_text(assignment)])
    writer.writerow(["    Points Possible", "", "", "", "", verdicts.points(possible)])
    for student in sorted(graded):
        result = graded[student]
        writer.writerow([inert.csv_text(result.name or student), inert.csv_text(student), "", "", "",
                         verdicts.points(result.score)])
    return out.getvalue()
