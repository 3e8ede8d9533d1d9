"""``softlookup release nbgrader COURSE``: an nbgrader course made from the same solutions.

COURSE gets ``nbgrader_config.py`` and ``source/<assignment>/<module>.ipynb``,
one notebook per exercise, ready for ``nbgrader generate_assignment``,
``autograde``, ``generate_feedback`` and ``export`` run inside COURSE. The
notebooks are the learner's notebooks with nbgrader's cell metadata: prose
and the kit's cells read-only, one solution cell per function (the solution
markers are nbgrader's own), and one autograded test cell per check that is
worth points, carrying the registry's points. Hidden checks sit inside
``### BEGIN HIDDEN TESTS`` blocks. In the learner's kernel (JupyterLab,
``nbgrader validate``) the first test cell grades the whole exercise once
through the engine and each cell reports its own check
(:func:`grader.lesson.kernel.graded`). ``nbgrader autograde`` runs no cell:
the course's configuration replaces nbgrader's ``Execute`` with
:class:`grader.releases.nbgrader_step.GradeInConfinement`, which grades the
submitted notebooks as ``softlookup grade`` does and writes each test cell's
verdict. Either way nbgrader's points equal ``softlookup check``'s, partial
credit included.

All exercises form one assignment, so ``from softmax import softmax`` in
``lookup.ipynb`` reads the student's own ``softmax.ipynb``, as the kit's
notebooks do.
"""

from __future__ import annotations

import ast
from pathlib import Path

from grader.engine import registry
from grader.engine.submissions.notebooks import KIT_TAG
from grader.releases import distribution, overwrite
from grader.releases.exercise_notebooks import CHECK_INTRO, Cell, layout, notebook
from grader.releases.stubs import MarkerError
from grader.usage import Parser, UsageError, optional

ASSIGNMENT = "softlookup"

CONFIG = '''"""nbgrader settings for a course made by `softlookup release nbgrader` (run nbgrader in this folder)."""

from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, ClearHiddenTests, ClearOutput, GetGrades,
                                    IgnorePattern, LimitOutput, OverwriteCells, OverwriteKernelspec, SaveAutoGrades)

from grader.releases.nbgrader_step import DropUnsoundMetadata, GradeInConfinement

c = get_config()  # noqa: F821 (nbgrader provides it)
c.CourseDirectory.course_id = "softlookup"

# Autograde runs no cell of a student's notebook: nbgrader's Execute would run the notebook in the kernel
# of its own test cells, where any cell can rebind what a test cell calls. GradeInConfinement grades the
# submitted notebooks with softlookup's engine instead (student code only in confined workers, each call
# with its own time limit) and writes every test cell's verdict as its output. The rest are nbgrader's
# default steps, in their order, which matters: the verdicts must be in the cells before LimitOutput trims
# outputs and SaveAutoGrades reads them into the gradebook, and AssignLatePenalties needs those scores.
c.Autograde.autograde_preprocessors = [
    GradeInConfinement, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades,
    AssignLatePenalties, CheckCellMetadata,
]
# Its limits are softlookup grade's options (softlookup grade --help); unset, the kit's defaults. For example:
# c.GradeInConfinement.time_limit = 5.0          # CPU seconds per call into student code (GPT-2's: 30)
# c.GradeInConfinement.import_time_limit = 30.0  # CPU seconds to import a student's module, once
# Before that, nbgrader sanitizes each submitted notebook. Its DeduplicateIds leaves a copied cell's metadata
# empty, which its schema check then takes for an outdated notebook and stops autograde for the whole class.
# DropUnsoundMetadata, first, takes out whole the metadata of a repeated grade_id (the last cell keeps it, as
# nbgrader decides) and any metadata nbgrader refuses, naming each cell in the log and the student's feedback;
# then nbgrader's own steps, in their order.
c.Autograde.sanitize_preprocessors = [
    DropUnsoundMetadata, ClearOutput, OverwriteKernelspec, OverwriteCells, CheckCellMetadata,
]

# Feedback goes to students: keep the hidden checks' code out of it (their verdicts are already redacted).
c.GenerateFeedback.preprocessors = [GetGrades, ClearHiddenTests, CSSHTMLHeaderPreprocessor]
'''


def checks(exercise: registry.Exercise) -> list[tuple[str, bool, str]]:
    """``(check, hidden, title)`` for every check of ``exercise`` worth points, in the registry's order."""
    found = {}
    for path in exercise.check_files(hidden=True):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name in exercise.points:
                title = registry.check_title(ast.get_docstring(node) or node.name)
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


def course_files(course: Path, solutions: Path, exercises: list[registry.Exercise]) -> dict[Path, str]:
    """Every file of the course and its text: the configuration, and a source notebook per exercise."""
    folder = course / "source" / ASSIGNMENT
    files = {course / "nbgrader_config.py": CONFIG}
    for exercise in exercises:
        files[folder / f"{exercise.module}.ipynb"] = source_notebook(
            exercise, (solutions / f"{exercise.module}.py").read_text())
    return files


def write_course(course: Path, solutions: Path, exercises: list[registry.Exercise]) -> list[Path]:
    files = course_files(course, solutions, exercises)
    (course / "source" / ASSIGNMENT).mkdir(parents=True, exist_ok=True)
    for path, text in files.items():
        path.write_text(text)
    return list(files)


def main(argv=None) -> int:
    parser = Parser(prog="softlookup release nbgrader", description=__doc__.splitlines()[0])
    parser.add_argument("course", type=Path, help="the course folder to write (created if missing)")
    parser.add_argument("--solutions", type=Path, default=registry.SOLUTIONS_DIR, metavar="DIR",
                        help=distribution.SOLUTIONS_HELP)
    parser.add_argument("--exercise", action="append", choices=list(registry.BY_MODULE), metavar="NAME",
                        help=f"only this exercise (repeatable): {', '.join(registry.BY_MODULE)}")
    parser.add_argument("--force", action="store_true",
                        help="replace the configuration and source notebooks of a course already in COURSE, "
                             "after copying those that differ into a dated folder beside it")
    args = parser.parse_args(argv)
    optional("nbgrader")  # before writing a course that nbgrader alone can take further
    if not args.solutions.is_dir():
        parser.error(f"{args.solutions} is not a folder of solutions (give --solutions DIR)")
    exercises = [registry.exercise(name) for name in args.exercise] if args.exercise else list(registry.EXERCISES)
    try:
        files = course_files(args.course, args.solutions, exercises)
        kept = overwrite.guard(files, args.course, args.force, "softlookup release nbgrader")  # the instructor's edits
        written = write_course(args.course, args.solutions, exercises)
    except (MarkerError, FileNotFoundError) as error:
        raise UsageError(str(error)) from None
    if kept:
        print(f"copied what was there before into {kept}")
    for path in written:
        print(f"wrote {path}")
    print(f"next, in {args.course}: nbgrader generate_assignment {ASSIGNMENT}")
    return 0
