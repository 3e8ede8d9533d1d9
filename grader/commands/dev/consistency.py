"""``softlookup dev check``: everything out of step between the exercises and the kit, one line each.

Every exercise of ``grader/checks/exercises.toml`` needs its reference
solution (defining its functions, the reference code between the solution
markers), its stubs and notebook regenerated from it, public and hidden
checks that each carry their points, wrong implementations in
``tests/mistakes.py`` that together fail every check worth points, lazy
answers in ``tests/degenerate.py``, a hint, its row in the README's table
of exercises, and the totals that the kit's documents state. This reads the
kit and grades nothing; the kit's tests then grade what it read.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path

from grader.engine import registry
from grader.releases import assignments, stubs

SOLUTIONS = registry.KIT_ROOT / "solutions"
ASSIGNMENTS = registry.KIT_ROOT / "assignments"
TESTS = registry.KIT_ROOT / "tests"
README = registry.KIT_ROOT / "README.md"
# The kit's documents, README first: the README holds the exercises table, and any of them may state a total.
DOCUMENTS = ("README.md", "docs/learners.md", "docs/instructors.md", "docs/speed.md", "SECURITY.md",
             "CONTRIBUTING.md")
MIN_MISTAKES = 6  # wrong implementations per exercise
PLACEHOLDER = "TODO(dev new)"
NUMBER = r"(\d+(?:\.\d+)?)"
# The documents' sentences that state a total, and which total: public, hidden or all.
README_TOTALS = (
    (re.compile(rf"grades the {NUMBER} public points"), "public", "the public checks' points"),
    (re.compile(rf"hidden\s+checks,\s+worth\s+{NUMBER}\s+more"), "hidden", "the hidden checks' points"),
    (re.compile(rf"\bof\s+(?:the\s+)?{NUMBER}\s+points"), "all", "all the checks' points"),
)
README_ROW = re.compile(r"^\| `(\w+)\.py` \|.*\| " + NUMBER + r" \|$")


def shown(path: Path) -> str:
    return str(path.relative_to(registry.KIT_ROOT))


def load_catalogue(path: Path, variable: str):
    """``variable`` of a catalogue of the kit's tests (``tests/mistakes.py``): plain data, loaded, never graded."""
    spec = importlib.util.spec_from_file_location(f"_dev_{path.stem}", path)
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # where its dataclasses look
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return getattr(module, variable)


def functions_of(source: str) -> dict[str, ast.FunctionDef]:
    return {node.name: node for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)}


# -- dev check ----------------------------------------------------------------------


def solution_problems(exercise: registry.Exercise) -> list[str]:
    path = SOLUTIONS / f"{exercise.module}.py"
    if not path.is_file():
        return [f"{shown(path)}: missing: write the reference solution, its code between {stubs.BEGIN} and "
                f"{stubs.END}"]
    source = path.read_text()
    try:
        defined = functions_of(source)
        stubs.make_stub(source, shown(path))
    except SyntaxError as error:
        return [f"{shown(path)}:{error.lineno}: {error.msg}: fix it"]
    except stubs.MarkerError as error:
        return [f"{error}: pair every {stubs.BEGIN} with an {stubs.END}"]
    lines = [line.strip() for line in source.splitlines()]
    problems = []
    for name in exercise.functions:
        if name not in defined:
            problems.append(f"{shown(path)}: {name}() is not defined: write it, or take it out of "
                            f"{exercise.module}'s functions in {shown(registry.EXERCISES_FILE)}")
        elif stubs.BEGIN not in lines[defined[name].lineno - 1:defined[name].end_lineno]:
            problems.append(f"{shown(path)}:{defined[name].lineno}: {name}() has no solution markers: put its "
                            f"reference code between {stubs.BEGIN} and {stubs.END}, or its stub gives it away")
    return problems


def check_problems(exercise: registry.Exercise) -> tuple[list[registry.Check], list[str]]:
    """The exercise's checks that carry their points, and a line for each file or check that is wrong."""
    found, problems = [], []
    for folder, what in (("public", "the checks a learner runs"),
                         ("hidden", "the checks that compare with the reference when the instructor grades")):
        path = registry.CHECKS_DIR / folder / f"test_{exercise.module}.py"
        if not path.is_file():
            problems.append(f"{shown(path)}: missing: write {what}, each marked @pytest.mark.points(N)")
            continue
        checks, wrong = registry.read_checks(path)
        if not checks and not wrong:
            problems.append(f"{shown(path)}: no check: write a test_ function marked @pytest.mark.points(N)")
        found += checks
        problems += wrong
    return found, problems


def hint_problems(exercise: registry.Exercise) -> list[str]:
    if any(hint.strip() for hint in exercise.hints):
        return []
    return [f"{shown(registry.EXERCISES_FILE)}: {exercise.module} has no hint: give it at least one"]


def assignment_problems() -> list[str]:
    """``softlookup release --check``'s verdict, one line per stale file."""
    try:
        plan = assignments.planned(SOLUTIONS, ASSIGNMENTS)
    except (stubs.MarkerError, SyntaxError, OSError):  # a solution that is missing or broken: reported above
        return []
    return [f"{shown(path)}: out of date: run softlookup release" for path in assignments.out_of_date(plan)]


def mistake_problems(mistakes: list, checks: dict[str, list[registry.Check]]) -> list[str]:
    where = shown(TESTS / "mistakes.py")
    problems = []
    for mistake in mistakes:
        if mistake.module not in checks:
            problems.append(f"{where}: mistake {mistake.name!r} is for {mistake.module}, which is no exercise: "
                            "fix its module or remove it")
        elif mistake.caught_by not in {check.name for check in checks[mistake.module]}:
            problems.append(f"{where}: mistake {mistake.name!r} names {mistake.caught_by}, which is no check of "
                            f"{mistake.module}: name the check that fails it")
        elif mistake.named and mistake.named not in registry.BY_MODULE[mistake.module].mistakes:
            problems.append(f"{where}: mistake {mistake.name!r} is named {mistake.named!r}, which {mistake.module} "
                            f"does not list: add it to its mistakes in {shown(registry.EXERCISES_FILE)}")
    shared = registry.shared_mistakes()
    # A name may stand in another file of the checks, which this exercise's import (the GPT-2 slips, the
    # descent rules of learning_numpy.py), or in the judge that every check calls.
    _, mentioned = names_in_checks([*registry.CHECKS_DIR.rglob("*.py"), registry.PACKAGE_DIR / "engine" / "judge.py"])
    for module, its_checks in checks.items():
        given, _ = names_in_checks(registry.CHECKS_DIR.glob(f"*/test_{module}.py"))
        own = {name for name in registry.BY_MODULE[module].mistakes if name not in shared}
        told = {mistake.named for mistake in mistakes if mistake.module == module}
        problems += [f"grader/checks: a verdict of test_{module}.py names the mistake {name!r}, which {module} does "
                     f"not list: add it to its mistakes in {shown(registry.EXERCISES_FILE)}"
                     for name in sorted(given - set(registry.BY_MODULE[module].mistakes))]
        problems += [f"{shown(registry.EXERCISES_FILE)}: {module}'s mistake {name!r} is named by no check: name it "
                     f"in a verdict (mistake={name!r}) or remove it" for name in sorted(own - mentioned)]
        problems += [f"{where}: no wrong implementation of {module} is told the mistake {name!r}: add one with "
                     f"named={name!r}, so that a test sees the name given" for name in sorted(own & mentioned - told)]
        count = sum(mistake.module == module for mistake in mistakes)
        if count < MIN_MISTAKES:
            problems.append(f"{where}: {module} has {count} wrong implementations: add {MIN_MISTAKES - count} "
                            f"more ({MIN_MISTAKES} per exercise)")
        caught = {mistake.caught_by for mistake in mistakes if mistake.module == module}
        problems += [f"{where}: no wrong implementation is caught by {module}'s {check.name}: add one that it fails "
                     "(a check worth points must catch one)" for check in its_checks
                     if check.points > 0 and check.name not in caught]
    told = {mistake.named for mistake in mistakes}
    problems += [f"{shown(registry.EXERCISES_FILE)}: the shared mistake {name!r} is named by no check: name it in a "
                 f"verdict or remove it" for name in shared if name not in mentioned]
    return problems + [f"{where}: no wrong implementation is told the shared mistake {name!r}: add one with "
                       f"named={name!r}" for name in shared if name in mentioned and name not in told]


def names_in_checks(paths) -> tuple[set[str], set[str]]:
    """Read from the source of ``paths``: the mistake names their verdicts give as ``mistake="..."``, and every
    string they hold (where a name given through a variable stands)."""
    given, strings = set(), set()
    for path in paths:
        try:
            tree = ast.parse(path.read_bytes())
        except SyntaxError:  # check_problems says where
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                strings.add(node.value)
            if isinstance(node, ast.keyword) and node.arg == "mistake" and isinstance(node.value, ast.Constant):
                given.add(node.value.value)
    return given, strings


def degenerate_problems(answers: dict[str, str]) -> list[str]:
    where = shown(TESTS / "degenerate.py")
    problems = []
    for exercise in registry.EXERCISES:
        if exercise.module not in answers:
            problems.append(f"{where}: no lazy answers for {exercise.module}: add MODULES[{exercise.module!r}], "
                            f"defining {', '.join(exercise.functions)} the way of each strategy")
            continue
        defined = functions_of(answers[exercise.module])
        problems += [f"{where}: MODULES[{exercise.module!r}] does not define {name}(): add its lazy answer"
                     for name in exercise.functions if name not in defined]
    return problems


def line_at(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def readme_problems(checks: dict[str, list[registry.Check]]) -> list[str]:
    """The README's exercises table, and the documents' sentences that state a total, against the checks' points."""
    text = README.read_text()
    if "\n## The exercises\n" not in text:
        return ['README.md: no section "## The exercises" with its table of exercises and points: put it back']
    totals = {"public": sum(c.points for found in checks.values() for c in found if not c.hidden),
              "hidden": sum(c.points for found in checks.values() for c in found if c.hidden)}
    totals["all"] = totals["public"] + totals["hidden"]
    documents = {name: (registry.KIT_ROOT / name).read_text() for name in DOCUMENTS
                 if (registry.KIT_ROOT / name).is_file()}
    problems = []
    for pattern, total, what in README_TOTALS:
        matches = [(name, document, match) for name, document in documents.items()
                   for match in pattern.finditer(document)]
        if not matches:
            problems.append(f"the kit's documents ({', '.join(DOCUMENTS)}): no sentence matches "
                            f"{pattern.pattern!r}: state {what} ({totals[total]:g}) in those words")
        problems += [f"{name}:{line_at(document, match.start(1))}: make {' '.join(match.group(0).split())!r} say "
                     f"{totals[total]:g} ({what})" for name, document, match in matches
                     if float(match.group(1)) != totals[total]]
    return problems + table_problems(text, {module: sum(c.points for c in found) for module, found in checks.items()})


def table_problems(text: str, points: dict[str, float]) -> list[str]:
    """The README's table of exercises: a row per exercise, in order, with its points."""
    section = text.index("\n## The exercises\n") + 1
    rows = {}
    for number, line in enumerate(text[section:].split("\n\n## ")[0].splitlines(), line_at(text, section)):
        if match := README_ROW.match(line):
            rows[match.group(1)] = (number, float(match.group(2)))
    problems, last = [], None
    for exercise in registry.EXERCISES:
        module = exercise.module
        if module not in rows:
            after = f" after the row of {last}.py" if last else ""
            problems.append(f"README.md: the exercises table has no row for {module}.py: add | `{module}.py` | "
                            f"{', '.join(f'`{name}`' for name in exercise.functions)} | {points[module]:g} |{after}")
        elif rows[module][1] != points[module]:
            problems.append(f"README.md:{rows[module][0]}: the row of {module}.py gives {rows[module][1]:g} points: "
                            f"make it {points[module]:g}")
        last = module
    return problems + [f"README.md:{number}: the exercises table has a row for {module}.py, which is no exercise: "
                       "remove it" for module, (number, _) in rows.items() if module not in registry.BY_MODULE]


def stray_problems() -> list[str]:
    """Solutions and check files of no exercise: graded by nothing, or breaking `pytest grader/checks`."""
    files = [*SOLUTIONS.glob("*.py"), *registry.CHECKS_DIR.glob("*/test_*.py")]
    return [f"{shown(path)}: no exercise {module} in {shown(registry.EXERCISES_FILE)}: add its entry, or remove "
            "the file" for path in sorted(files)
            if (module := path.stem.removeprefix("test_")) not in registry.BY_MODULE]


def placeholder_problems() -> list[str]:
    """What ``dev new`` left for the author to write."""
    files = [registry.EXERCISES_FILE, *sorted(SOLUTIONS.glob("*.py")), *sorted(registry.CHECKS_DIR.glob("*/*.py")),
             TESTS / "mistakes.py", TESTS / "degenerate.py"]
    return [f"{shown(path)}:{number}: still {PLACEHOLDER}: write the exercise's own text there"
            for path in files if path.is_file()
            for number, line in enumerate(path.read_text().splitlines(), 1) if PLACEHOLDER in line]


def problems() -> list[str]:
    """Everything out of step in the kit, one line each, saying what to do."""
    found, checks = [], {}
    for exercise in registry.EXERCISES:
        checks[exercise.module], wrong = check_problems(exercise)
        found += solution_problems(exercise) + wrong + hint_problems(exercise)
    found += assignment_problems()
    for name, variable, judged in (("mistakes", "MISTAKES", lambda data: mistake_problems(data, checks)),
                                   ("degenerate", "MODULES", degenerate_problems)):
        try:
            data = load_catalogue(TESTS / f"{name}.py", variable)
        except Exception as error:  # whatever the catalogue does wrong is the problem to report
            found.append(f"tests/{name}.py: cannot be loaded ({type(error).__name__}: {error}): fix it")
        else:
            found += judged(data)
    return found + readme_problems(checks) + stray_problems() + placeholder_problems()
