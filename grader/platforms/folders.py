"""One folder (or .zip of one) per student, named by the student: the layout of last resort.

This is what an instructor assembles by hand, what most tools export, and
what a folder that matches no platform is read as. Every entry is a student,
dot-names and odd names included (a file where a folder should be is a
student whose submission is invalid, with why): guessing that an entry is not
a student could lose one without a word. Nesting is no concern here: the
batch enters a lone subfolder, however deep, when it unpacks a student.
"""

from __future__ import annotations

import os
from pathlib import Path

from grader.engine.submissions.intake import Student
from grader.platforms import link_problem, printable

NAME = "folders"
TITLE = "one folder or zip per student"
IMPORT_FILE = None  # a folder per student comes from no platform that takes grades back


def read(folder: Path, entries: list[os.DirEntry]) -> tuple[list[Student], list[tuple[str, str]]]:
    """One student per entry: a folder, or a .zip of one; any other file or a link is a student who cannot be
    graded, with why."""
    students = []
    for entry in entries:
        name = printable(entry.name)
        if entry.is_symlink():
            students.append(Student(name, entry.path, link_problem(name)))
        elif entry.is_dir():
            students.append(Student(name, entry.path))
        elif entry.name.endswith(".zip") and entry.is_file():
            students.append(Student(printable(entry.name[:-4] or entry.name), entry.path, zipped=True))
        else:
            students.append(Student(name, entry.path, f"the entry {name} is a file, not a folder or a .zip of one"))
    return students, []
