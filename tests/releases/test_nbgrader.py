"""nbgrader end to end on the course `softlookup release nbgrader` writes, with no hand edits.

One course, three students: the reference (full marks), the released stubs
(0), and one who slipped: a wrong lookup (the same partial score as
`softlookup check` gives the same notebooks) and an attention notebook with a
cell that never ends (its module's import times out in the engine: that
exercise's checks, as `softlookup check` says, and nothing else). Then
feedback (hidden verdicts redacted) and the exported CSV. Forgery is
tests/adversarial/test_nbgrader_forgery.py.
"""

import csv
import html

import nbformat
import pytest

from helpers import IMPORT_TIME_LIMIT, SECONDS, nbgrader, notebook_scores, released_course, run
from grader.engine import registry
from grader.engine.results import HIDDEN_FEEDBACK
from grader.engine.submissions import notebooks
from grader.releases.nbgrader_course import ASSIGNMENT

pytestmark = pytest.mark.slow  # a whole road end to end (tests/pytest.ini)

# nbgrader runs `alembic` by name, so the environment's scripts folder must be on PATH, as in an activated venv.
# Two slips from tests/mistakes.py, made in the student's notebook: {cell: {old: new}}.
WRONG_LOOKUP = {"soft_lookup": {"(queries[..., None] - keys) ** 2": "np.abs(queries[..., None] - keys)"},
                "nearest_lookup": {"np.argmin(distances)": "np.argmax(distances)"}}


def submit(course, student, notebooks_by_name):
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    for name, notebook in notebooks_by_name.items():
        nbformat.write(notebook, folder / name)
    return folder


def edited(notebook, edits):
    for cell in notebook.cells:
        for old, new in edits.get(cell.get("id"), {}).items():
            assert old in cell.source
            cell.source = cell.source.replace(old, new)
    return notebook


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = released_course(tmp_path_factory.mktemp("course"))
    with open(course / "nbgrader_config.py", "a") as config:  # a limit of softlookup grade's, as a course sets it
        config.write(f"c.GradeInConfinement.import_time_limit = {IMPORT_TIME_LIMIT}\n")
    source, released = course / "source" / ASSIGNMENT, course / "release" / ASSIGNMENT

    def read(folder, name):
        return nbformat.read(folder / f"{name}.ipynb", as_version=4)

    submit(course, "reference", {p.name: nbformat.read(p, as_version=4) for p in source.glob("*.ipynb")})
    submit(course, "released", {p.name: nbformat.read(p, as_version=4) for p in released.glob("*.ipynb")})
    looping = read(source, "attention")
    where = next(i for i, c in enumerate(looping.cells) if c.get("id") == "causal_mask") + 1
    looping.cells.insert(where, nbformat.v4.new_code_cell("while True:  # a learner's experiment that never ends\n    pass"))
    submit(course, "slips", {"softmax.ipynb": read(source, "softmax"), "attention.ipynb": looping,
                             "lookup.ipynb": edited(read(source, "lookup"), WRONG_LOOKUP)})
    nbgrader(course, "autograde", ASSIGNMENT, "--student", "re*")  # reference and released
    nbgrader(course, "autograde", ASSIGNMENT, "--student", "slips")
    nbgrader(course, "generate_feedback", ASSIGNMENT)
    nbgrader(course, "export")
    print("nbgrader seconds:", {step: round(seconds, 1) for step, seconds in SECONDS.items()})
    return course


def grades(course):
    with open(course / "grades.csv") as handle:
        return {row["student_id"]: row for row in csv.DictReader(handle)}


def test_config_grades_with_the_kit_step_in_place_of_execute(course):
    from nbgrader.converters import Autograde
    from traitlets.config import Config

    from grader.releases.nbgrader_step import GradeInConfinement

    config = Config()
    exec((course / "nbgrader_config.py").read_text(), {"get_config": lambda: config})
    default = Autograde.autograde_preprocessors.default()
    assert config.Autograde.autograde_preprocessors == [GradeInConfinement, *default[1:]]  # nbgrader's steps, in order
    assert default[0].__name__ == "Execute"


def test_release_keeps_neither_solutions_nor_hidden_checks(course):
    for notebook in (course / "release" / ASSIGNMENT).glob("*.ipynb"):
        text = notebook.read_text()
        assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text
        assert "raise NotImplementedError()" in text
    hidden = (course / "release" / ASSIGNMENT / "lookup.ipynb").read_text()
    assert 'graded(\\"lookup\\", \\"test_soft_matches_reference\\")' not in hidden
    assert 'graded(\\"lookup\\", \\"test_lesson_table\\")' in hidden


def test_points_in_nbgrader_are_the_registrys(course):
    for exercise in registry.EXERCISES:
        notebook = nbformat.read(course / "source" / ASSIGNMENT / f"{exercise.module}.ipynb", as_version=4)
        points = sum(c.metadata.nbgrader["points"] for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade"))
        assert points == exercise.max_points


def test_exported_csv(course):
    rows = grades(course)
    total = sum(e.max_points for e in registry.EXERCISES)
    assert set(rows) == {"reference", "released", "slips"}
    assert all(float(row["max_score"]) == total for row in rows.values())
    assert float(rows["reference"]["score"]) == total
    assert float(rows["released"]["score"]) == 0


def test_wrong_lookup_scores_as_softlookup_check_does(course):
    with notebooks.module_folder(course / "submitted" / "slips" / ASSIGNMENT) as modules:
        expected = {e.name: e.score for e in run(modules, ["softmax", "lookup"]).exercises}
    scores = notebook_scores(course, "slips")
    assert 0 < expected["lookup"] < registry.exercise("lookup").max_points
    assert scores["lookup"] == pytest.approx(expected["lookup"])  # partial credit included
    assert scores["softmax"] == pytest.approx(expected["softmax"])


def test_a_looping_cell_costs_its_exercise_as_softlookup_check_says(course):
    with notebooks.module_folder(course / "submitted" / "slips" / ASSIGNMENT) as modules:
        expected = run(modules, ["attention"], import_time_limit=IMPORT_TIME_LIMIT).exercises[0]
    assert expected.score == 0 and {c.error for c in expected.checks} == {"timeout"}  # its import never ends
    notebook = nbformat.read(course / "autograded" / "slips" / ASSIGNMENT / "attention.ipynb", as_version=4)
    looping = next(c for c in notebook.cells if c.source.startswith("while True"))
    assert not looping.outputs  # never run in nbgrader's process, nor in any kernel
    said = [output.evalue for cell in notebook.cells for output in cell.get("outputs", []) if "evalue" in output]
    assert any(f"its {IMPORT_TIME_LIMIT:g} s time limit" in line for line in said), said  # the limit the course set
    scores = notebook_scores(course, "slips")
    assert scores["attention"] == expected.score
    assert scores["softmax"] == registry.exercise("softmax").max_points  # the other exercises are graded as usual
    assert scores["gpt2_heads"] == 0  # not submitted
    assert float(grades(course)["slips"]["score"]) == pytest.approx(sum(scores.values()))


def test_feedback_shows_results_but_not_hidden_checks(course):
    feedback = (course / "feedback" / "slips" / ASSIGNMENT / "lookup.html").read_text()
    assert '<span class="s2">"test_lesson_table"</span>' in feedback  # a public test cell's code...
    assert '<span class="s2">"test_soft_matches_reference"</span>' not in feedback  # ...but not a hidden one's
    assert "BEGIN HIDDEN TESTS" not in feedback
    # Its verdict is shown, redacted as in `softlookup grade`'s feedback: no case ids, inputs or expected values.
    assert f"test_soft_matches_reference failed: {HIDDEN_FEEDBACK}" in feedback
    with notebooks.module_folder(course / "submitted" / "slips" / ASSIGNMENT) as modules:
        result = run(modules, ["softmax", "lookup"])
    hidden = {c.message for e in result.exercises for c in e.checks if c.hidden and c.outcome == "failed"}
    assert hidden and not any(html.escape(message) in feedback for message in hidden)
    assert "[0.3-0]" not in feedback and "sharpness=0.3" not in feedback


def test_a_wrong_limit_in_the_config_is_one_line_naming_its_setting():
    from grader.releases.nbgrader_step import GradeInConfinement

    assert GradeInConfinement(time_limit=10.0).grading_options().time_limit == 10.0
    with pytest.raises(ValueError, match=r"^nbgrader_config.py: c.GradeInConfinement.import_time_limit must be a "
                                         r"positive number, not -1$"):
        GradeInConfinement(import_time_limit=-1.0).grading_options()
