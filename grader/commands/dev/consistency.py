"""``softlookup dev check``: everything out of step between the exercises and the kit, one line each.

Every exercise of ``grader/checks/exercises.toml`` needs its reference
solution (defining its functions, the reference code between the solution
markers), its stubs and notebook regenerated from it, public and hidden
checks that each carry their points, wrong implementations in
``tests/mistakes.py`` that together fail every check worth points, lazy
answers in ``tests/degenerate.py``, a hint, and the README's table of
exercises as :mod:`.readme` writes it. This reads the kit at the root it is
given and grades nothing; the kit's tests then grade what it read.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

from grader.commands.dev import readme
from grader.commands.dev.kit import Kit
from grader.engine import registry
from grader.releases import assignments, stubs

MIN_MISTAKES = 6  # wrong implementations per exercise
PLACEHOLDER = "TODO(dev new)"


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


def solution_problems(kit: Kit, exercise: registry.Exercise) -> list[str]:
    path = kit.solutions / f"{exercise.module}.py"
    if not path.is_file():
        return [f"{kit.shown(path)}: missing: write the reference solution, its code between {stubs.BEGIN} and "
                f"{stubs.END}"]
    source = path.read_text()
    try:
        defined = functions_of(source)
        stubs.make_stub(source, kit.shown(path))
    except SyntaxError as error:
        return [f"{kit.shown(path)}:{error.lineno}: {error.msg}: fix it"]
    except stubs.MarkerError as error:
        return [f"{error}: pair every {stubs.BEGIN} with an {stubs.END}"]
    lines = [line.strip() for line in source.splitlines()]
    problems = []
    for name in exercise.functions:
        if name not in defined:
            problems.append(f"{kit.shown(path)}: {name}() is not defined: write it, or take it out of "
                            f"{exercise.module}'s functions in {kit.shown(kit.exercises_file)}")
        elif stubs.BEGIN not in lines[defined[name].lineno - 1:defined[name].end_lineno]:
            problems.append(f"{kit.shown(path)}:{defined[name].lineno}: {name}() has no solution markers: put its "
                            f"reference code between {stubs.BEGIN} and {stubs.END}, or its stub gives it away")
    return problems


def check_problems(kit: Kit, exercise: registry.Exercise) -> tuple[list[registry.Check], list[str]]:
    """The exercise's checks that carry their points, and a line for each file or check that is wrong."""
    found, problems = [], []
    for folder, what in (("public", "the checks a learner runs"),
                         ("hidden", "the checks that compare with the reference when the instructor grades")):
        path = kit.checks_dir / folder / f"test_{exercise.module}.py"
        if not path.is_file():
            problems.append(f"{kit.shown(path)}: missing: write {what}, each marked @pytest.mark.points(N)")
            continue
        checks, wrong = registry.read_checks(path, kit.root)
        if not checks and not wrong:
            problems.append(f"{kit.shown(path)}: no check: write a test_ function marked @pytest.mark.points(N)")
        found += checks
        problems += wrong
    return found, problems


def hint_problems(kit: Kit, exercise: registry.Exercise) -> list[str]:
    if any(hint.strip() for hint in exercise.hints):
        return []
    return [f"{kit.shown(kit.exercises_file)}: {exercise.module} has no hint: give it at least one"]


def assignment_problems(kit: Kit) -> list[str]:
    """``softlookup release --check``'s verdict, one line per stale file."""
    try:
        plan = assignments.planned(kit.solutions, kit.assignments, kit.exercises)
    except (stubs.MarkerError, SyntaxError, OSError):  # a solution that is missing or broken: reported above
        return []
    return [f"{kit.shown(path)}: out of date: run softlookup release" for path in assignments.out_of_date(plan)]


def mistake_problems(kit: Kit, mistakes: list, checks: dict[str, list[registry.Check]]) -> list[str]:
    where = kit.shown(kit.tests / "mistakes.py")
    problems = []
    for mistake in mistakes:
        if mistake.module not in checks:
            problems.append(f"{where}: mistake {mistake.name!r} is for {mistake.module}, which is no exercise: "
                            "fix its module or remove it")
        elif mistake.caught_by not in {check.name for check in checks[mistake.module]}:
            problems.append(f"{where}: mistake {mistake.name!r} names {mistake.caught_by}, which is no check of "
                            f"{mistake.module}: name the check that fails it")
        elif mistake.named and mistake.named not in kit.by_module[mistake.module].mistakes:
            problems.append(f"{where}: mistake {mistake.name!r} is named {mistake.named!r}, which {mistake.module} "
                            f"does not list: add it to its mistakes in {kit.shown(kit.exercises_file)}")
    shared = registry.shared_mistakes(kit.exercises_file)
    # A name may stand in another file of the checks, which this exercise's import (the GPT-2 slips, the
    # descent rules of learning_numpy.py), or in grader.engine.verify, which every check calls.
    _, mentioned = names_in_checks([*kit.checks_dir.rglob("*.py"), kit.package / "engine" / "verify.py"])
    for module, its_checks in checks.items():
        given, _ = names_in_checks(kit.checks_dir.glob(f"*/test_{module}.py"))
        own = {name for name in kit.by_module[module].mistakes if name not in shared}
        told = {mistake.named for mistake in mistakes if mistake.module == module}
        problems += [f"grader/checks: a verdict of test_{module}.py names the mistake {name!r}, which {module} does "
                     f"not list: add it to its mistakes in {kit.shown(kit.exercises_file)}"
                     for name in sorted(given - set(kit.by_module[module].mistakes))]
        problems += [f"{kit.shown(kit.exercises_file)}: {module}'s mistake {name!r} is named by no check: name it "
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
    problems += [f"{kit.shown(kit.exercises_file)}: the shared mistake {name!r} is named by no check: name it in a "
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


def degenerate_problems(kit: Kit, answers: dict[str, str]) -> list[str]:
    where = kit.shown(kit.tests / "degenerate.py")
    problems = []
    for exercise in kit.exercises:
        if exercise.module not in answers:
            problems.append(f"{where}: no lazy answers for {exercise.module}: add MODULES[{exercise.module!r}], "
                            f"defining {', '.join(exercise.functions)} the way of each strategy")
            continue
        defined = functions_of(answers[exercise.module])
        problems += [f"{where}: MODULES[{exercise.module!r}] does not define {name}(): add its lazy answer"
                     for name in exercise.functions if name not in defined]
    return problems


def stray_problems(kit: Kit) -> list[str]:
    """Solutions and check files of no exercise: graded by nothing, or breaking `pytest grader/checks`."""
    files = [*kit.solutions.glob("*.py"), *kit.checks_dir.glob("*/test_*.py")]
    return [f"{kit.shown(path)}: no exercise {module} in {kit.shown(kit.exercises_file)}: add its entry, or remove "
            "the file" for path in sorted(files)
            if (module := path.stem.removeprefix("test_")) not in kit.by_module]


def placeholder_problems(kit: Kit) -> list[str]:
    """What ``dev new`` left for the author to write."""
    files = [kit.exercises_file, *sorted(kit.solutions.glob("*.py")), *sorted(kit.checks_dir.glob("*/*.py")),
             kit.tests / "mistakes.py", kit.tests / "degenerate.py"]
    return [f"{kit.shown(path)}:{number}: still {PLACEHOLDER}: write the exercise's own text there"
            for path in files if path.is_file()
            for number, line in enumerate(path.read_text().splitlines(), 1) if PLACEHOLDER in line]


def checks_of(kit: Kit) -> dict[str, list[registry.Check]]:
    """Each exercise's checks that carry their points: what the README's table is written from."""
    return {exercise.module: check_problems(kit, exercise)[0] for exercise in kit.exercises}


def problems(kit: Kit) -> list[str]:
    """Everything out of step in the kit, one line each, saying what to do."""
    found, checks = [], {}
    for exercise in kit.exercises:
        checks[exercise.module], wrong = check_problems(kit, exercise)
        found += solution_problems(kit, exercise) + wrong + hint_problems(kit, exercise)
    found += assignment_problems(kit)
    for name, variable, judged in (("mistakes", "MISTAKES", lambda data: mistake_problems(kit, data, checks)),
                                   ("degenerate", "MODULES", lambda data: degenerate_problems(kit, data))):
        try:
            data = load_catalogue(kit.tests / f"{name}.py", variable)
        except Exception as error:  # whatever the catalogue does wrong is the problem to report
            found.append(f"tests/{name}.py: cannot be loaded ({type(error).__name__}: {error}): fix it")
        else:
            found += judged(data)
    return found + readme.problems(kit, checks) + stray_problems(kit) + placeholder_problems(kit)
