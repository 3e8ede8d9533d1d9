"""The learner's two small records under ``$XDG_STATE_HOME/softlookup`` (default ``~/.local/state``).

``failing.json``: per exercise, the functions the last grading's failed
checks were about, written by ``softlookup check`` and by a learner's plain
``pytest`` (:mod:`grader.engine.plugin`), so that ``softlookup hint`` starts
with the hints about them. ``hints.json``: the hints seen, kept by
``softlookup hint``. A record that cannot be read or written never stops a
grading or a hint: the grades and the hint are what the learner came for.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from grader.engine import registry
from grader.engine.results import SubmissionResult


def seen_file() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(base) / "softlookup" / "hints.json"


def failures_file() -> Path:
    return seen_file().with_name("failing.json")


def read(path: Path) -> tuple[object, str]:
    """A JSON record, and what was wrong with it ("" if nothing); a missing record is ``{}``."""
    try:
        return json.loads(path.read_text(encoding="utf-8")), ""
    except (FileNotFoundError, NotADirectoryError):
        return {}, ""
    except (OSError, ValueError) as error:
        return {}, f"cannot read it ({error})"


def write(path: Path, record: dict) -> str:
    """Write a record atomically; return what went wrong ("" if nothing)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, prefix=f".{path.stem}-",
                                         delete=False) as handle:
            json.dump(record, handle, indent=1, sort_keys=True)
        os.replace(handle.name, path)
    except OSError as error:
        return f"{error.strerror or error}"
    return ""


def record_failures(result: SubmissionResult):
    """Note, per exercise graded, the functions its failed checks were about, for the next ``softlookup hint``.

    A check's verdict is about the learner's function it called last. Nothing
    is said if the note cannot be written: the grades are what was asked for.
    """
    path = failures_file()
    failing, problem = read(path)
    failing = failing if isinstance(failing, dict) and not problem else {}
    for exercise in result.exercises:
        blamed = {check.function for check in exercise.checks if check.outcome == "failed"}
        failing[exercise.name] = [name for name in registry.exercise(exercise.name).functions if name in blamed]
    write(path, failing)


def failing_functions(exercise: registry.Exercise) -> list[str]:
    """The functions of ``exercise`` that failed a check in the last grading recorded (none if unknown)."""
    failing, _ = read(failures_file())
    found = failing.get(exercise.module) if isinstance(failing, dict) else None
    return [name for name in exercise.functions if isinstance(found, list) and name in found]
