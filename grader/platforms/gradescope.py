"""Gradescope: "Export Submissions" in; each student's results.json (Gradescope's own schema) out.

In. The export holds a folder ``submission_<id>`` per submission, with the
files as they were uploaded, and ``submission_metadata.yml``, which names who
submitted each one (as read by otter-grader, ucbds-infra/otter-grader
``otter/grade/metadata.py``)::

    submission_123456:
      :submitters:
      - :name: Jane Doe
        :sid: '12345'
        :email: jane@example.edu
      :created_at: 2025-02-03 10:15:22.000000000 -08:00

A group submission lists several submitters: each is a student of their own,
graded from the group's folder. A student's id is their student id (sid),
else their email, else the submission's folder name; the metadata file
itself is named as ignored, with what it was read for.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import yaml  # already installed with nbgrader and transformers; declared in pyproject all the same

from grader.engine.intake import Student
from grader.platforms import link_problem, printable

NAME = "gradescope"
TITLE = "Gradescope export"
IMPORT_FILE = None  # each student's results.json, in Gradescope's schema, is written anyway
METADATA = "submission_metadata.yml"
METADATA_BYTES = 16 * 2**20  # a class's metadata with every submission's results is a few MB at most

_FOLDER = re.compile(r"^submission_\d+$")


def recognised(entry: os.DirEntry) -> bool:
    return entry.name == METADATA or (entry.is_dir(follow_symlinks=False) and _FOLDER.match(entry.name) is not None)


def read(folder: Path, entries: list[os.DirEntry]) -> tuple[list[Student], list[tuple[str, str]]]:
    """A student per submitter of each submission folder, named as the metadata names them."""
    submitters, why = _metadata(folder / METADATA)
    students, ignored = [], []
    folders = {}
    for entry in entries:
        shown = printable(entry.name)
        if entry.name == METADATA:
            ignored.append((shown, why))
        elif _FOLDER.match(entry.name) is None:
            ignored.append((shown, "not a submission folder (submission_<id>) of a Gradescope export"))
        else:
            folders[entry.name] = entry
    for submission in sorted(set(folders) | set(submitters)):
        entry = folders.get(submission)
        for who in submitters.get(submission) or [{}]:
            student = Student(_id(who) or printable(submission), entry.path if entry else str(folder),
                              name=_text(who, ":name"), email=_text(who, ":email"))
            if entry is None:
                student.problem = f"Gradescope's metadata lists {submission}, but the export has no such folder"
            elif entry.is_symlink():
                student.problem = link_problem(printable(submission))
            students.append(student)
    return students, ignored


def _metadata(path: Path) -> tuple[dict[str, list[dict]], str]:
    """Who submitted each submission folder, and what became of the metadata file (read, or why not)."""
    if not path.is_file() or path.is_symlink():
        return {}, "not a file that Gradescope writes"
    try:
        if path.stat().st_size > METADATA_BYTES:
            raise ValueError(f"larger than {METADATA_BYTES // 2**20} MB")
        plain = yaml.safe_load(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError, yaml.YAMLError) as error:
        return {}, f"Gradescope's metadata, which could not be read ({type(error).__name__}): ids are folder names"
    if not isinstance(plain, dict):
        return {}, "Gradescope's metadata, but not a list of submissions: ids are folder names"
    submitters = {}
    for submission, fields in plain.items():
        people = fields.get(":submitters") if isinstance(fields, dict) else None
        submitters[str(submission)] = [who for who in people if isinstance(who, dict)] if isinstance(people, list) \
            else []
    return submitters, "Gradescope's metadata: read for the students' names and emails"


def _text(who: dict, key: str) -> str:
    value = who.get(key)
    return printable(str(value)).strip() if value is not None else ""


def _id(who: dict) -> str:
    return _text(who, ":sid") or _text(who, ":email")
