"""``softlookup release nbgrader COURSE``: an nbgrader course made from the same solutions.

COURSE gets ``nbgrader_config.py`` and ``source/<assignment>/<module>.ipynb``,
one notebook per exercise, ready for ``nbgrader generate_assignment``,
``autograde``, ``generate_feedback`` and ``export`` run inside COURSE. The
notebooks are the learner's notebooks with nbgrader's cell metadata: prose
and the kit's cells read-only, one solution cell per function (the solution
markers are nbgrader's own), and one autograded test cell per check that is
worth points, carrying the registry's points. Hidden checks sit inside
``### BEGIN HIDDEN TESTS`` blocks. The first test cell grades the whole
exercise once through the engine; each cell then reports its own check
(:func:`grader.exercises.kernel.graded`), so nbgrader's points equal ``softlookup
check``'s, partial credit included.

All exercises form one assignment, so ``from softmax import softmax`` in
``lookup.ipynb`` reads the student's own ``softmax.ipynb``, as the kit's
notebooks do.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from grader.engine import registry
from grader.cli import Parser
from grader.releases.exercise_notebooks import CHECK_INTRO, Cell, layout, notebook
from grader.engine.notebooks import KIT_TAG
from grader.commands.release import MarkerError

ASSIGNMENT = "softlookup"
START_UP = 60  # seconds for a test cell to start the grader (the fork server may be importing torch)

CONFIG = '''"""nbgrader settings for a course made by `softlookup release nbgrader` (run nbgrader in this folder)."""

from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import ClearHiddenTests, GetGrades

c = get_config()  # noqa: F821 (nbgrader provides it)
c.CourseDirectory.course_id = "softlookup"

# A notebook's first test cell grades the whole exercise: room for each of its functions to use up
# its own time limit ({limits}), plus start-up. A cell that runs longer is interrupted and the
# notebook's later cells are graded all the same.
c.Execute.timeout = {timeout}

# The grader's fork server and multiprocessing's resource tracker outlive each notebook's kernel, and
# ipykernel waits for them at shutdown; they end by themselves once the kernel is gone, so stop it soon.
c.KernelManager.shutdown_wait_time = 1.0

# Feedback goes to students: keep the hidden checks' code out of it.
c.GenerateFeedback.preprocessors = [GetGrades, ClearHiddenTests, CSSHTMLHeaderPreprocessor]
'''


def cell_timeout() -> int:
    """Seconds for one test cell: every function of the slowest exercise timing out, plus start-up."""
    return int(max(e.time_limit * len(e.functions) for e in registry.EXERCISES)) + START_UP


def checks(exercise: registry.Exercise) -> list[tuple[str, bool, str]]:
    """``(check, hidden, title)`` for every check of ``exercise`` worth points, in the registry's order."""
    found = {}
    for path in exercise.check_files(hidden=True):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name in exercise.points:
                title = (ast.get_docstring(node) or node.name).splitlines()[0].rstrip(".")
                found[node.name] = (node.name, path.parent.name == "hidden", title)
    return [found[name] for name, points in exercise.points.items() if points > 0]


def _test_cell(exercise: registry.Exercise, check: str, hidden: bool, title: str) -> Cell:
    call = f'graded("{exercise.module}", "{check}")'
    points = exercise.points[check]
    comment = f"# {title} ({points:g} point{'s' if points != 1 else ''}{', hidden' if hidden else ''})"
    body = f"### BEGIN HIDDEN TESTS\n{call}\n### END HIDDEN TESTS" if hidden else call
    return Cell("test", f"check-{check}", f"{comment}\n{body}", [KIT_TAG])


def _nbgrader(cell: Cell, exercise: registry.Exercise) -> dict:
    """nbgrader's metadata for a cell of the layout."""
    kind = {"text": "locked", "kit": "locked", "solution": "solution", "test": "test"}.get(cell.role)
    if kind is None:  # the imports: the student's to change
        return {}
    check = cell.name.removeprefix("check-")
    return {"nbgrader": {
        "grade": kind == "test", "solution": kind == "solution", "locked": kind != "solution", "task": False,
        "grade_id": cell.name, "schema_version": 3, **({"points": exercise.points[check]} if kind == "test" else {}),
    }}


def source_notebook(exercise: registry.Exercise, source: str) -> str:
    """``source/<assignment>/<module>.ipynb``: the reference solutions, nbgrader's metadata, the test cells."""
    import nbformat

    cells = layout(exercise, source, checker="graded") + [
        Cell("text", "check-intro", CHECK_INTRO + " Each cell below is one check, worth the points it says; "
             "Validate runs them all.")]
    cells += [_test_cell(exercise, *check) for check in checks(exercise)]
    metadata = {cell.name: _nbgrader(cell, exercise) for cell in cells}
    return nbformat.writes(notebook(cells, metadata)) + "\n"


def write_course(course: Path, solutions: Path, exercises: list[registry.Exercise]) -> list[Path]:
    folder = course / "source" / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    limits = ", ".join(f"{e.module} {e.time_limit:g} s" for e in registry.EXERCISES)
    written = [course / "nbgrader_config.py"]
    written[0].write_text(CONFIG.format(timeout=cell_timeout(), limits=limits))
    for exercise in exercises:
        path = folder / f"{exercise.module}.ipynb"
        path.write_text(source_notebook(exercise, (solutions / f"{exercise.module}.py").read_text()))
        written.append(path)
    return written


def main(argv=None) -> int:
    parser = Parser(prog="softlookup release nbgrader", description=__doc__.splitlines()[0])
    parser.add_argument("course", type=Path, help="the course folder to write (created if missing)")
    parser.add_argument("--solutions", type=Path, default=registry.KIT_ROOT / "solutions")
    parser.add_argument("--exercise", action="append", choices=list(registry.BY_MODULE), metavar="NAME",
                        help=f"only this exercise (repeatable): {', '.join(registry.BY_MODULE)}")
    args = parser.parse_args(argv)
    if not args.solutions.is_dir():
        parser.error(f"{args.solutions} is not a folder of solutions (give --solutions DIR)")
    exercises = [registry.exercise(name) for name in args.exercise] if args.exercise else list(registry.EXERCISES)
    try:
        written = write_course(args.course, args.solutions, exercises)
    except (MarkerError, FileNotFoundError) as error:
        print(f"softlookup release nbgrader: {error}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path}")
    print(f"next, in {args.course}: nbgrader generate_assignment {ASSIGNMENT}")
    return 0
