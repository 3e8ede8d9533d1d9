"""How to grade, declared once: the options every road to the checks shares.

``softlookup check``, ``softlookup grade``, the Gradescope autograder, a
notebook's ``check_here``, nbgrader's autograde step and plain ``pytest`` all
grade through the same pytest plugin. :data:`DECLARED` lists each option once,
in argparse's terms, which pytest's ``addoption`` also speaks; commands add
them to their parsers, the plugin to pytest's, and :class:`Options` carries
the values from one to the other and fills in the defaults, so that no
consumer writes one of its own.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

from grader.engine import registry
from grader.engine.confinement.policy import IMPORT_TIME_LIMIT, MEMORY_LIMIT, TIME_BUDGET

DECLARED: dict[str, dict] = {  # option -> argparse keywords (the flag is --option with - for _)
    "solutions": dict(type=Path, metavar="DIR",
                      help="reference solutions for the hidden checks (default: the kit's solutions/)"),
    "time_limit": dict(type=float, metavar="SECONDS",
                       help="CPU time per call into the learner's code, however busy the machine; a call may wait (sleep, "
                            "block) twice as long (default: 5; 30 for GPT-2)"),
    "import_time_limit": dict(type=float, metavar="SECONDS",
                              help="CPU time to import each of the learner's modules, once (default: "
                                   f"{IMPORT_TIME_LIMIT:g}, or the time limit where that is longer)"),
    "memory_limit": dict(type=float, metavar="MB", help=f"memory the learner's code may use (default {MEMORY_LIMIT:g})"),
    "time_budget": dict(type=float, metavar="SECONDS",
                        help=f"all calls into one submission's code together (default {TIME_BUDGET:g}); once it is "
                             "spent, the remaining checks fail at once"),
    "gpt2_model": dict(type=Path, metavar="DIR",
                       help="GPT-2 small, for the lesson's claims (default: $SOFTLOOKUP_GPT2, then the HF cache)"),
    "require_isolation": dict(action="store_true",
                              help="refuse to grade unless learner code can be fully confined on this machine"),
    "public": dict(action="store_true", help="run the public checks only, not the hidden ones"),
}


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def declare(add, names=tuple(DECLARED)):
    """Declare ``names`` with ``add``: an argparse parser's ``add_argument`` or a pytest group's ``addoption``."""
    for name in names:
        add(flag(name), dest=name, **DECLARED[name])


@dataclass(frozen=True)
class Options:
    """The values of :data:`DECLARED`; ``None`` (or False) leaves the plugin's default."""

    solutions: Path | None = None
    time_limit: float | None = None
    import_time_limit: float | None = None
    memory_limit: float | None = None
    time_budget: float | None = None
    gpt2_model: Path | None = None
    require_isolation: bool = False
    public: bool = False

    @classmethod
    def of(cls, values) -> "Options":
        """From a parsed command line or pytest's config.option: whichever of the names it has."""
        return cls(**{field.name: getattr(values, field.name) for field in dataclasses.fields(cls)
                      if getattr(values, field.name, None) is not None})

    # The values as grading uses them: the one given, else the kit's default.
    @property
    def reference_folder(self) -> Path:
        return Path(self.solutions or registry.SOLUTIONS_DIR)

    @property
    def budget(self) -> float:
        return self.time_budget or TIME_BUDGET

    @property
    def memory_bytes(self) -> int:
        return int((self.memory_limit or MEMORY_LIMIT) * 2**20)

    def time_limit_for(self, exercise: registry.Exercise) -> float:
        return self.time_limit or exercise.time_limit

    def import_time_limit_for(self, exercise: registry.Exercise) -> float:
        return self.import_time_limit or max(self.time_limit_for(exercise), IMPORT_TIME_LIMIT)

    def problem(self) -> str | None:
        """What is wrong with these values, in one line (None if nothing)."""
        for name in ("time_limit", "import_time_limit", "memory_limit", "time_budget"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                return f"{flag(name)} must be a positive number, not {value:g}"
        if self.solutions and not Path(self.solutions).is_dir():
            return f"{flag('solutions')} {self.solutions} is not a folder"
        return None

    def pytest_args(self) -> list[str]:
        """These values as the plugin's command line (paths made absolute: pytest may run elsewhere)."""
        args = []
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is True:
                args.append(flag(field.name))
            elif value not in (None, False):
                args.append(f"{flag(field.name)}={Path(value).resolve() if isinstance(value, Path) else value}")
        return args


def add_exercise_option(p):
    p.add_argument("--exercise", action="append", choices=list(registry.BY_MODULE), metavar="NAME",
                   help=f"grade only this exercise (repeatable): {', '.join(registry.BY_MODULE)}")


def chosen_exercises(args) -> list[registry.Exercise]:
    if args.exercise:
        return [registry.exercise(name) for name in args.exercise]
    if getattr(args, "cases", None):  # only the exercises that have that check need grading
        return [exercise for exercise in registry.EXERCISES if args.cases in exercise.points]
    return list(registry.EXERCISES)


# pytest's own plugins that the judge has no use for (several cost time on every check).
UNUSED_PLUGINS = ("cacheprovider", "logging", "warnings", "faulthandler", "unraisableexception", "threadexception",
                  "doctest", "junitxml", "pastebin", "stepwise", "legacypath", "tmpdir", "monkeypatch", "recwarn",
                  "setuponly", "setupplan", "unittest", "subtests")
# How the judge runs pytest: its own configuration file, no conftest.py from anywhere, no plugin it did not
# name, no folder put on sys.path, no assertion rewriting (the checks report through grader.engine.verify).
PYTEST_ARGS = ["-c", str(registry.CHECKS_DIR / "pytest.ini"), f"--rootdir={registry.CHECKS_DIR}", "--noconftest",
               "-p", "grader.engine.plugin", "--import-mode=importlib", "--assert=plain", "-o", "addopts=",
               *[arg for name in UNUSED_PLUGINS for arg in ("-p", f"no:{name}")]]


def pytest_command(exercises: list[registry.Exercise], chosen: Options) -> list[str]:
    """pytest's arguments for the checks of ``exercises`` (public ones only with ``chosen.public``) with ``chosen``:
    how :func:`grader.engine.classes.runner.run_checks` and a class's judges run pytest. Here, not beside them,
    so that a class's coordinator builds them without importing pytest."""
    files = [str(path) for exercise in exercises for path in exercise.check_files(hidden=not chosen.public)]
    return [*files, *chosen.pytest_args(), *PYTEST_ARGS]


def stay_offline():
    """Grading never downloads: Hugging Face's hub is told to fail at once, never to retry for half a minute."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
