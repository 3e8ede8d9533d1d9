"""The kit's repository that ``softlookup dev`` reads and writes, from the root it is given.

The installed kit by default; the kit's tests point ``dev`` at a copy of it,
in the same process, so nothing here may be fixed when grader is imported.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from grader.engine import registry


@dataclass(frozen=True)
class Kit:
    root: Path = registry.KIT_ROOT

    @property
    def solutions(self) -> Path:
        return self.root / "solutions"

    @property
    def assignments(self) -> Path:
        return self.root / "assignments"

    @property
    def tests(self) -> Path:
        return self.root / "tests"

    @property
    def readme(self) -> Path:
        return self.root / "README.md"

    @property
    def package(self) -> Path:
        return self.root / "grader"

    @property
    def checks_dir(self) -> Path:
        return self.package / "checks"

    @property
    def exercises_file(self) -> Path:
        return self.checks_dir / "exercises.toml"

    @cached_property
    def exercises(self) -> tuple[registry.Exercise, ...]:
        """The exercises of this kit's registry, read once: a ``dev`` command reads the kit as it was at its start."""
        return registry.load(self.exercises_file)

    @cached_property
    def by_module(self) -> dict[str, registry.Exercise]:
        return {exercise.module: exercise for exercise in self.exercises}

    def shown(self, path: Path) -> str:
        return str(path.relative_to(self.root))
