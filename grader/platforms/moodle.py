"""Moodle: an assignment's "Download all submissions" in, its offline grading worksheet out.

In. One folder per student and submission plugin (``mod_assign\\downloader``,
moodle/moodle ``mod/assign/classes/downloader.php``, Moodle 4.1 on;
``assign::download_submissions`` in ``mod/assign/locallib.php`` before)::

    <Full Name>_<participant id>_assignsubmission_file/softmax.py        Moodle 4.1 and later
    <Full Name>_<participant id>_assignsubmission_file_/softmax.py       Moodle 3.1 to 4.0
    <Full Name>_<participant id>_assignsubmission_onlinetext_/onlinetext.html

Underscores in the name become spaces, so the first ``_<digits>_`` ends it;
under blind marking the name is "Participant". With "Download submissions in
folders" turned off, every file sits at the top instead, named
``<Full Name>_<participant id>_assignsubmission_file_<file name>``. The
participant id is the number Moodle's grading worksheet calls "Participant
<id>" and matches grades by.

Out. The offline grading worksheet (``assignfeedback_offline``): Moodle reads
the "Identifier", "Grade" and "Last modified (grade)" columns by their names
(its importer refuses a file without them), matches "Participant <id>" to a
student, and skips a grade changed in Moodle after "Last modified (grade)";
the other columns are those of the worksheet Moodle itself downloads
(``mod/assign/gradingtable.php``), in English.
"""

from __future__ import annotations

import csv
import datetime
import io
import os
import re
from pathlib import Path

from grader.engine.results import SubmissionResult
from grader.engine.submissions.intake import Student
from grader.platforms import link_problem, plain_name, printable
from grader.reports import inert, verdicts

NAME = "moodle"
TITLE = "Moodle export"
IMPORT_FILE = "moodle-grading-worksheet.csv"
IMPORT_HEADER = ["Identifier", "Full name", "Email address", "Status", "Grade", "Maximum Grade",
                 "Grade can be changed", "Last modified (submission)", "Last modified (grade)", "Feedback comments"]
PARTICIPANT = "Participant "  # how the worksheet's Identifier starts (mod_assign's "hiddenuser" string)

# The name has no underscore (Moodle replaced them with spaces): the first _<digits>_assign... ends it.
_ENTRY = re.compile(r"^(?P<name>[^_]*)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z0-9]+)(?:_(?P<file>.*))?$")
_BLIND = "Participant"  # the name every student has under blind marking


def recognised(entry: os.DirEntry) -> bool:
    return _ENTRY.match(entry.name) is not None


def read(folder: Path, entries: list[os.DirEntry]) -> tuple[list[Student], list[tuple[str, str]]]:
    """A student per participant, graded from their file plugin's folder (or, in a flat download, their files).

    A student who submitted no file (online text only) is graded from what they did submit, which holds no
    module: they are missing, as they would be with an empty folder.
    """
    students: dict[str, Student] = {}
    others: dict[str, list[os.DirEntry]] = {}  # participant -> their other plugins' folders and files
    ignored = []
    for entry in entries:
        shown = printable(entry.name)
        found = _ENTRY.match(entry.name)
        if found is None:
            ignored.append((shown, "not named as Moodle names a submission "
                                   "(<full name>_<participant id>_assignsubmission_<plugin>)"))
            continue
        name = printable(found["name"]) if found["name"] != _BLIND else ""
        student = students.setdefault(found["id"], Student(found["id"], "", name=name))
        if found["plugin"] != "file":
            others.setdefault(found["id"], []).append(entry)
        elif entry.is_symlink():
            student.problem = link_problem(shown)
        elif entry.is_dir() and not found["file"]:  # a folder per student and plugin
            student.path = entry.path
        elif entry.is_file() and plain_name(found["file"] or ""):  # the flat download
            student.files[found["file"]] = entry.path
        else:
            ignored.append((shown, "not a folder or file that Moodle's file submissions are written as"))
    for participant, entries_of_others in others.items():
        student = students[participant]
        if not student.path and not student.files and entries_of_others[0].is_dir(follow_symlinks=False):
            student.path = entries_of_others.pop(0).path  # nothing but online text: graded as missing
        ignored += [(printable(entry.name), "another plugin's submission (online text, ...), not files to grade")
                    for entry in entries_of_others]
    return list(students.values()), ignored


def gradebook_import(graded: dict[str, SubmissionResult], assignment: str) -> str:
    """Moodle's grading worksheet, one row per participant: the total as the grade (the assignment's maximum
    grade in Moodle must be at least the kit's, or Moodle skips the grade as out of range) and each
    exercise's points as the feedback comment. ``assignment`` is not needed: the worksheet is uploaded to
    the assignment itself."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(IMPORT_HEADER)
    now = _moodle_date(datetime.datetime.now())
    for student in sorted(graded):
        result = graded[student]
        exercises = ", ".join(f"{e.name} {verdicts.points(e.score)}/{verdicts.points(e.max_score)}"
                              for e in result.exercises)
        writer.writerow([f"{PARTICIPANT}{student}", inert.csv_text(result.name), inert.csv_text(result.email),
                         "", verdicts.points(result.score), verdicts.points(result.max_score), "Yes", "-", now,
                         f"softlookup: {verdicts.points(result.score)}/{verdicts.points(result.max_score)} "
                         f"points ({exercises})"])
    return out.getvalue()


_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


def _moodle_date(when: datetime.datetime) -> str:
    """``when`` as Moodle's worksheet writes a date (``userdate`` with English ``strftimedaydatetime``:
    "Thursday, 05 June 2025, 02:30 PM"), whatever this machine's locale: Moodle reads it back with strtotime."""
    hour = when.hour % 12 or 12
    return (f"{_DAYS[when.weekday()]}, {when.day:02d} {_MONTHS[when.month - 1]} {when.year}, "
            f"{hour:02d}:{when.minute:02d} {'AM' if when.hour < 12 else 'PM'}")
