"""Which edition is installed (the instructor's kit, or a student bundle made from it), and which edition of
the kit graded a result.

``softlookup release student`` leaves the hidden checks and the reference
solutions out of the bundle and writes ``data/student_edition.json`` into its
package: the points each exercise's hidden checks are worth, and nothing
else about them. That file is what makes an installation the student
edition: there ``softlookup check`` grades the public checks, the only ones
it has, and says what the rest is worth and when it is graded.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from grader.engine import registry

EDITION_FILE = Path(__file__).resolve().parents[1] / "data" / "student_edition.json"
# What decides a verdict besides the student's work and the reference: the checks, and the code that runs them,
# compares answers and reads results (the whole engine, and the lesson whose GPT-2 gives the kit's answers).
VERDICT_FOLDERS = (registry.CHECKS_DIR, registry.PACKAGE_DIR / "engine", registry.PACKAGE_DIR / "lesson")
EDITION_DIGITS = 16  # enough to tell editions apart in a gradebook's column


@dataclass(frozen=True)
class StudentEdition:
    hidden_points: dict[str, float]  # exercise module -> points its hidden checks are worth

    def note(self, modules: list[str], public_max: float) -> str:
        """The line under a student's total: what the public checks' maximum leaves out."""
        hidden = sum(self.hidden_points.get(module, 0.0) for module in modules)
        if not hidden:
            return "Every check of these exercises is public: this is your grade."
        return (f"These are the public checks, worth {public_max:g} points. Hidden checks, worth {hidden:g} more "
                f"(out of {public_max + hidden:g} in all), test your functions on other inputs when your instructor "
                "grades.")


def student() -> StudentEdition | None:
    """The student edition's settings, or None in the instructor's kit."""
    if not EDITION_FILE.is_file():
        return None
    return StudentEdition({module: float(points) for module, points in
                           json.loads(EDITION_FILE.read_text(encoding="utf-8"))["hidden_points"].items()})


def write(package: Path, hidden_points: dict[str, float]):
    """Mark the package at ``package`` as a student edition."""
    path = package / EDITION_FILE.relative_to(EDITION_FILE.parents[1])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hidden_points": hidden_points}, indent=1, sort_keys=True) + "\n",
                    encoding="utf-8")


def kit_edition(reference: Path) -> str:
    """The edition of the kit that grades with the reference solutions in ``reference``: a digest of every
    file's name and content in :data:`VERDICT_FOLDERS` and ``reference``, the first :data:`EDITION_DIGITS`
    hexadecimal digits.

    Results that name the same edition were given by the same checks; a fixed check, a new hidden case or a
    changed reference gives another. ``softlookup grade`` records it with every result and grades a student
    again when it changed, and ``softlookup merge`` joins only shares of one edition. It takes
    whole folders rather than a list of the files that matter: a list would go stale without anyone
    noticing, and a grade kept from other checks is wrong, while a needless regrade costs only time.
    Compiled files, hidden files and anything in a hidden folder are left out; no link is followed.
    """
    hashed = hashlib.sha256()
    for top in (*VERDICT_FOLDERS, Path(reference)):
        hashed.update(b"\0folder\0")
        for folder, subfolders, names in os.walk(top):
            subfolders[:] = sorted(name for name in subfolders if name != "__pycache__" and not name.startswith("."))
            for name in sorted(names):
                path = Path(folder) / name
                if name.startswith(".") or name.endswith((".pyc", ".pyo")) or not path.is_file():
                    continue
                hashed.update(str(path.relative_to(top)).encode("utf-8", "surrogateescape") + b"\0")
                hashed.update(hashlib.sha256(path.read_bytes()).digest())
    return hashed.hexdigest()[:EDITION_DIGITS]
