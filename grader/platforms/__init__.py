"""Course exports in: who each student is and where their work lies, whatever platform exported the class.

``softlookup grade`` is given the folder an instructor downloaded. Each
platform lays it out its own way, and each module here reads one layout
(:func:`read` of :mod:`.canvas`, :mod:`.moodle`, :mod:`.blackboard`,
:mod:`.gradescope`, :mod:`.github_classroom`, and :mod:`.folders`, one folder
or zip per student, which is also what a folder matching no platform is read
as) and, where the platform takes one back, writes its gradebook import.
:mod:`.detect` picks the layout and gives an :class:`Export`. Every layout gives the same
:class:`~grader.engine.submissions.intake.Student` records and names every entry it leaves out, with why: an instructor never
loses a student without a word.

What is read from an export is the students' text (file names, names in a
receipt or a metadata file): ids are made printable here, and every report
escapes names as it escapes any text a student wrote. Who a student is and
which attempt counts come only from the part of an entry that the platform
writes, read from the left (each reader's docstring says which part that
is); the name a student gave a file only ever names that file. No reader
follows a link (:func:`link_problem`), and a platform's own files (a
receipt, a metadata file) are read within bounds.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from grader.engine.submissions.intake import NAME_BYTES, Student, escaped, is_litter, link_refused

@dataclass
class Export:
    """What one submissions folder holds: the layout it was read as, its students, and what was left out."""

    layout: str  # a platform module's NAME
    title: str  # how the found line names the layout: "Canvas export"
    students: list[Student]
    ignored: list[tuple[str, str]]  # (entry, why it is not a student's work)

    def described(self) -> str:
        """The line printed before grading: "40 students (Canvas export, 3 late), 2 entries ignored: ...", the
        entries ignored for one reason named together (three of them, and how many more)."""
        late = sum(student.late for student in self.students)
        line = f"{_counted(len(self.students), 'student', 'students')} ({self.title}"
        line += f", {late} late)" if late else ")"
        if self.ignored:
            by_reason: dict[str, list[str]] = {}
            for entry, why in self.ignored:
                by_reason.setdefault(why, []).append(entry)
            shown = "; ".join(", ".join(entries[:3]) + (f" and {len(entries) - 3} more" if len(entries) > 3 else "")
                              + f" ({why})" for why, entries in by_reason.items())
            line += f", {_counted(len(self.ignored), 'entry', 'entries')} ignored: {shown}"
        return line


def _counted(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def printable(name: str) -> str:
    """A file name as a student id safe for a CSV cell and a folder: bytes that are not UTF-8, and
    characters that do not print, shown as \\xNN."""
    return escaped(os.fsencode(name).decode("utf-8", errors="backslashreplace"))


LITTER_REASON = "left by a tool, not a student"


def listing(folder: Path) -> tuple[list[os.DirEntry], list[tuple[str, str]]]:
    """The entries of ``folder`` by name, and the litter among them, left out with why."""
    kept, litter = [], []
    for entry in sorted(os.scandir(folder), key=lambda entry: entry.name):
        if is_litter(entry.name):
            litter.append((printable(entry.name), LITTER_REASON))
        else:
            kept.append(entry)
    return kept, litter


def plain_name(name: str) -> str | None:
    """``name`` if it can name a file inside a student's folder as it is (no folder part, not ``.`` or ``..``,
    printable, not too long), else None: an export's names are the students' text."""
    if not name or name in (".", "..") or "/" in name or "\\" in name or printable(name) != name:
        return None
    return name if len(name.encode("utf-8")) <= NAME_BYTES else None


def link_problem(shown: str) -> str:
    """Why an entry of the export that is a link cannot be graded (:func:`~grader.engine.submissions.intake.link_refused`)."""
    return link_refused(f"the entry {shown}")

