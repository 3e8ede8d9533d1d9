"""What ``softlookup grade`` tells an instructor, and what each student reads, as they run and open it.

A small class on the numpy exercises: a student whose softmax loops (and who
handed in no lookup.py), one who handed in nothing, one whose softmax does
not parse, and an honest one. ``grades.csv`` tells the looping student from
the empty folder, and their feedback says why; feedback says a message once
however many checks gave it. A folder holding two layouts is graded with a
warning that says so. ``softlookup release nbgrader`` does not write over a
course it finds.
"""

from pathlib import Path

import pytest

from classes import MAX, NUMPY, cli, graded_class, honest, modules, reference, rows
from helpers import softlookup
from grader.reports import gradebook

LOOPING = "def softmax(x, axis=-1):\n    while True:\n        pass\n"
UNPARSABLE = "def softmax(x, axis=-1)\n    return x\n"


def feedback(out, student) -> str:
    return (gradebook.student_folder(out, student) / "feedback.md").read_text()


def looping_without_lookup(folder):
    modules(folder, {"softmax": LOOPING})
    (folder / "lookup.py").unlink()


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    return graded_class(tmp_path_factory.mktemp("class"), {
        "honest": honest, "empty": Path.mkdir, "looping": looping_without_lookup,
        "looping-with-lookup": {"softmax": LOOPING}, "unparsable": {"softmax": UNPARSABLE}}, "--time-limit", "1")


def test_the_status_tells_a_loop_from_nothing_handed_in(graded):
    out, _ = graded
    found = rows(out)
    assert {student: row["status"] for student, row in found.items()} == {
        "honest": "ok", "empty": "missing", "looping": "timeout", "looping-with-lookup": "timeout",
        "unparsable": "syntax-error"}
    assert found["honest"]["score"] == f"{MAX:g}"


@pytest.mark.parametrize("student,said", [
    ("looping", ["**Status: timeout.**", "ran past its time limit in softmax.py", "There was no lookup.py"]),
    ("empty", ["**Status: missing.**", "No exercise was found in what you handed in"]),
    ("unparsable", ["**Status: syntax-error.**", "Python could not read softmax.py and lookup.py: a syntax error"]),
])
def test_feedback_says_why_the_status_is_what_it_is(graded, student, said):
    text = feedback(graded[0], student)
    assert all(part in text for part in said), text
    assert "**Status:" not in feedback(graded[0], "honest")


def test_feedback_says_a_repeated_message_once(graded):
    out, _ = graded
    unparsable = feedback(out, "unparsable")
    # Once per exercise it stops (lookup imports softmax), not once per check:
    assert unparsable.count("Python could not read your file") == len(NUMPY), unparsable
    assert len(unparsable.splitlines()) < 60
    looping = feedback(out, "looping-with-lookup")
    assert looping.count("computed for more than its 1 s time limit") == 1, looping  # softmax's own checks, once
    for text in (unparsable, looping):  # no bullet of one exercise repeats another's message
        bullets = [line.split("**: ", 1)[-1] for line in text.splitlines() if line.startswith("- **")]
        assert len(bullets) == len(set(bullets)), bullets


def test_a_folder_of_two_layouts_is_graded_with_a_warning(tmp_path):
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    for number in range(3):  # three students' folders, and three more as Canvas's "Download Submissions" names
        honest(submissions / f"student-{number}")  # a file: half the entries each, so neither layout wins
        (submissions / f"doe{number}_{100 + number}_{200 + number}_softmax.py").write_text(reference("softmax"))
    done = cli(submissions, tmp_path / "out")
    assert done.returncode == 0, done.stderr
    warning = [line for line in done.stderr.splitlines() if "warning" in line]
    assert len(warning) == 1, done.stderr
    assert "3 of the 6 entries are named as a Canvas export names them" in warning[0]
    assert "two layouts in one" in warning[0] and "--layout canvas" in warning[0]
    assert "warning" not in cli(submissions / "student-0", tmp_path / "alone").stderr  # an ordinary class: no word


def test_release_nbgrader_does_not_write_over_a_course(tmp_path):
    course = tmp_path / "course"
    assert softlookup("release", "nbgrader", course, "--exercise", "softmax").returncode == 0
    assert softlookup("release", "nbgrader", course, "--exercise", "softmax").returncode == 0  # nothing would change
    config = course / "nbgrader_config.py"
    config.write_text(config.read_text() + "c.CourseDirectory.course_id = 'attention-101'\n")  # the instructor's edit
    again = softlookup("release", "nbgrader", course, "--exercise", "softmax")
    assert again.returncode == 2 and len(again.stderr.strip().splitlines()) == 1, again.stderr
    assert "nbgrader_config.py" in again.stderr and "--force" in again.stderr
    assert "attention-101" in config.read_text()  # kept
    forced = softlookup("release", "nbgrader", course, "--exercise", "softmax", "--force")
    assert forced.returncode == 0 and "attention-101" not in config.read_text()


def test_a_rerun_says_how_many_students_were_new(tmp_path):
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    for name in ("a", "b"):
        honest(submissions / name)
    first = cli(submissions, tmp_path / "out")
    assert first.returncode == 0 and "2 of 2 students graded (2 new)" in first.stdout, first.stdout + first.stderr
    for name in ("c", "d", "e"):  # handed in late, after the first run (or after a Ctrl-C)
        honest(submissions / name)
    rerun = cli(submissions, tmp_path / "out")
    assert rerun.returncode == 0 and "5 of 5 students graded (3 new)" in rerun.stdout, rerun.stdout + rerun.stderr
    again = cli(submissions, tmp_path / "out", "--force")
    assert "5 of 5 students graded (5 graded again)" in again.stdout, again.stdout
