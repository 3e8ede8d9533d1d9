"""Exercise notebooks: made from solutions/, graded as modules, and run headless in a real kernel."""

import ast
import json
import linecache
import re
import shutil
import sys
import time
import tracemalloc

import nbformat
import pytest
from nbclient import NotebookClient

from helpers import ASSIGNMENTS, SOLUTIONS, exercise_score, full_marks_problems, run, solved_folder
from grader.engine import registry
from grader.engine.submissions import notebooks
from grader.lesson import kernel, widgets
from grader.releases import exercise_notebooks
from helpers import softlookup


def stub_folder(folder):
    folder.mkdir(exist_ok=True)
    for notebook in ASSIGNMENTS.glob("*.ipynb"):
        shutil.copy(notebook, folder)
    return folder


def functions_of(source):
    return {node.name: ast.unparse(node) for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)}


# -- made from the one source ----------------------------------------------------------


@pytest.mark.parametrize("exercise", registry.EXERCISES, ids=lambda e: e.module)
def test_notebook_holds_the_same_stubs_as_the_module(exercise):
    cells = json.loads((ASSIGNMENTS / f"{exercise.module}.ipynb").read_text())["cells"]
    module = (ASSIGNMENTS / f"{exercise.module}.py").read_text()
    assert cells[0]["cell_type"] == "markdown" and "".join(cells[0]["source"]).startswith("# Exercise")
    one_per_function = [c for c in cells if c["id"] in exercise.functions]
    assert [c["id"] for c in one_per_function] == list(exercise.functions)
    for cell in one_per_function:
        assert "".join(cell["source"]) in module  # the same text, markers and docstring included
    assert functions_of(notebooks.module_source(ASSIGNMENTS / f"{exercise.module}.ipynb")) == functions_of(module)


def test_split_keeps_comments_decorators_and_trailing_markers():
    source = ('"""Doc."""\n\nimport numpy as np\n# a constant\nN = 3\n\n\n# about f\n@staticmethod\ndef f():\n'
              '    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n\n\nX = 2\n')
    docstring, pieces = exercise_notebooks.split(source)
    assert docstring == "Doc."
    assert [name for name, _ in pieces] == ["setup", "f", "setup-2"]
    assert pieces[0][1] == "import numpy as np\n# a constant\nN = 3\n"
    assert pieces[1][1].startswith("# about f\n@staticmethod") and pieces[1][1].endswith("### END SOLUTION\n")


def test_lookup_says_where_softmax_comes_from():
    text = (ASSIGNMENTS / "lookup.ipynb").read_text()
    assert "your `softmax` from `softmax.ipynb`" in text
    assert exercise_notebooks.exercises_used((SOLUTIONS / "lookup.py").read_text()) == ["softmax"]


# -- a notebook becomes a module -------------------------------------------------------------


def notebook_file(path, *cells):
    """A notebook of code cells; a cell given as (source, tag) carries that tag."""
    made = [nbformat.v4.new_code_cell(c[0], metadata={"tags": [c[1]]}) if isinstance(c, tuple)
            else nbformat.v4.new_code_cell(c) for c in cells]
    nbformat.write(nbformat.v4.new_notebook(cells=made), path)
    return path


def test_module_source_skips_kit_cells_and_ipython_lines(tmp_path):
    path = notebook_file(tmp_path / "softmax.ipynb", "import numpy as np", ("check_here('softmax')", notebooks.KIT_TAG),
                         "%matplotlib inline\n!pip install x\ndef softmax(x, axis=-1):\n    return x",
                         "%%time\nwhile True: pass", "text = '%d items'")
    source = notebooks.module_source(path)
    namespace = {}
    exec(compile(source, "softmax.py", "exec"), namespace)  # plain Python, and it does not loop
    assert "check_here" not in source and "text = '%d items'" in source  # valid Python is never touched
    assert namespace["softmax"](5) == 5


def test_a_broken_notebook_is_one_line_naming_it(tmp_path):
    (tmp_path / "lookup.ipynb").write_text("{ not json")
    done = softlookup("check", tmp_path, "--exercise", "lookup")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "lookup.ipynb is not a notebook" in done.stderr


def raw_notebook(path, *sources):
    """A notebook of code cells written with json itself, so that it can hold what nbformat would refuse."""
    cells = [{"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None}
             for source in sources]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def written(path, text):
    path.write_text(text)
    return path


CRAFTED = {  # what a hostile notebook holds -> what the one-line reason says
    "a 2 MB parser bomb": (lambda path: raw_notebook(path, "x = [" + "a," * 1_000_000 + "]\n%time 1\n"),
                           "more code than the grader reads"),
    "a 2 MB flood of JSON items": (lambda path: written(path,
        '{"cells": [], "metadata": {"m": [' + ",".join(["{}"] * 700_000) + "]}}"), "JSON items"),
    "JSON nested 1,000 deep": (lambda path: written(path, '{"cells": [], "x": ' + "[" * 1000 + "]" * 1000 + "}"),
                               "nested more than"),
    "a lone surrogate in a cell": (lambda path: raw_notebook(path, "s = '\ud800'\ndef softmax(x, axis=-1):\n    return x"),
                                   "lone surrogate"),
    "too many cells": (lambda path: raw_notebook(path, *["x = 1"] * (notebooks.MAX_CELLS + 1)), "cells"),
    "too large": (lambda path: written(path, " " * (notebooks.MAX_NOTEBOOK_BYTES + 1)), "larger than"),
}


@pytest.mark.parametrize("attack", CRAFTED)
def test_a_crafted_notebook_is_one_line_and_costs_the_judge_little(tmp_path, attack):
    """Each becomes a one-line reason within a bounded amount of the judge's memory and time.

    Before these bounds the 2 MB parser bomb took the judge 2.8 GB and 33 s.
    """
    make, reason = CRAFTED[attack]
    path = make(tmp_path / "softmax.ipynb")
    tracemalloc.start()
    started = time.process_time()  # CPU time, which a busy machine does not stretch
    try:
        with pytest.raises(notebooks.NotebookError) as error:
            notebooks.module_source(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert reason in str(error.value) and "\n" not in str(error.value), str(error.value)
    assert str(error.value).startswith("softmax.ipynb")
    assert peak < 64 * 2**20, f"{peak / 2**20:.0f} MB"
    assert time.process_time() - started < 10
    notebooks.write_modules({"softmax": path}, tmp_path, keep_going=True)  # a class goes on: a module that says why
    assert "raise SyntaxError(" in (tmp_path / "softmax.py").read_text(encoding="utf-8")


@pytest.mark.parametrize("cell", ["x = " + "9" * 5000 + "\n%time x", "x = " + "(" * 1000 + ")" * 1000 + "\n%time x",
                                  "x = " + "-" * 19_000 + "1\n%time x", "y = [" + "a," * 9_000 + "]\n%time 1"])
def test_cells_the_parser_cannot_take_are_graded_not_raised(tmp_path, cell):
    """A 5,000-digit literal, deep nesting, a long chain of operators: the judge's parse fails quietly and bounded."""
    path = raw_notebook(tmp_path / "softmax.ipynb", cell)
    tracemalloc.start()
    try:
        source = notebooks.module_source(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "pass  # %time" in source
    assert peak < 64 * 2**20, f"{peak / 2**20:.0f} MB"


def test_a_crafted_notebook_costs_its_exercise_only(tmp_path):
    """Graded as a class grades it: the notebook's exercise is invalid with one line, the others are graded."""
    folder = tmp_path / "student"
    folder.mkdir()
    raw_notebook(folder / "lookup.ipynb", "s = '\ud800'")
    raw_notebook(folder / "attention.ipynb", "x = " + "9" * 5000)
    shutil.copy(SOLUTIONS / "softmax.py", folder)
    with notebooks.module_folder(folder, keep_going=True) as modules:
        result = run(modules, ["softmax", "lookup", "attention"])
    messages = {e.name: e.checks[0].message for e in result.exercises}
    assert "lone surrogate" in messages["lookup"] and "\n" not in messages["lookup"]
    assert "4300 digits" in messages["attention"] and "\n" not in messages["attention"]
    assert exercise_score(result, "softmax")[0] == registry.exercise("softmax").max_points
    assert result.status == "invalid"


def test_check_grades_a_folder_of_notebooks(tmp_path):
    done = softlookup("check", solved_folder(tmp_path / "done"), "--exercise", "softmax", "--exercise", "lookup")
    assert done.returncode == 0, done.stdout + done.stderr
    points = sum(registry.exercise(name).max_points for name in ("softmax", "lookup"))
    assert f"Total: {points:g}/{points:g}" in done.stdout


def test_modules_win_over_notebooks_unless_asked_or_untouched(tmp_path):
    folder = solved_folder(tmp_path / "both")
    shutil.copy(ASSIGNMENTS / "softmax.py", folder)  # an untouched stub module beside a solved notebook
    shutil.copy(SOLUTIONS / "lookup.py", folder)  # a written module beside a solved notebook
    started = (ASSIGNMENTS / "attention.py").read_text().replace(
        'raise NotImplementedError("causal_mask(): replace this line with your code")', "return None")
    (folder / "attention.py").write_text(started)  # one function begun: the module is the learner's work
    chosen = notebooks.chosen_sources(folder, prefer_notebooks=False)
    assert [chosen[name].suffix for name in ("softmax", "lookup", "attention")] == [".ipynb", ".py", ".py"]
    assert notebooks.chosen_sources(folder, prefer_notebooks=True)["lookup"].suffix == ".ipynb"
    with notebooks.module_folder(folder) as modules:
        assert not full_marks_problems(run(modules, ["softmax"]), ["softmax"])



def test_a_link_to_the_reference_beside_a_notebook_earns_nothing(tmp_path):
    """Notebooks are converted by the judge itself: it must not read the reference through a learner's link."""
    folder = tmp_path / "linked"
    folder.mkdir()
    shutil.copy(ASSIGNMENTS / "attention.ipynb", folder)  # any notebook, so the folder is converted
    (folder / "softmax.py").symlink_to(SOLUTIONS / "softmax.py")
    with notebooks.module_folder(folder) as modules:
        result = run(modules, ["softmax"])
    assert result.score == 0 and "is a link to" in result.exercises[0].checks[0].message

# -- the kernel's definitions become a module ---------------------------------------------------


def kernel_namespace(cells):
    """A namespace filled the way IPython fills one: each cell compiled from a file linecache knows."""
    namespace = {"__name__": "__main__"}
    for number, code in enumerate(cells):
        filename = f"<cell-{number}-{time.monotonic_ns()}>"
        linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
        exec(compile(code, filename, "exec"), namespace)
    return namespace


def test_kernel_module_rebuilds_what_the_kernel_defined():
    namespace = kernel_namespace([
        "import numpy as np\nfrom math import sqrt as root\nfrom softlookup import check_here\nSCALE = 2.0",
        "def helper(x):\n    return x * SCALE",
        "def softmax(x, axis=-1):\n    e = np.exp(x - np.max(x, axis=axis, keepdims=True))\n    return e / e.sum(axis=axis, keepdims=True)",
        "weights = np.ones(3)\nresult = helper(3)",  # an array: not copied; a number: copied
    ])
    source = kernel.kernel_module(namespace)
    assert "import numpy as np" in source and "from math import sqrt as root" in source
    assert "check_here" not in source and "SCALE = 2.0" in source and "result = 6.0" in source
    assert "weights" not in source
    rebuilt = {}
    exec(compile(source, "softmax.py", "exec"), rebuilt)
    assert rebuilt["helper"](1) == 2.0 and rebuilt["softmax"]([0.0, 0.0]).tolist() == [0.5, 0.5]


def test_check_here_grades_nothing_when_imported():
    """A learner's own `check_here(...)` cell must not start a grading inside a grading worker."""
    namespace = {"__name__": "lookup", "check_here": kernel.check_here}
    exec("report = check_here('lookup')", namespace)
    assert namespace["report"] is None


def test_import_notebooks_reads_the_saved_notebook(tmp_path):
    path = notebook_file(tmp_path / "softmax.ipynb", "def softmax(x, axis=-1):\n    return 'first'")
    finders = list(sys.meta_path)
    try:
        kernel.import_notebooks(tmp_path)
        import softmax

        assert softmax.softmax(0) == "first" and softmax.__file__ == str(path)
        notebook_file(path, "def softmax(x, axis=-1):\n    return 'saved again'")
        kernel.import_notebooks(tmp_path)
        import softmax

        assert softmax.softmax(0) == "saved again"
    finally:
        sys.meta_path[:] = finders
        sys.modules.pop("softmax", None)


# -- headless, in a real kernel ---------------------------------------------------------------


def execute(path):
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=300, shutdown_kernel="immediate",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return notebook


def outputs(notebook, cell_id):
    cell = next(c for c in notebook.cells if c.get("id") == cell_id)
    return cell.outputs


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """Every notebook run top to bottom, solved and as released; with seconds per notebook."""
    ran = {}
    for state, make in (("solved", solved_folder), ("stub", stub_folder)):
        folder = make(tmp_path_factory.mktemp(state))
        for exercise in registry.EXERCISES:
            started = time.monotonic()
            ran[state, exercise.module] = execute(folder / f"{exercise.module}.ipynb"), time.monotonic() - started
    for (state, module), (_, seconds) in ran.items():
        print(f"{state} {module}.ipynb ran in {seconds:.1f} s")
    return ran


@pytest.mark.slow
@pytest.mark.parametrize("state", ["solved", "stub"])
@pytest.mark.parametrize("exercise", registry.EXERCISES, ids=lambda e: e.module)
def test_notebook_runs_headless_and_checks_itself(executed, exercise, state):
    notebook, _ = executed[state, exercise.module]
    errors = [o for c in notebook.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors, errors[0].get("evalue")
    report = outputs(notebook, "check")[-1]["data"]
    points = f"{exercise.max_points:g}/{exercise.max_points:g} points, done" if state == "solved" \
        else f"0/{exercise.max_points:g} points, not started"
    assert points in report["text/plain"]
    assert re.search(r"<b>\d+/\d+</b> points", report["text/html"])
    if exercise.module in widgets.FOR_EXERCISE:
        widget = outputs(notebook, "widget")
        assert widget and "application/vnd.jupyter.widget-view+json" in widget[-1]["data"]
