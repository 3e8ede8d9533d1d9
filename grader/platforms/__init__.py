"""Course exports in: who each student is and where their work lies, whatever platform exported the class.

``softlookup grade`` is given the folder an instructor downloaded. Each
platform lays it out its own way, and each module here reads one layout
(:func:`read` of :mod:`.canvas`, :mod:`.moodle`, :mod:`.blackboard`,
:mod:`.gradescope`, :mod:`.github_classroom`, and :mod:`.folders`, one folder
or zip per student, which is also what a folder matching no platform is read
as) and, where the platform takes one back, writes its gradebook import.
:mod:`.detect` picks the layout. Every layout gives the same :class:`Student`
records and names every entry it leaves out, with why: an instructor never
loses a student without a word.

What is read from an export is the students' text (file names, names in a
receipt or a metadata file): ids are made printable here, and every report
escapes names as it escapes any text a student wrote.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

# What tools leave beside submissions: never a student, so left out (and named in one line before grading).
LITTER = {".DS_Store", "__MACOSX", ".Trashes", ".Spotlight-V100", ".fseventsd", ".TemporaryItems", "Thumbs.db",
          "desktop.ini", ".ipynb_checkpoints", ".git", ".gitignore", ".gitattributes", ".svn", ".hg"}
NAME_BYTES = 255  # the longest file name a file system takes


@dataclass
class Student:
    """One student as the batch grades them: where their work lies and who they are.

    ``path`` is their folder or zip. A platform that exports one flat folder
    of files (Canvas, Blackboard, Moodle's flat download) gives ``files``
    instead, each file under the name the student gave it, and no ``path``:
    the batch grades a folder made of those files alone, empty for a student
    with none. ``problem`` says why the submission cannot be graded at all.
    ``name``, ``email`` and ``late`` are what the export says, where it says it.
    """

    id: str  # clean and printable: the platform's user id, username or the folder's name
    path: str  # "" for a student of a flat export
    problem: str = ""
    zipped: bool = False  # path is a .zip to unpack
    name: str = ""
    email: str = ""
    late: bool = False
    files: dict[str, str] = field(default_factory=dict)  # name to grade the file under -> where it is


@dataclass
class Intake:
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


def escaped(text: str) -> str:
    """``text`` with every character that does not print (controls, lone surrogates) shown as \\xNN.

    What is left is printable and encodable as UTF-8: fit for any file and any terminal.
    """
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)


def printable(name: str) -> str:
    """A file name as a student id safe for a CSV cell and a folder: bytes that are not UTF-8, and
    characters that do not print, shown as \\xNN."""
    return escaped(os.fsencode(name).decode("utf-8", errors="backslashreplace"))


def is_litter(name: str) -> bool:
    """Whether an entry of the submissions folder is what a tool leaves there (macOS's ``._x`` included)."""
    return name in LITTER or name.startswith("._")


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
    """Why a link cannot be graded: it may point anywhere on this machine, so it is never followed."""
    return f"the entry {shown} is a link; put the student's files themselves there"

