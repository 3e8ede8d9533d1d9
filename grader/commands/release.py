"""``softlookup release``: make the learners' stubs and notebooks from the reference solutions.

``solutions/`` is the single source. Each region between ``### BEGIN SOLUTION``
and ``### END SOLUTION`` (nbgrader's markers) becomes a ``raise
NotImplementedError`` at the same indentation; every other line, docstrings
included, is copied as it is. Each module also becomes a notebook beside it
(:mod:`grader.releases.exercise_notebooks`). ``--check`` only compares, for CI and the
kit's tests: it fails when ``assignments/`` is out of date.
``softlookup release student OUT``, ``gradescope ZIP`` and ``nbgrader
COURSE`` make the releases for a class instead (:data:`RELEASES`).
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

from grader.engine import registry
from grader.cli import Parser

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
RELEASES = {  # softlookup release NAME ...: the other things made from solutions/
    "student": ("grader.releases.bundle", "OUT: the students' bundle, without the reference or the hidden checks"),
    "gradescope": ("grader.releases.gradescope", "ZIP: a Gradescope autograder"),
    "nbgrader": ("grader.releases.nbgrader_course", "COURSE: an nbgrader course"),
}
_DEF = re.compile(r"^\s*def (\w+)\(")


class MarkerError(ValueError):
    """Unbalanced or nested solution markers in a solution file."""


def make_stub(source: str, filename: str = "<source>") -> str:
    """The learner's version of a solution file."""
    lines, out = source.splitlines(keepends=True), []
    function, inside = None, None
    for number, line in enumerate(lines, 1):
        if match := _DEF.match(line):
            function = match.group(1)
        stripped = line.strip()
        if stripped == BEGIN:
            if inside is not None:
                raise MarkerError(f"{filename}:{number}: {BEGIN} inside another solution region")
            inside = number
            indent = line[: len(line) - len(line.lstrip())]
            where = f"{function}()" if function else "this part"
            out.append(f"{indent}# YOUR CODE HERE\n")
            out.append(f'{indent}raise NotImplementedError("{where}: replace this line with your code")\n')
        elif stripped == END:
            if inside is None:
                raise MarkerError(f"{filename}:{number}: {END} without a {BEGIN}")
            inside = None
        elif inside is None:
            out.append(line)
    if inside is not None:
        raise MarkerError(f"{filename}:{inside}: {BEGIN} is never closed")
    return "".join(out)


def planned(solutions: Path, assignments: Path) -> dict[Path, str]:
    """Every assignment file (module and notebook) and the text it should have."""
    from grader.releases.exercise_notebooks import learner_notebook

    plan = {}
    for exercise in registry.EXERCISES:
        source = (solutions / f"{exercise.module}.py").read_text()
        plan[assignments / f"{exercise.module}.py"] = make_stub(source, f"{exercise.module}.py")
        plan[assignments / f"{exercise.module}.ipynb"] = learner_notebook(exercise, source)
    return plan


def out_of_date(plan: dict[Path, str]) -> list[Path]:
    """The planned files that are missing or differ from their plan: what ``--check`` reports."""
    return [path for path, text in plan.items() if not path.exists() or path.read_text() != text]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] and argv[0] in RELEASES:
        return importlib.import_module(RELEASES[argv[0]][0]).main(argv[1:])
    parser = Parser(prog="softlookup release", description=__doc__.splitlines()[0],
                    epilog="; ".join(f"softlookup release {name} {what}" for name, (_, what) in RELEASES.items())
                    + " (each has its --help)")
    parser.add_argument("--solutions", type=Path, default=registry.KIT_ROOT / "solutions")
    parser.add_argument("--assignments", type=Path, default=registry.KIT_ROOT / "assignments")
    parser.add_argument("--check", action="store_true", help="only report whether assignments/ is up to date")
    args = parser.parse_args(argv)
    if not args.solutions.is_dir():
        parser.error(f"{args.solutions} is not a folder of solutions (give --solutions DIR)")
    try:
        plan = planned(args.solutions, args.assignments)
    except (MarkerError, FileNotFoundError) as error:
        print(f"softlookup release: {error}", file=sys.stderr)
        return 2
    stale = out_of_date(plan)
    if args.check:
        for path in stale:
            print(f"out of date: {path} (run `softlookup release`)", file=sys.stderr)
        return 1 if stale else 0
    args.assignments.mkdir(parents=True, exist_ok=True)
    for path in stale:
        path.write_text(plan[path])
        print(f"wrote {path}")
    if not stale:
        print(f"{args.assignments} is up to date")
    return 0
