"""What the instructor's kit hands out, as ``softlookup grade`` compares a class's work with it.

Made from the kit that grades, every time, never from anything a student's
folder or repository carries (a student can edit that too):

* :func:`boilerplate`: each exercise's stub module and its notebook made into
  a module, the text every student starts from, which the similarity pass
  (:mod:`grader.engine.classes.similarity`) counts for nothing;
* :func:`bundle_digests` and :func:`kit_changes`: every file of the student
  bundle but the learners' exercises, as the kit releases it now, and which of
  them a GitHub Classroom repository changed. Classroom records the points the
  repository's own workflow reports, run by its own ``grader/``: a student
  who edits them records what they like, and the instructor must know.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import tempfile
from pathlib import Path

from grader.engine import registry
from grader.engine.submissions import notebooks
from grader.releases.assignments import planned


def boilerplate(solutions: Path, exercises: list[registry.Exercise]) -> dict[str, list[str]]:
    """Each exercise's handed-out texts, by module: the stub, and the notebook's code cells as a module."""
    with tempfile.TemporaryDirectory(prefix="softlookup-handed-out-") as scratch:
        folder = Path(scratch)
        plan = planned(solutions, folder, tuple(exercises))
        texts = {}
        for exercise in exercises:
            notebook = folder / f"{exercise.module}.ipynb"
            notebook.write_text(plan[notebook], encoding="utf-8")
            texts[exercise.module] = [plan[folder / f"{exercise.module}.py"], notebooks.module_source(notebook)]
    return texts


# -- the bundle's kit files, as a GitHub Classroom repository holds them --------------------------

MAX_FILES = 20_000  # files of a repository looked at: more is a repository built to be in the way
MAX_BYTES = 64 << 20  # a file larger than this is read no further: its size already differs from the kit's
# Files a repository may add that can change what its workflow runs or reports: anywhere, or under these folders.
ADDED_THAT_RUN = ("conftest.py", "sitecustomize.py", "usercustomize.py")
ADDED_UNDER = ("grader/", ".github/")


def learners_files() -> set[str]:
    """The bundle's files that are the learners' to change: each exercise's module and notebook."""
    return {f"assignments/{exercise.module}{suffix}" for exercise in registry.EXERCISES for suffix in (".py", ".ipynb")}


def bundle_digests(solutions: Path) -> dict[str, str]:
    """The SHA-256 of every file of the student bundle as this kit releases it now (``softlookup release
    student``, in a temporary folder, the GPT-2 answers recorded again), by its path in the bundle; the
    learners' own files left out."""
    from grader.releases import bundle  # records GPT-2's answers: only for a class read from Classroom clones

    with tempfile.TemporaryDirectory(prefix="softlookup-bundle-") as scratch:
        out = Path(scratch)
        bundle.write_bundle(out, solutions)
        return {name: digest for name, digest in _digests(out).items() if name not in learners_files()}


def kit_changes(repository: Path, expected: dict[str, str]) -> dict[str, str]:
    """The kit's files that ``repository`` changed, removed or added (where an added one can change what runs),
    each with what it holds now (a digest, ``removed``): {} for a repository as the bundle made it."""
    found = _digests(repository)
    changed = {name: found.get(name, "removed") for name, digest in expected.items() if found.get(name) != digest}
    for name, digest in found.items():
        if name not in expected and name not in learners_files() and (
                name.startswith(ADDED_UNDER) or name.rsplit("/", 1)[-1] in ADDED_THAT_RUN or name.endswith(".pth")):
            changed[name] = digest
    return changed


def _digests(folder: Path) -> dict[str, str]:
    """Every file below ``folder`` (git's own folder aside) by its path there, with its SHA-256, or ``link`` /
    ``not a file`` for what is not a regular file; never through a link, at most :data:`MAX_FILES`."""
    found: dict[str, str] = {}
    for root, folders, files in os.walk(folder, followlinks=False):
        folders[:] = sorted(name for name in folders if not (root == str(folder) and name == ".git"))
        relative = os.path.relpath(root, folder)
        for name in [*files, *(name for name in folders if os.path.islink(os.path.join(root, name)))]:
            if len(found) >= MAX_FILES:
                return found
            found[name if relative == "." else f"{relative}/{name}"] = _digest(os.path.join(root, name))
    return found


def _digest(path: str) -> str:
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return "link" if os.path.islink(path) else "not readable"
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return "not a file"
        return hashlib.file_digest(_Capped(handle, MAX_BYTES), "sha256").hexdigest()


class _Capped(io.RawIOBase):
    """A file read no further than ``limit`` bytes (hashlib.file_digest reads whatever it is given)."""

    def __init__(self, handle, limit: int):
        self.handle, self.left = handle, limit

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        size = self.handle.readinto(memoryview(buffer)[: max(self.left, 0)])
        self.left -= size or 0
        return size or 0
