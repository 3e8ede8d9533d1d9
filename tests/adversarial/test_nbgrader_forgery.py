"""nbgrader that cannot be fooled: a notebook that forges its grade, autograded end to end.

Two courses from the same `softlookup release nbgrader` (the three numpy
exercises): the kit's, whose autograde runs :class:`GradeInConfinement` in
place of nbgrader's Execute, and "plain", the same course with nbgrader's
default steps (the notebook runs in its test cells' kernel, as every course
did before). Each grades two students in one run: an honest one (the
reference solutions) and a forger, who writes softmax, `exact_lookup` and
`causal_mask` honestly and forges the rest of lookup and attention, in its
own cells:

* rebinding what the test cells call (``graded``), in the notebook and in the
  kit's modules, and replacing ``AssertionError``;
* reading the reference solutions and the hidden tests from the course's
  ``source/`` notebooks and running them;
* stalling the kernel (``while True: pass``) after all that;
* and, in the .ipynb itself, test cells that already hold "passed" outputs,
  points, and a test cell whose code is gone.

Under plain nbgrader the forgery earns every point. Under the kit's step the
forger earns what the same notebooks earn without the forgery (softmax's and
`exact_lookup`'s points; attention's stall costs that exercise, whose import
never ends), the honest student keeps full marks, and nbgrader's points are
those of `softlookup grade` and `softlookup check --notebooks` on the same
notebooks.
"""

import csv
import json
import re
import shutil
import time

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_output

from helpers import run
from grader.engine import registry
from grader.engine.results import HIDDEN_FEEDBACK
from grader.engine.results import CheckResult, SubmissionResult
from grader.engine.submissions import notebooks
from grader.releases.nbgrader_course import ASSIGNMENT
from grader.releases.nbgrader_step import outputs
from helpers import softlookup
from helpers import IMPORT_TIME_LIMIT, nbgrader, notebook_scores, released_course

pytestmark = pytest.mark.slow  # a whole road end to end (tests/pytest.ini)

EXERCISES = ["softmax", "lookup", "attention"]
HONEST = {"lookup": "exact_lookup", "attention": "causal_mask"}  # the one function the forger writes in each
STALL_TIMEOUT = 20  # seconds: plain nbgrader's per-cell limit here (the course used 180)
SECONDS: dict[tuple[str, str], float] = {}


def forgery(source_notebook) -> str:
    """A cell that rebinds what the test cells call and runs the reference read from the course's source."""
    return f'''\
import builtins
graded = lambda *args, **kwargs: None          # what each test cell calls, rebound in this namespace
builtins.AssertionError = type("AssertionError", (Exception,), {{}})  # no assert can fail any more
try:
    import softlookup, grader.lesson.kernel as kernel
    softlookup.graded = kernel.graded = graded  # ...and in the kit, for any cell that imports it again
    kernel.check_here = graded
except Exception:
    pass
try:                                           # the reference solutions and hidden tests, from source/
    import json
    with open({str(source_notebook)!r}) as handle:
        source = json.load(handle)
    for cell in source["cells"]:
        if cell["metadata"].get("nbgrader", {{}}).get("solution"):
            exec("".join(cell["source"]), globals())
except Exception:
    pass'''


def partly_done(notebook, source_notebook):
    """The released stubs of ``notebook`` with one function written (the reference's)."""
    name = HONEST[source_notebook.stem]
    reference = nbformat.read(source_notebook, as_version=4)
    cell = next(c for c in notebook.cells if c.get("id") == name)
    cell.source = next(c for c in reference.cells if c.get("id") == name).source
    return notebook


def forged(notebook, source_notebook, stall: bool):
    """``notebook``, partly done, with the forgery in its cells and "passed" already in its test cells."""
    notebook = partly_done(notebook, source_notebook)
    where = next(i for i, c in enumerate(notebook.cells) if c.get("id") == "kit") + 1
    cells = [new_code_cell(forgery(source_notebook))]
    if stall:
        cells.append(new_code_cell("while True:  # keep the kernel busy past any test cell's deadline\n    pass"))
    notebook.cells[where:where] = cells
    tests = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade")]
    for cell in tests:
        points = cell.metadata.nbgrader["points"]
        cell.outputs = [new_output("stream", name="stdout", text="passed\n"),
                        new_output("execute_result", data={"text/plain": repr(points)}, execution_count=1)]
        cell.execution_count = 1
    tests[-1].source = "pass"  # a test cell whose check is gone
    return notebook


def plain_config(text: str) -> str:
    """The course's configuration with nbgrader's own autograde steps: the notebook runs in a kernel."""
    step = re.compile(r"c\.Autograde\.autograde_preprocessors = \[.*?\]\n", re.S)
    assert step.search(text)
    return step.sub(f"c.Execute.timeout = {STALL_TIMEOUT}\nc.KernelManager.shutdown_wait_time = 1.0\n", text)


def make_course(folder, plain: bool):
    released_course(folder, *[arg for name in EXERCISES for arg in ("--exercise", name)])
    config = folder / "nbgrader_config.py"
    if plain:
        config.write_text(plain_config(config.read_text()))
    else:  # attention's stall ends at the import's limit: 5 s, not a grading's 30
        config.write_text(config.read_text() + f"c.GradeInConfinement.import_time_limit = {IMPORT_TIME_LIMIT}\n")
    source, released = folder / "source" / ASSIGNMENT, folder / "release" / ASSIGNMENT
    for student in ("honest", "forger"):
        submitted = folder / "submitted" / student / ASSIGNMENT
        submitted.mkdir(parents=True)
        for name in EXERCISES:
            reference = source / f"{name}.ipynb"
            notebook = nbformat.read(reference, as_version=4)  # the honest student hands in the reference
            if student == "forger" and name in HONEST:
                notebook = forged(nbformat.read(released / f"{name}.ipynb", as_version=4), reference,
                                  stall=name == "attention")
            nbformat.write(notebook, submitted / f"{name}.ipynb")
    for student in ("honest", "forger"):
        started = time.monotonic()
        nbgrader(folder, "autograde", ASSIGNMENT, "--student", student)
        SECONDS["plain" if plain else "kit", student] = time.monotonic() - started
    return folder


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    course = make_course(tmp_path_factory.mktemp("kit"), plain=False)
    nbgrader(course, "generate_feedback", ASSIGNMENT)
    return course


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    return make_course(tmp_path_factory.mktemp("plain"), plain=True)


def maximum(name):
    return registry.exercise(name).max_points


def test_the_forgery_works_under_plain_nbgrader(plain):
    scores = notebook_scores(plain, "forger")
    print("plain nbgrader:", scores, {k: round(v, 1) for k, v in SECONDS.items() if k[0] == "plain"})
    assert scores == {name: maximum(name) for name in EXERCISES}  # every point, written or not
    assert notebook_scores(plain, "honest") == scores


def test_the_kit_step_scores_the_forger_on_what_it_wrote(kit, tmp_path):
    scores = notebook_scores(kit, "forger")
    print("kit step:", scores, {k: round(v, 1) for k, v in SECONDS.items() if k[0] == "kit"})
    source, released = kit / "source" / ASSIGNMENT, kit / "release" / ASSIGNMENT
    shutil.copy(source / "softmax.ipynb", tmp_path)
    nbformat.write(partly_done(nbformat.read(released / "lookup.ipynb", as_version=4), source / "lookup.ipynb"),
                   tmp_path / "lookup.ipynb")  # what the forger wrote, without the forgery
    with notebooks.module_folder(tmp_path) as modules:
        honest_part = {e.name: e.score for e in run(modules, ["softmax", "lookup"]).exercises}
    assert 0 < honest_part["lookup"] < maximum("lookup")
    assert scores == {"softmax": maximum("softmax"), "lookup": honest_part["lookup"], "attention": 0}
    assert notebook_scores(kit, "honest") == {name: maximum(name) for name in EXERCISES}


def test_nbgrader_softlookup_grade_and_check_agree(kit, tmp_path):
    options = [arg for name in EXERCISES for arg in ("--exercise", name)] + ["--import-time-limit", IMPORT_TIME_LIMIT]
    done = softlookup("grade", kit / "submitted", "--out", tmp_path / "graded", *options)
    assert done.returncode in (0, 1), done.stderr
    with open(tmp_path / "graded" / "grades.csv") as handle:
        graded = {row["student"]: row for row in csv.DictReader(handle)}
    for student in ("honest", "forger"):
        scores = notebook_scores(kit, student)
        checked = softlookup("check", "--notebooks", kit / "submitted" / student / ASSIGNMENT, *options,
                             "--json", tmp_path / f"{student}.json")
        assert checked.returncode in (0, 1), checked.stderr
        assert json.loads((tmp_path / f"{student}.json").read_text())["score"] == pytest.approx(sum(scores.values()))
        assert {name: float(graded[student][name]) for name in EXERCISES} == pytest.approx(scores)


def test_nothing_the_forger_wrote_reaches_a_test_cell(kit):
    notebook = nbformat.read(kit / "autograded" / "forger" / ASSIGNMENT / "attention.ipynb", as_version=4)
    tests = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade")]
    for cell in tests:  # nbgrader put each test's code back; the verdict is the engine's
        assert f'graded("attention", "{cell.metadata.nbgrader.grade_id.removeprefix("check-")}")' in cell.source
        assert [o.output_type for o in cell.outputs] == ["error"]
        # The stall, as a public check words it or as a hidden check's redacted verdict does ("on inputs that
        # stay hidden"): each names the time limit and asks about a loop.
        assert "time limit" in cell.outputs[0].evalue and "loop that never ends" in cell.outputs[0].evalue
    assert not any(c.get("outputs") for c in notebook.cells if c not in tests)  # and no cell ran


def test_feedback_shows_verdicts_but_not_hidden_tests(kit):
    feedback = (kit / "feedback" / "forger" / ASSIGNMENT / "lookup.html").read_text()
    assert "BEGIN HIDDEN TESTS" not in feedback
    assert '<span class="s2">"test_soft_matches_reference"</span>' not in feedback  # the hidden test's code...
    assert "test_soft_matches_reference failed: not graded" in feedback  # ...gone, its verdict shown


# -- the step's outputs, read back by nbgrader's own determine_grade ----------------------------------


def _result(*cases) -> SubmissionResult:
    result = SubmissionResult("a student")
    for check, case, passed, points, hidden, message in cases:
        result.add(CheckResult("lookup", check, case, check, "passed" if passed else "failed", points, 1.0,
                               message, hidden), "lookup")
    return result


def _points(cell_outputs, max_points):
    from nbgrader.utils import determine_grade

    cell = nbformat.from_dict({"cell_type": "code", "source": "", "outputs": cell_outputs, "execution_count": None,
                               "metadata": {"nbgrader": {"grade": True, "solution": False, "points": max_points,
                                                         "grade_id": "x"}}})
    return determine_grade(cell)[0]


def test_outputs_give_nbgrader_the_engines_points():
    result = _result(("test_a", "", True, 1.0, False, ""),
                     ("test_b", "1", True, 1.0, False, ""), ("test_b", "2", False, 0.0, False, "wrong"),
                     ("test_c", "", False, 0.0, False, "the weights sum to 2"),
                     ("test_d", "0.3-0", False, 0.0, True, HIDDEN_FEEDBACK),
                     ("test_d", "2.0-0", True, 1.0, True, ""))
    lookup = registry.exercise("lookup")
    assert _points(outputs(result, lookup, "check-test_a"), 1) == 1
    assert _points(outputs(result, lookup, "check-test_b"), 2) == 1  # partial credit
    failed = outputs(result, lookup, "check-test_c")
    assert _points(failed, 1) == 0 and failed[0].traceback == ["test_c failed: the weights sum to 2"]
    hidden = outputs(result, lookup, "check-test_d")
    assert _points(hidden, 2) == 1
    assert "0.3" not in json.dumps(hidden) and HIDDEN_FEEDBACK in hidden[0].text  # no case id: it is an input
    for unknown in ("check-test_z", "a-cell-of-my-own"):  # never an empty output, which nbgrader counts as full marks
        assert _points(outputs(result, lookup, unknown), 3) == 0
    assert _points(outputs(result, None, "check-test_a"), 1) == 0  # not an exercise's notebook
