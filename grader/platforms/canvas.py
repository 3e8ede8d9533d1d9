"""Canvas: "Download Submissions" in, a gradebook CSV that Canvas's "Import" takes back out.

In. Canvas zips one flat folder of files, each named (``ContentZipper`` in
instructure/canvas-lms, ``lib/content_zipper.rb``)::

    <sortable name>[_LATE]_<user id>_<attachment id>_<file name>   an uploaded file
    <sortable name>[_LATE]_<user id>_text.html                     a text entry
    <sortable name>[_LATE]_<user id>_link.html                     a URL entry

The sortable name ("Doe, Jane") is lower-cased and stripped of everything but
word characters ("doejane", accents kept), and any ``_<digits>_`` in it is
collapsed so that the first ``_<digits>_`` is always the user id. An
anonymous assignment has ``anon_<anonymous id>`` in place of name and id
(five base58 characters, ``Anonymity.generate_short_id``), with ``LATE_``
before it. Canvas renames a file whose name the student already used (a
resubmission) ``softmax-1.py``, ``softmax-2.py`` (``Attachment.
make_unique_filename``): of the files that are copies of one exercise file,
the newest upload (the highest attachment id) is graded under the name the
student gave it, and the older ones are named as ignored.

What is read as who and which upload: only the part Canvas wrote, parsed
from the left, up to the attachment id (or ``text.html``, ``link.html``).
What follows is the file's name as the student uploaded it, anything at all
(``1041_softmax.py``, ``doejane_1041_9_softmax.py``): it names the file in
the student's folder and nothing else, and an entry whose Canvas part does
not parse is left out with why, never read again from further along.

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
from dataclasses import dataclass
from pathlib import Path

from grader.engine import registry
from grader.engine.results import SubmissionResult
from grader.engine.submissions.intake import Student
from grader.platforms import link_problem, plain_name, printable
from grader.reports import inert, verdicts

NAME = "canvas"
TITLE = "Canvas export"
IMPORT_FILE = "canvas-gradebook.csv"
IMPORT_HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]

# Who, as Canvas writes it at the start of an entry: an anonymous id (tried first: it has a fixed form), or the
# squashed name, _LATE and the user id, the name ending at the first _<digits>_. Matched from the start, and once.
_ANONYMOUS = re.compile(r"(?P<late>LATE_)?(?P<user>anon_[1-9A-HJ-NP-Za-km-z]{5})_")
_NAMED = re.compile(r"(?P<name>\w*?)(?P<late>_LATE)?_(?P<user>\d+)_")
# What follows who: the attachment id and the name the student gave the file, or a text or URL entry.
_UPLOAD = re.compile(r"(?P<attachment>\d+)_(?P<file>.+)|(?P<entry>text|link)\.html", re.DOTALL)
_RESUBMITTED = re.compile(r"^(?P<stem>.+)-(?P<copy>\d+)(?P<suffix>\.[^.]+)$")
# The files an exercise is graded from: only these are renamed back when Canvas numbered a resubmission.
_EXERCISE_FILES = {f"{e.module}{suffix}" for e in registry.EXERCISES for suffix in (".py", ".ipynb")}


@dataclass(frozen=True)
class _Entry:
    """An entry's name read as Canvas wrote it: who (and whether late), which upload, and the student's file name."""

    user: str  # the Canvas user id, or anon_<anonymous id>
    name: str  # the squashed sortable name ("" when anonymous)
    late: bool
    attachment: int  # Canvas's id of the upload; 0 for a text or URL entry
    file: str  # the name the student gave the file (text.html, link.html for the entries Canvas writes)


def _parsed(name: str) -> _Entry | None:
    """``name`` read as Canvas writes an entry, from the left, or None where Canvas did not write it so."""
    who = _ANONYMOUS.match(name) or _NAMED.match(name)
    upload = _UPLOAD.fullmatch(name, who.end()) if who else None
    if upload is None:
        return None
    return _Entry(who["user"], who.groupdict().get("name") or "", bool(who["late"]), int(upload["attachment"] or 0),
                  upload["file"] if upload["attachment"] else f"{upload['entry']}.html")


def recognised(entry: os.DirEntry) -> bool:
    return entry.is_file(follow_symlinks=False) and _parsed(entry.name) is not None


def read(folder: Path, entries: list[os.DirEntry]) -> tuple[list[Student], list[tuple[str, str]]]:
    """A student per Canvas user id (or anonymous id), with their files under the names they gave them."""
    students: dict[str, Student] = {}
    copies: dict[tuple[str, str], list[tuple[int, str, str]]] = {}  # (student, name) -> [(attachment, entry, path)]
    ignored = []
    for entry in entries:
        shown = printable(entry.name)
        found = _parsed(entry.name)
        if found is None or entry.is_dir(follow_symlinks=False):
            ignored.append((shown, "not named as Canvas names a submitted file "
                                   "(<name>_<user id>_<file id>_<file name>)"))
            continue
        student = students.setdefault(found.user, Student(found.user, "", name=printable(found.name)))
        student.late = student.late or found.late
        if entry.is_symlink():
            student.problem = link_problem(shown)
            continue
        original = _original(found.file)
        if plain_name(original) is None:
            ignored.append((shown, "its file name cannot name a file in a folder"))
            continue
        copies.setdefault((found.user, original), []).append((found.attachment, shown, entry.path))
    for (user, original), found_copies in copies.items():
        *older, (_, _, newest) = sorted(found_copies)
        students[user].files[original] = newest
        ignored += [(shown, f"an older upload of {original} (a lower attachment id; Canvas numbers a "
                            "resubmitted file -1, -2, ...)") for _, shown, _ in older]
    return list(students.values()), ignored


def _original(name: str) -> str:
    """The name the student gave a file: ``softmax-2.py`` is Canvas's copy of ``softmax.py``; a name that is not
    a copy of an exercise's file is taken as it is. Which copy is newest, the attachment ids say."""
    found = _RESUBMITTED.match(name)
    if found and f"{found['stem']}{found['suffix']}" in _EXERCISE_FILES:
        return f"{found['stem']}{found['suffix']}"
    return name


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
