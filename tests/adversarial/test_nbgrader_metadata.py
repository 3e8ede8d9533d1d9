"""One student's notebook metadata cannot stop ``nbgrader autograde`` for the class (issue 25).

nbgrader sanitizes every submitted notebook before grading it. Its
``DeduplicateIds`` empties the metadata of a cell that repeats a
``grade_id`` (a test or solution cell copied in JupyterLab), and its schema
check then takes the emptied metadata for an outdated notebook: an error
that ends the whole run. Metadata of another schema version does the same.
Two courses from the same ``softlookup release nbgrader`` (softmax only)
grade four students in one ``nbgrader autograde`` run, in this order: an
honest one, one who copied a test cell and a solution cell, one whose cells
carry metadata of schema version 99 and metadata that is not a mapping, and
another honest one. With nbgrader's own sanitizing steps the run stops at
the copier and the students after them are never autograded; with the
kit's course every student is, the attackers on what their code earns, and
each dropped cell is named in nbgrader's log and the student's feedback.
"""

import copy
import subprocess

import nbformat
import pytest

from grader.engine import registry
from grader.releases.nbgrader_course import ASSIGNMENT
from helpers import NBGRADER, NBGRADER_ENV, nbgrader, notebook_scores, released_course, softlookup

pytestmark = pytest.mark.slow  # a whole road end to end (tests/pytest.ini)

STUDENTS = ("a-honest", "m-copied", "s-schema", "z-honest")  # nbgrader autogrades them in this order
FULL = registry.exercise("softmax").max_points


def attacked(notebook, student):
    """The reference notebook, with what ``student`` did to its cells' metadata."""
    notebook = copy.deepcopy(notebook)
    if student == "m-copied":  # a test cell and a solution cell copied, metadata and all, as JupyterLab pastes
        test = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade"))
        solution = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("solution"))
        notebook.cells.append(pasted(test))
        notebook.cells.insert(notebook.cells.index(solution), pasted(solution))
    if student == "s-schema":
        notebook.cells[0].metadata["nbgrader"] = {"schema_version": 99}
        notebook.cells[1].metadata["nbgrader"] = "not a mapping"
    return notebook


def pasted(cell):
    """A copy of ``cell`` as JupyterLab pastes it: the same metadata, a cell id of its own."""
    copied = copy.deepcopy(cell)
    copied.id = f"{cell.id}-pasted"
    return copied


def make_course(folder, nbgraders_own_sanitizing: bool) -> subprocess.CompletedProcess:
    """The course with every student submitted, autograded in one run; the run, which may have stopped."""
    released_course(folder, "--exercise", "softmax")
    if nbgraders_own_sanitizing:  # the course as it was: nbgrader's default sanitize_preprocessors
        config = folder / "nbgrader_config.py"
        text = config.read_text()
        start = text.index("c.Autograde.sanitize_preprocessors")
        config.write_text(text[:start] + text[text.index("]\n", start) + 2:])
    source = nbformat.read(folder / "source" / ASSIGNMENT / "softmax.ipynb", as_version=4)
    for student in STUDENTS:
        submitted = folder / "submitted" / student / ASSIGNMENT
        submitted.mkdir(parents=True)
        nbformat.write(attacked(source, student), submitted / "softmax.ipynb")
    return subprocess.run([*NBGRADER, "autograde", ASSIGNMENT], cwd=folder, capture_output=True, text=True,
                          env=NBGRADER_ENV, timeout=900)


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    course = tmp_path_factory.mktemp("kit")
    run = make_course(course, nbgraders_own_sanitizing=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    nbgrader(course, "generate_feedback", ASSIGNMENT)
    return course, run.stdout + run.stderr


def autograded(course) -> set[str]:
    return {student for student in STUDENTS if (course / "autograded" / student / ASSIGNMENT / "softmax.ipynb").exists()}


def test_under_nbgraders_own_sanitizing_one_notebook_stops_the_class(tmp_path):
    run = make_course(tmp_path, nbgraders_own_sanitizing=True)
    assert run.returncode != 0 and "old version" in run.stdout + run.stderr
    assert autograded(tmp_path) == {"a-honest"}  # no one after the copier


def test_every_student_is_autograded_the_attackers_on_their_code(kit, tmp_path):
    course, _ = kit
    assert autograded(course) == set(STUDENTS)
    for student in STUDENTS:
        checked = softlookup("check", "--notebooks", course / "submitted" / student / ASSIGNMENT,
                             "--exercise", "softmax", "--no-server")
        assert f"{FULL}/{FULL} points" in checked.stdout, checked.stdout  # the code itself is the reference's
        assert notebook_scores(course, student) == {"softmax": FULL}, student


def test_each_dropped_cell_is_named_in_the_log_and_in_that_students_feedback(kit):
    course, log = kit
    assert "repeats the grade_id 'check-" in log and "repeats the grade_id 'softmax'" in log
    assert "SchemaTooNewError" in log and "AttributeError" in log
    for student in STUDENTS:
        feedback = (course / "feedback" / student / ASSIGNMENT / "softmax.html").read_text()
        notes = feedback.count("it counts as an ordinary cell")
        assert notes == (2 if student in ("m-copied", "s-schema") else 0), (student, notes)
