"""GitHub Classroom's points are self-reported: ``softlookup grade`` names the repositories that changed the kit.

Classroom records what the workflow in a student's own repository reports,
run by that repository's ``grader/`` and ``pyproject.toml`` (issue 46 §3). A
class of clones made from a real bundle: two untouched (one honest, one
still stubs), and three that changed what reports their points (the
workflow made to report full marks, a ``grader/`` file edited, the
``pyproject.toml`` edited). Graded with the instructor's kit: the three,
and only they, are named with their files in grades.csv and the summary,
and every grade is what the instructor's checks give.
"""

import csv
import html

import pytest

from classes import MAX, NUMPY, cli, reference
from exports import classroom_clone
from grader.releases import bundle
from grader.reports.integrity import KIT_CHANGED, KIT_COLUMN

FORGED_STEP = "          echo 'result=eyJzdGF0dXMiOiAicGFzcyIsICJtYXhfc2NvcmUiOiAxMDB9' >> \"$GITHUB_OUTPUT\"\n"
HONEST = {f"{name}.py": reference(name) for name in NUMPY}


def _edited(path, change):
    path.write_text(change(path.read_text()))


EDITS = {  # student -> (their work in assignments/, what they changed of the kit, the files they must be named for)
    "untouched": (HONEST, None, []),
    "stubs": ({}, None, []),
    "forged-workflow": ({}, lambda repo: _edited(repo / ".github/workflows/classroom.yml",
                                                  lambda text: text + FORGED_STEP), [".github/workflows/classroom.yml"]),
    "edited-grader": ({}, lambda repo: _edited(repo / "grader/reports/classroom.py",
                                                lambda text: text.replace("def ", "def _unused(): pass\n\n\ndef ", 1)),
                      ["grader/reports/classroom.py"]),
    "edited-pyproject": (HONEST, lambda repo: _edited(repo / "pyproject.toml", lambda text: text + "\n# mine\n"),
                         ["pyproject.toml"]),
}


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """The bundle as the instructor's kit releases it: what Classroom makes every student's repository from."""
    made = tmp_path_factory.mktemp("release") / "student"
    assert bundle.main([str(made)]) == 0
    return made


@pytest.fixture(scope="module")
def graded(made, tmp_path_factory):
    clones = tmp_path_factory.mktemp("classroom") / "attention-submissions"
    for student, (work, change, _) in EDITS.items():
        repository = classroom_clone(made, clones / f"attention-{student}", work)
        if change:
            change(repository)
    out = clones.parent / "graded"
    done = cli(clones, out)
    assert done.returncode == 0, done.stderr
    with open(out / "grades.csv", newline="") as handle:
        return out, {row["student"]: row for row in csv.DictReader(handle)}, done


def test_the_repositories_that_changed_the_kit_are_named_with_their_files(graded):
    _, rows, done = graded
    assert set(rows) == set(EDITS) and "warning" not in done.stderr, done.stderr
    assert {student: row[KIT_COLUMN] for student, row in rows.items()} == {
        student: "; ".join(files) for student, (_, _, files) in EDITS.items()}


def test_the_grade_is_what_the_instructors_checks_give(graded):
    _, rows, _ = graded
    assert {student: float(row["score"]) for student, row in rows.items()} == {
        student: MAX if work else 0.0 for student, (work, _, _) in EDITS.items()}


def test_the_summary_names_them_and_says_the_points_are_self_reported(graded):
    out, _, _ = graded
    for name in ("summary.md", "summary.html"):
        text = (out / name).read_text()
        section = html.unescape(text.split(KIT_CHANGED, 1)[1])
        assert "reported by the workflow in each student's own repository" in section
        for student, (_, _, files) in EDITS.items():
            assert (student in section) == bool(files), (name, student)
            assert all(file in section for file in files), (name, student)


def test_a_file_every_repository_holds_alike_is_the_kits_own_change(made, tmp_path):
    """Released with another kit (here: another README), every repository differs from this kit alike: one
    warning line, and no student named for it; a student who changed more is named for the rest."""
    clones = tmp_path / "attention-submissions"
    for student in ("ada", "bo", "cy"):
        repository = classroom_clone(made, clones / f"attention-{student}", HONEST)
        _edited(repository / "README.md", lambda text: text + "\nReleased last term.\n")
    _edited(clones / "attention-cy" / "softlookup.py", lambda text: text + "\n# mine\n")
    done = cli(clones, tmp_path / "graded")
    assert done.returncode == 0, done.stderr
    warning = [line for line in done.stderr.splitlines() if "warning" in line]
    assert len(warning) == 1 and "README.md" in warning[0] and "softlookup.py" not in warning[0], done.stderr
    with open(tmp_path / "graded" / "grades.csv", newline="") as handle:
        named = {row["student"]: row[KIT_COLUMN] for row in csv.DictReader(handle)}
    assert named == {"ada": "", "bo": "", "cy": "softlookup.py"}
