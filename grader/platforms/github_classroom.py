"""GitHub Classroom: the students' repositories as ``gh classroom clone student-repos`` lays them out.

The command (github/gh-classroom ``cmd/gh-classroom/clone/student-repos``)
clones every accepted assignment into ``<assignment slug>-submissions/``, one
repository each, named as Classroom names a student's repository:
``<assignment slug>-<GitHub username>`` (a group's: ``<slug>-<team>``). The
kit's student bundle is what the repository holds, so the work is in its
``assignments/`` folder, which the batch finds as ``softlookup check DIR``
does. A student's id is their username: the repository's name less the
slug, taken from the folder's ``-submissions`` name or, failing that, from
the prefix all the repositories share. Classroom's repositories carry no
names or emails (its roster does), and Classroom takes no grades back: it
records the points of the bundle's own workflow, which lives in the student's
repository with the ``grader/`` it runs: self-reported points. ``softlookup
grade`` grades with the instructor's kit, and names the repositories that
changed the kit's files (``grader.releases.handed_out.kit_changes``).
"""

from __future__ import annotations

import os
from pathlib import Path

from grader.engine.submissions.intake import Student
from grader.platforms import link_problem, printable

NAME = "github-classroom"
TITLE = "GitHub Classroom repositories"
IMPORT_FILE = None  # Classroom records the points of the bundle's workflow itself
SUFFIX = "-submissions"  # what gh classroom adds to the slug for the folder it clones into


def recognised(entry: os.DirEntry) -> bool:
    """A clone of a student's repository: a folder with git's own folder (or file) and assignments/ in it."""
    path = Path(entry.path)
    return entry.is_dir(follow_symlinks=False) and os.path.lexists(path / ".git") and (path / "assignments").is_dir()


def read(folder: Path, entries: list[os.DirEntry]) -> tuple[list[Student], list[tuple[str, str]]]:
    """A student per repository, named by the GitHub username in the repository's name."""
    repositories = [entry for entry in entries if recognised(entry) or entry.is_symlink()]
    ignored = [(printable(entry.name), "not a clone of a student's repository (no .git and assignments/ in it)")
               for entry in entries if entry not in repositories]
    prefix = _slug_prefix(folder.name, [entry.name for entry in repositories])
    students = []
    for entry in repositories:
        student = Student(printable(entry.name.removeprefix(prefix)), entry.path)
        if entry.is_symlink():
            student.problem = link_problem(printable(entry.name))
        students.append(student)
    return students, ignored


def _slug_prefix(folder: str, names: list[str]) -> str:
    """``<slug>-``, what every repository's name starts with before the username ("" where none is shared)."""
    if folder.endswith(SUFFIX) and all(name.startswith(folder.removesuffix(SUFFIX) + "-") for name in names):
        return folder.removesuffix(SUFFIX) + "-"
    if len(names) < 2:
        return ""
    shared = os.path.commonprefix(names)
    prefix = shared[: shared.rfind("-") + 1]
    return prefix if all(len(name) > len(prefix) for name in names) else ""
