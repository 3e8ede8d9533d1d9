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

What is read as who and when: only the part Blackboard wrote, up to the
first ``_attempt_<date>``. What follows is the name the student gave the
file, anything at all (``jdoe_attempt_2099-12-31-23-59-59_softmax.py`` too):
it names the file in the student's folder and nothing else, so no upload
can pass for another student's attempt or a later one. The receipt is read
within bounds (its first 64 KB, line by line): its first line for the
name and username, its ``Original filename:`` / ``Filename:`` pairs for the
files, and a username only where the attempt's own name ends with it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from grader.engine.submissions.intake import Student
from grader.platforms import link_problem, plain_name, printable

NAME = "blackboard"
TITLE = "Blackboard export"
IMPORT_FILE = None  # the Grade Centre's upload format could not be checked here against Blackboard's documents
RECEIPT_BYTES = 64 * 1024  # a receipt is a few lines; one longer is read this far

# Blackboard's part of an entry's name ends at the first _attempt_<date>: the shortest prefix, matched once.
_ATTEMPT = re.compile(r"(?P<prefix>[^\n]+?)_attempt_(?P<when>\d{4}(?:-\d\d){5})")


@dataclass(frozen=True)
class _Entry:
    """An entry's name read as Blackboard wrote it: the attempt (its prefix and date), then a file or its receipt."""

    prefix: str  # <assignment>_<username>
    when: str  # yyyy-mm-dd-hh-mm-ss
    file: str  # the name the student gave the file; "" for the receipt


def _parsed(name: str) -> _Entry | None:
    """``name`` read as Blackboard writes an attempt's file or receipt, or None where it did not write it so."""
    attempt = _ATTEMPT.match(name)
    if attempt is None:
        return None
    rest = name[attempt.end():]
    if rest == ".txt":
        return _Entry(attempt["prefix"], attempt["when"], "")
    return _Entry(attempt["prefix"], attempt["when"], rest[1:]) if rest.startswith("_") and len(rest) > 1 else None


def recognised(entry: os.DirEntry) -> bool:
    return entry.is_file(follow_symlinks=False) and _parsed(entry.name) is not None


def read(folder: Path, entries: list[os.DirEntry]) -> tuple[list[Student], list[tuple[str, str]]]:
    """A student per username, from their last attempt: its files under the names they gave them."""
    attempts: dict[tuple[str, str], list[tuple[os.DirEntry, _Entry]]] = {}  # (prefix, when) -> its files
    ignored = []
    for entry in entries:
        found = _parsed(entry.name)
        if found is None or entry.is_dir(follow_symlinks=False):
            ignored.append((printable(entry.name), "not named as Blackboard names an attempt's file "
                                                   "(<assignment>_<username>_attempt_<date>_<file name>)"))
        else:
            attempts.setdefault((found.prefix, found.when), []).append((entry, found))
    latest: dict[str, tuple[Student, list, list]] = {}  # username -> them, their last attempt's files and notes
    for (prefix, _), files in sorted(attempts.items(), key=lambda item: item[0][1]):  # in the order they were made
        student, notes = _attempt(prefix, files)
        if student.id in latest:
            ignored += [(printable(entry.name), f"from an earlier attempt of {student.id}: the last one is graded")
                        for entry, _ in latest[student.id][1]]
        latest[student.id] = (student, files, notes)
    notes = [note for _, _, attempt_notes in latest.values() for note in attempt_notes]
    return [student for student, _, _ in latest.values()], ignored + notes


def _attempt(prefix: str, files: list[tuple[os.DirEntry, _Entry]]) -> tuple[Student, list[tuple[str, str]]]:
    """The student of one attempt, from its receipt where there is one, with the attempt's files; and the
    attempt's entries that are not files to grade, with why."""
    receipt = next((entry for entry, found in files if not found.file), None)
    name, user, originals = _receipt(_read_receipt(receipt) if receipt is not None else "")
    ignored = [(printable(receipt.name), "Blackboard's receipt of an attempt: read for the name")] if receipt else []
    if not (user and prefix.endswith(f"_{user}")):  # the receipt of another attempt, or none: the name says
        user = prefix.rpartition("_")[2]
    student = Student(printable(user), "", name=printable(name))
    for entry, found in files:
        if not found.file:
            continue
        if entry.is_symlink():
            student.problem = link_problem(printable(entry.name))
            continue
        given = next(filter(None, (plain_name(originals.get(entry.name, "")), plain_name(found.file))), None)
        if given is None:
            ignored.append((printable(entry.name), "its file name cannot name a file in a folder"))
        else:
            student.files[given] = entry.path
    return student, ignored


def _receipt(text: str) -> tuple[str, str, dict[str, str]]:
    """What an attempt's receipt says: the name and username of its first line (``Name: Jane Doe (jdoe)``), and
    the name the student gave each stored file (``Original filename:`` then ``Filename:``), read line by line."""
    lines = [line.strip(" \t") for line in text.split("\n")]
    name = user = ""
    first = next((line for line in lines if line), "")
    if first.startswith("Name: ") and first.endswith(")") and " (" in first:
        name, _, user = first[len("Name: "):-1].rpartition(" (")
        name, user = (name.strip(), user.strip()) if user.strip() and "(" not in user else ("", "")
    originals = {}
    for line, following in zip(lines, lines[1:]):
        if line.startswith("Original filename: ") and following.startswith("Filename: "):
            originals[following[len("Filename: "):]] = line[len("Original filename: "):]
    return name, user, originals


def _read_receipt(entry: os.DirEntry) -> str:
    """The receipt's text (a link or an unreadable file reads as none: the file names then say who it is)."""
    if entry.is_symlink():
        return ""
    try:
        with open(entry.path, "rb") as receipt:
            return receipt.read(RECEIPT_BYTES).decode("utf-8-sig", errors="replace").replace("\r\n", "\n")
    except OSError:
        return ""
