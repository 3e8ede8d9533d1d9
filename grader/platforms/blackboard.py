"""Blackboard Learn: the Grade Centre's "Assignment File Download" in (no gradebook import out: see IMPORT_FILE).

Blackboard zips one flat folder: per attempt, every file the student attached,
named ``<assignment>_<username>_attempt_<yyyy-mm-dd-hh-mm-ss>_<file name>``,
and a receipt ``<assignment>_<username>_attempt_<yyyy-mm-dd-hh-mm-ss>.txt``::

    Name: Jane Doe (jdoe)
    Assignment: Attention
    Date Submitted: Monday, 3 February 2025 10:15:22 o'clock GMT
    Current Grade: Needs Grading
    ...
    Files:
    \tOriginal filename: softmax.py
    \tFilename: Attention_jdoe_attempt_2025-02-03-10-15-22_softmax.py

as parsed by CodeGra.de (agreement/CodeGra.de ``psef/blackboard.py``) and
BBGradebookOrganiser (vangef/BBGradebookOrganiser ``utils/organiser.py``).
The receipt gives the student's name and the names they gave their files;
without one, the username is the word before ``_attempt_`` and the file keeps
the name after the timestamp. Where the download holds several attempts of
one student, the last is graded and the earlier ones are named as ignored.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from grader.engine.intake import Student
from grader.platforms import link_problem, plain_name, printable

NAME = "blackboard"
TITLE = "Blackboard export"
IMPORT_FILE = None  # the Grade Centre's upload format could not be checked here against Blackboard's documents
RECEIPT_BYTES = 64 * 1024  # a receipt is a few lines; one longer is read this far

_FILE = re.compile(r"^(?P<prefix>.+)_attempt_(?P<when>\d{4}(?:-\d\d){5})(?:_(?P<file>.+)|(?P<receipt>\.txt))$")
_NAME = re.compile(r"^Name: (?P<name>.*) \((?P<user>[^()]+)\)$", re.MULTILINE)
_FILES = re.compile(r"^\s*Original filename: (?P<original>.+)\n\s*Filename: (?P<stored>.+)$", re.MULTILINE)


def recognised(entry: os.DirEntry) -> bool:
    return entry.is_file(follow_symlinks=False) and _FILE.match(entry.name) is not None


def read(folder: Path, entries: list[os.DirEntry]) -> tuple[list[Student], list[tuple[str, str]]]:
    """A student per username, from their last attempt: its files under the names they gave them."""
    attempts: dict[tuple[str, str], list[tuple[os.DirEntry, re.Match]]] = {}  # (prefix, when) -> its files
    ignored = []
    for entry in entries:
        found = _FILE.match(entry.name)
        if found is None or entry.is_dir(follow_symlinks=False):
            ignored.append((printable(entry.name), "not named as Blackboard names an attempt's file "
                                                   "(<assignment>_<username>_attempt_<date>_<file name>)"))
        else:
            attempts.setdefault((found["prefix"], found["when"]), []).append((entry, found))
    latest: dict[str, tuple[Student, list, list]] = {}  # username -> them, their last attempt's files and notes
    for (prefix, _), files in sorted(attempts.items(), key=lambda item: item[0][1]):  # in the order they were made
        student, notes = _attempt(prefix, files)
        if student.id in latest:
            ignored += [(printable(entry.name), f"from an earlier attempt of {student.id}: the last one is graded")
                        for entry, _ in latest[student.id][1]]
        latest[student.id] = (student, files, notes)
    notes = [note for _, _, attempt_notes in latest.values() for note in attempt_notes]
    return [student for student, _, _ in latest.values()], ignored + notes


def _attempt(prefix: str, files: list[tuple[os.DirEntry, re.Match]]) -> tuple[Student, list[tuple[str, str]]]:
    """The student of one attempt, from its receipt where there is one, with the attempt's files; and the
    attempt's entries that are not files to grade, with why."""
    receipt = next((entry for entry, found in files if found["receipt"]), None)
    text = _read_receipt(receipt) if receipt is not None else ""
    ignored = [(printable(receipt.name), "Blackboard's receipt of an attempt: read for the name")] if receipt else []
    who = _NAME.search(text)
    user = who["user"].strip() if who and prefix.endswith(f"_{who['user'].strip()}") else prefix.rpartition("_")[2]
    originals = {stored.strip(): original.strip() for original, stored in _FILES.findall(text)}
    student = Student(printable(user), "", name=printable(who["name"].strip()) if who else "")
    for entry, found in files:
        if found["receipt"]:
            continue
        if entry.is_symlink():
            student.problem = link_problem(printable(entry.name))
            continue
        name = next(filter(None, (plain_name(originals.get(entry.name, "")), plain_name(found["file"]))), None)
        if name is None:
            ignored.append((printable(entry.name), "its file name cannot name a file in a folder"))
        else:
            student.files[name] = entry.path
    return student, ignored


def _read_receipt(entry: os.DirEntry) -> str:
    """The receipt's text (a link or an unreadable file reads as none: the file names then say who it is)."""
    if entry.is_symlink():
        return ""
    try:
        with open(entry.path, "rb") as receipt:
            return receipt.read(RECEIPT_BYTES).decode("utf-8-sig", errors="replace").replace("\r\n", "\n")
    except OSError:
        return ""
