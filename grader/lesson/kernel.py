"""Grading from inside a notebook: the code the running kernel defined, through the usual engine.

``check_here("lookup")`` writes what this kernel has defined (the learner's
functions, their imports and plain constants) as ``lookup.py`` in a temporary
folder, beside the other exercises this folder holds (``softmax.ipynb`` made
into ``softmax.py``), and calls :func:`grader.engine.classes.runner.run_checks` on it: the same
checks, workers and limits as ``softlookup check``, and the same table, as
HTML. ``graded(...)`` is the nbgrader test cells' version: one engine run per
version of the code, then one check's verdict per cell.

Both do nothing when called from a module that is being imported (a worker
importing a learner's notebook that calls them): they grade only the
notebook that runs them.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.abc
import importlib.util
import inspect
import os
import sys
import tempfile
import textwrap
import types
from pathlib import Path

from grader.engine import registry
from grader.engine.options import Options
from grader.engine.results import SubmissionResult
from grader.engine.submissions import notebooks
from grader.reports.html_table import html

KIT_MODULES = ("grader", "softlookup")
IPYTHON_NAMES = {"In", "Out", "get_ipython", "exit", "quit", "open"}


# -- what the kernel defined, as a module ------------------------------------------------


def _from_kit(name: str) -> bool:
    return name.split(".")[0] in KIT_MODULES


def _literal(value) -> bool:
    try:
        text = repr(value)
        return len(text) < 10_000 and ast.literal_eval(text) == value
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


def _import_line(name: str, value) -> str | None:
    """``import x as name`` or ``from m import x as name`` that binds ``value`` again, if there is one."""
    if isinstance(value, types.ModuleType):
        module = value.__name__
        return None if _from_kit(module) else f"import {module}" + ("" if name == module else f" as {name}")
    module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "." in qualname or _from_kit(module):
        return None
    if getattr(sys.modules.get(module), qualname, None) is not value:
        return None
    return f"from {module} import {qualname}" + ("" if name == qualname else f" as {name}")


def kernel_module(namespace: dict) -> str:
    """A module that defines again what ``namespace`` (a kernel's globals) holds.

    Functions and classes defined in the kernel come with their source (IPython
    keeps every cell's text); modules and imported names become import lines;
    plain constants (numbers, strings, lists of them) become assignments. The
    kit's own tools are left out.
    """
    imports, constants, definitions = [], [], []
    for name, value in list(namespace.items()):
        if name.startswith("_") or name in IPYTHON_NAMES:
            continue
        defined_here = (isinstance(value, types.FunctionType) and value.__globals__ is namespace) or (
            isinstance(value, type) and value.__module__ == namespace.get("__name__"))
        if defined_here:
            try:
                definitions.append(textwrap.dedent(inspect.getsource(value)).rstrip())
            except (OSError, TypeError):  # defined by exec() or from a lost cell: nothing to copy
                pass
        elif (line := _import_line(name, value)) is not None:
            imports.append(line)
        elif not callable(value) and _literal(value):
            constants.append(f"{name} = {value!r}")
    header = "# Made by softlookup from the definitions of a running notebook kernel.\n"
    return header + "\n\n\n".join(part for part in ("\n".join(imports), "\n".join(constants), *definitions) if part) + "\n"


def _folder_for(exercise: registry.Exercise, namespace: dict, folder: Path, target: Path) -> None:
    """Fill ``target`` with the kernel's version of ``exercise`` and the other exercises found in ``folder``."""
    others = {module: source for module, source in notebooks.chosen_sources(folder, prefer_notebooks=True).items()
              if module != exercise.module}
    notebooks.write_modules(others, target)
    (target / f"{exercise.module}.py").write_text(kernel_module(namespace), encoding="utf-8")


def exercises_folder() -> Path:
    """Where this notebook's sibling exercises (``softmax.ipynb``...) are: the kernel's folder, except
    under nbgrader's autograde, which runs each notebook alone in ``autograded/<student>/<assignment>``
    before the others are copied there: then the student's ``submitted/<student>/<assignment>``."""
    here = Path.cwd()
    if os.environ.get("NBGRADER_EXECUTION") == "autograde" and here.parent.parent.name == "autograded":
        submitted = here.parents[2] / "submitted" / here.parent.name / here.name
        if submitted.is_dir():
            return submitted
    return here


def _run_by_a_notebook(namespace: dict) -> bool:
    return namespace.get("__name__") == "__main__"


def _grade(name: str, namespace: dict, hidden: bool = True) -> SubmissionResult:
    from grader.engine.classes.runner import run_checks  # pytest, imported at the first check, not with the notebook

    exercise = registry.exercise(name)
    with tempfile.TemporaryDirectory(prefix="softlookup-kernel-") as folder:
        _folder_for(exercise, namespace, exercises_folder(), Path(folder))
        result = run_checks(Path(folder), [exercise], Options(public=not hidden))
    result.submission = f"this notebook ({exercise.module})"
    return result


class Report:
    """A result as a notebook shows it: the HTML table, or one line as text."""

    def __init__(self, result: SubmissionResult | None, note: str = ""):
        self.result, self.note = result, note

    def _repr_html_(self):
        return f"<p>{self.note}</p>" if self.result is None else html(self.result)

    def __repr__(self):
        if self.result is None:
            return self.note
        status = self.result.exercises[0].status if self.result.exercises else "no checks ran"
        line = f"{self.result.submission}: {self.result.score:g}/{self.result.max_score:g} points, {status}"
        if self.result.unprotected:
            line += f"\nLearner code ran without: {'; '.join(self.result.unprotected)}."
        return line


def check_here(exercise: str, hidden: bool = True) -> Report | None:
    """Grade the functions this notebook's kernel has defined for ``exercise``; show the table.

    Run the cells that define your functions first: what counts is what the
    kernel has run, not what the notebook file says.
    """
    namespace = inspect.currentframe().f_back.f_globals
    if not _run_by_a_notebook(namespace):
        return None
    functions = registry.exercise(exercise).functions
    if not any(callable(namespace.get(name)) for name in functions):
        return Report(None, f"This kernel has not defined any of {', '.join(functions)} yet: run their cells first.")
    return Report(_grade(exercise, namespace, hidden))


# -- nbgrader test cells ---------------------------------------------------------------

_graded: dict[str, SubmissionResult] = {}


def graded(exercise: str, check: str):
    """One nbgrader test cell: the points this notebook's code earns on one check.

    The first cell of a notebook grades the whole exercise (all its checks, one
    engine run) and later cells reuse that result while the code is unchanged.
    nbgrader reads the cell's outcome: nothing shown is full marks, a number
    is partial credit (some cases of a parametrised check passed), and text on
    stderr is 0, with the reason in it.
    """
    namespace = inspect.currentframe().f_back.f_globals
    if not _run_by_a_notebook(namespace):
        return None
    key = exercise + hashlib.sha256(kernel_module(namespace).encode()).hexdigest()
    if key not in _graded:
        _graded[key] = _grade(exercise, namespace)
    cases = [c for e in _graded[key].exercises for c in e.checks if c.check == check]
    problems = [c for c in cases if not c.passed]
    for problem in problems:
        reason = "could not run" if problem.outcome == "skipped" else "failed"
        print(f"{check}{f' [{problem.case}]' if problem.case else ''} {reason}: {problem.message}",
              file=sys.stderr if len(problems) == len(cases) else sys.stdout)
    if not cases:
        print(f"{check} did not run: it is not a check of {exercise}", file=sys.stderr)
    elif problems and len(problems) < len(cases):
        return round(sum(c.points for c in cases), 6)
    return None


# -- `from softmax import softmax` in a notebook reads softmax.ipynb ---------------------------


class _NotebookFinder(importlib.abc.MetaPathFinder):
    """Finds an exercise's module as its notebook in one folder, before any ``.py`` file of that name."""

    def __init__(self, folder: Path):
        self.folder = folder

    def find_spec(self, name, path=None, target=None):
        notebook = self.folder / f"{name}.ipynb"
        if path is not None or name not in registry.BY_MODULE or not notebook.is_file():
            return None
        return importlib.util.spec_from_loader(name, _NotebookLoader(notebook), origin=str(notebook))


class _NotebookLoader(importlib.abc.Loader):
    def __init__(self, notebook: Path):
        self.notebook = notebook

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.__file__ = str(self.notebook)
        exec(compile(notebooks.module_source(self.notebook), str(self.notebook), "exec"), module.__dict__)


def import_notebooks(folder: str | Path | None = None) -> None:
    """Let ``import softmax`` load the code cells of ``softmax.ipynb``, as last saved.

    The notebook is looked for in ``folder``, by default this notebook's own
    (:func:`exercises_folder`). Run again (rerun the cell) to pick up a
    notebook saved since: modules loaded from notebooks are forgotten each time.
    """
    folder = Path(folder).resolve() if folder else exercises_folder()
    sys.meta_path[:] = [finder for finder in sys.meta_path if not isinstance(finder, _NotebookFinder)]
    sys.meta_path.insert(0, _NotebookFinder(folder))
    for name, module in list(sys.modules.items()):
        if name in registry.BY_MODULE and str(getattr(module, "__file__", "")).endswith(".ipynb"):
            del sys.modules[name]
