"""The one list of exercises: every command and the kit's own tests read it.

An exercise is a module the learner edits (``assignments/<module>.py``), the
functions it must define, the hints shown to a learner who is stuck, and its
checks. Two sources, each holding a name once:

* ``grader/checks/exercises.toml``: one entry per exercise (module, title,
  functions, hints, time limit, what its workers import, the mistakes its
  checks can name, beside those every exercise shares). A data file, not
  Python, so that adding an exercise is adding an entry (``softlookup dev
  new`` appends one) and nothing else about exercises lives in code;
* ``grader/checks/{public,hidden}/test_<module>.py``: its checks, each a test
  function marked with its points (``@pytest.mark.points(2)``). The points are
  read from the source, not by importing it, so a command knows every total
  before pytest collects anything; in a student bundle, which has no hidden
  check files, the same reading gives the public points only.

A parametrised check shares its points equally between its cases, so partial
credit follows the number of cases passed.
"""

from __future__ import annotations

import ast
import re
import tomllib
from dataclasses import dataclass, field, fields
from functools import cached_property
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # grader/
CHECKS_DIR = PACKAGE_DIR / "checks"
EXERCISES_FILE = CHECKS_DIR / "exercises.toml"
KIT_ROOT = PACKAGE_DIR.parent  # the repository: solutions/ and assignments/ live here
SOLUTIONS_DIR = KIT_ROOT / "solutions"  # the reference solutions: what hidden checks and releases read by default
TIME_LIMIT = 5.0  # seconds per call into the learner's code, for an exercise that names no time_limit


class RegistryError(ValueError):
    """The exercises file or a check file says something the registry cannot use; the message says where."""


@dataclass(frozen=True)
class Check:
    name: str  # the test function's name
    points: int | float
    hidden: bool

# The lesson's wiring, by name: the engine imports none of the lesson's modules itself.
KIT_PACKAGE = "grader.lesson"  # the kit's own code that checks reach through the ``kit`` fixture
MODEL_BUILDER = "grader.lesson.models"  # ``build(spec)``: the GPT-2 a ModelSpec names, in the worker
# The kinds of fork server an exercise may need, from the lightest (a kind serves those before it), each with
# what it imports beyond numpy and the worker (torch and transformers come with the model builder).
NEEDS = {"numpy": (), "torch": ("torch",), "transformers": (MODEL_BUILDER,)}


def richest(needs) -> str:
    """The kind of fork server that serves all of ``needs`` (numpy where there are none)."""
    return max(needs, key=list(NEEDS).index, default="numpy")


class Hint(str):
    """A hint's text, and the functions it helps with (none: the idea of the whole exercise).

    ``softlookup hint`` shows first the hints about the functions whose checks
    failed last; a plain string is a hint about the exercise as a whole.
    """

    about: tuple[str, ...] = ()

    def __new__(cls, text: str, *about: str):
        hint = super().__new__(cls, text)
        hint.about = about
        return hint


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: there is one of each
class Exercise:
    module: str
    title: str
    functions: tuple[str, ...]
    hints: tuple[Hint, ...]  # from the idea to the specific step; a Hint names the functions it is about
    time_limit: float = TIME_LIMIT  # seconds per call into the learner's code
    needs: str = "numpy"  # what its workers import beforehand: one of NEEDS
    # The mistakes its verdicts can name (grader.engine.verify's ``mistake=``): name -> what it is, in a line of
    # the lesson's words, as the class summary lists it. The file's shared [mistakes] are every exercise's too.
    mistakes: dict[str, str] = field(default_factory=dict)
    # What each function returns, as its docstring promises (grader.engine.promises's phrases): function -> a
    # phrase, or -> {case: phrase} where the answer's type depends on the arguments (one query, or many).
    returns: dict[str, str | dict[str, str]] = field(default_factory=dict)

    def promise(self, function: str, case: str = "") -> str:
        """The phrase ``function`` keeps; ``case`` picks one where its type depends on the arguments."""
        promised = self.returns[function]
        return promised[case] if isinstance(promised, dict) else promised

    def check_files(self, hidden: bool = True) -> list[Path]:
        folders = ["public", "hidden"] if hidden else ["public"]
        files = [CHECKS_DIR / folder / f"test_{self.module}.py" for folder in folders]
        return [file for file in files if file.exists()]

    @cached_property
    def checks(self) -> tuple[Check, ...]:
        """Every check of the check files present, in file order, public first."""
        found, problems = [], []
        for path in self.check_files():
            checks, wrong = read_checks(path)
            found += checks
            problems += wrong
        if problems:
            raise RegistryError("\n".join(problems))
        return tuple(found)

    @cached_property
    def points(self) -> dict[str, int | float]:
        """check (test function name) -> points, in file order."""
        return {check.name: check.points for check in self.checks}

    @property
    def max_points(self) -> int | float:
        return sum(self.points.values())


def _points_markers(node: ast.FunctionDef | ast.ClassDef) -> list[ast.Call]:
    """The ``@pytest.mark.points(...)`` decorators of a function or class."""
    return [decorator for decorator in node.decorator_list
            if isinstance(decorator, ast.Call) and ast.unparse(decorator.func) == "pytest.mark.points"]


def _points(markers: list[ast.Call]) -> int | float | None:
    """N of a lone ``@pytest.mark.points(N)`` whose N is a number literal, 0 or more; else None."""
    if len(markers) != 1 or len(markers[0].args) != 1 or markers[0].keywords:
        return None
    value = markers[0].args[0].value if isinstance(markers[0].args[0], ast.Constant) else None
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None


def read_checks(path: Path, root: Path = KIT_ROOT) -> tuple[list[Check], list[str]]:
    """The checks of one check file with their points, and one line per check or marker that is wrong, naming
    the file from ``root`` (``softlookup dev check`` reads a kit at another root as well: a test's copy)."""
    name = path.relative_to(root)
    try:
        tree = ast.parse(path.read_bytes(), str(path))
    except SyntaxError as error:
        return [], [f"{name}:{error.lineno}: {error.msg}: fix it"]
    checks, problems = [], []
    top_level = {id(node) for node in tree.body}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        markers = _points_markers(node)
        is_check = id(node) in top_level and isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
        if not is_check:
            if markers:
                problems.append(f"{name}:{node.lineno}: {node.name} is not a check (a test_ function at the top "
                                "level): remove its @pytest.mark.points")
            continue
        points = _points(markers)
        if not markers:
            problems.append(f"{name}:{node.lineno}: check {node.name} has no points: mark it "
                            "@pytest.mark.points(N), 0 for a check worth none")
        elif points is None:
            problems.append(f"{name}:{node.lineno}: check {node.name} needs one @pytest.mark.points(N) with N a "
                            "number literal, 0 or more")
        else:
            checks.append(Check(node.name, points, path.parent.name == "hidden"))
    return checks, problems


def _hint(item, functions: tuple[str, ...]) -> Hint:
    """A hint of the file: a table ``{text = ..., about = [...]}``, or a string about the functions it names."""
    if isinstance(item, dict):
        return Hint(item["text"], *item.get("about", ()))
    return Hint(item, *[name for name in functions if re.search(rf"\b{name}\b", item)])


MISTAKE_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")  # stable and plain: lower case words joined by hyphens


def _mistakes(where: str, table) -> dict[str, str]:
    if not isinstance(table, dict) or not all(isinstance(text, str) and text for text in table.values()):
        raise RegistryError(f"{where}: mistakes must be a table of names, each with a line of text")
    if wrong := [name for name in table if not MISTAKE_NAME.fullmatch(name)]:
        raise RegistryError(f"{where}: mistake {wrong[0]!r} needs a name of lower-case words joined by hyphens")
    return table


def _check_returns(where: str, exercise: Exercise):
    """Only its functions promise types (that each of the kit's does, in a phrase that reads, is
    tests/engine/test_verify.py's to hold: an exercise being written may not have its promises yet)."""
    if extra := [name for name in exercise.returns if name not in exercise.functions]:
        raise RegistryError(f"{where}: returns names {extra[0]}(), which is not one of its functions")


def shared_mistakes(path: Path = EXERCISES_FILE) -> dict[str, str]:
    """The mistakes of the file's [mistakes] table, which every exercise's checks may name (the judge does)."""
    return _mistakes(f"{path.name}, [mistakes]", tomllib.loads(path.read_text(encoding="utf-8")).get("mistakes", {}))


def load(path: Path = EXERCISES_FILE) -> tuple[Exercise, ...]:
    """The exercises of ``path``, in its order; a wrong key or type is a RegistryError naming the entry."""
    entries, shared = tomllib.loads(path.read_text(encoding="utf-8")).get("exercise", []), shared_mistakes(path)
    known = [each.name for each in fields(Exercise)]
    exercises = []
    for number, entry in enumerate(entries, 1):
        where = f"{path.name}, exercise {number} ({entry.get('module', 'no module')})"
        if unknown := set(entry) - set(known):
            raise RegistryError(f"{where}: unknown key {sorted(unknown)[0]!r}; the keys are {', '.join(known)}")
        try:
            entry = {key: tuple(value) if isinstance(value, list) else value for key, value in entry.items()}
            entry["hints"] = tuple(_hint(item, entry.get("functions", ())) for item in entry.get("hints", ()))
            entry["mistakes"] = {**shared, **_mistakes(where, entry.get("mistakes", {}))}
            exercise = Exercise(**entry)
        except TypeError as error:  # a key missing
            raise RegistryError(f"{where}: {error}") from None
        _check_returns(where, exercise)
        if exercise.needs not in NEEDS:
            raise RegistryError(f"{where}: needs is {exercise.needs!r}; give one of {', '.join(NEEDS)}")
        exercises.append(exercise)
    return tuple(exercises)


EXERCISES: tuple[Exercise, ...] = load()
BY_MODULE = {exercise.module: exercise for exercise in EXERCISES}


def exercise(module: str) -> Exercise:
    try:
        return BY_MODULE[module]
    except KeyError:
        names = ", ".join(BY_MODULE)
        raise KeyError(f"no exercise called {module!r}; the exercises are: {names}") from None


def check_title(docstring: str) -> str:
    """A check's title: its docstring's first sentence, whole even where it runs onto the next line (a first
    line alone cut "...within 0.005, the" short)."""
    paragraph = " ".join(docstring.split("\n\n")[0].split())
    return re.split(r"(?<=[.!?])\s+(?=[A-Z])", paragraph)[0].rstrip(".")
