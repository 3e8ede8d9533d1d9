"""Which edition is installed: the instructor's kit, or a student bundle made from it.

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
from dataclasses import dataclass
from pathlib import Path

EDITION_FILE = Path(__file__).resolve().parents[1] / "data" / "student_edition.json"


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


def kit_edition(solutions: Path) -> str:
    """A short digest of the kit that grades: the content of every file of its package and of the reference
    solutions in ``solutions``. Results that name the same edition were given by the same checks; a fixed
    check, a new hidden case or a changed reference gives another."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for root in (package, Path(solutions)):
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                digest.update(f"{path.relative_to(root)}\0".encode() + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]
