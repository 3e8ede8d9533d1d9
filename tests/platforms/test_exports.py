"""``softlookup grade`` on the exports course platforms produce, as they come (issue 17).

For each layout :mod:`exports` builds the roster's class from the platform's
documented format; it is graded with no flag, and every student's id, name,
email, late flag, score and status must be in grades.csv, the exit status 0,
the line before grading must say what was found, and the platform's import
file must have the header the platform reads, a row per student. Scores are
the ones ``softlookup check`` gives the same files.
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

import exports
from helpers import full_marks_problems, run
from exports import EXERCISES
from grader.reports.gradebook import points
from grader.platforms import canvas, detect, moodle

OPTIONS = [*[f"--exercise={name}" for name in EXERCISES], "--time-limit", "30"]  # a loaded machine times nothing out
# A student who handed in nothing has no module to grade, except in a repository cloned from the bundle, which
# holds its untouched stubs: 0 points, status not-started.
NOTHING_STATUS = {"github-classroom": "not-started"}


def grade(submissions: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "grader.cli", "grade", str(submissions), "--out", str(out), *OPTIONS, *extra]
    return subprocess.run(command, env={**os.environ, "HF_HUB_OFFLINE": "1"}, capture_output=True, text=True,
                          timeout=600)


def rows(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))


@pytest.fixture(scope="module")
def scores(tmp_path_factory) -> dict[str, tuple[str, str, str]]:
    """What each kind of work earns, graded alone as ``softlookup check`` grades it: (score, maximum, status)."""
    found = {work: run(exports.write(tmp_path_factory.mktemp(work), files), EXERCISES)
             for work, files in exports.WORK.items()}
    assert not full_marks_problems(found["honest"], EXERCISES)
    assert 0 < found["partial"].score < found["partial"].max_score
    return {work: (points(result.score), points(result.max_score), result.status) for work, result in found.items()}


@pytest.fixture(scope="module", params=list(exports.BUILDERS))
def graded(request, tmp_path_factory):
    """One layout's class, built and graded: (layout, who must be found, the command's run, the gradebook)."""
    root = tmp_path_factory.mktemp(request.param)
    expected = exports.BUILDERS[request.param](root / "export")
    return request.param, expected, grade(root / "export", root / "graded"), root / "graded"


def test_every_student_of_every_export_gets_their_row(graded, scores):
    layout, expected, done, out = graded
    assert done.returncode == 0, done.stderr
    late = sum(who.late for who in expected.values())
    assert f"{len(expected)} students ({detect.LAYOUTS[layout].TITLE}{f', {late} late' if late else ''})" \
        in done.stderr
    found = {row[0]: row for row in rows(out / "grades.csv")[1:]}
    assert set(found) == set(expected)
    for student, who in expected.items():
        score, maximum, status = scores[who.work]
        if who.work == "nothing":
            status = NOTHING_STATUS.get(layout, "missing")
        assert found[student][1:7] == [who.name, who.email, "yes" if who.late else "", score, maximum, status], \
            (layout, student)


def test_each_platform_gets_the_import_file_it_reads(graded, scores):
    """Canvas's gradebook CSV and Moodle's grading worksheet: their headers, and each student's total, matched
    by the id the platform matches on (Canvas's user id, Moodle's "Participant <id>")."""
    layout, expected, _, out = graded
    platform = detect.LAYOUTS[layout]
    assert {path.name for path in out.glob("*.csv")} == {"grades.csv", *filter(None, [platform.IMPORT_FILE])}
    total = {row[0]: row[4] for row in rows(out / "grades.csv")[1:]}
    if platform is canvas:
        header, possible, *students = rows(out / canvas.IMPORT_FILE)
        assert header == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "softlookup"]
        assert possible == ["    Points Possible", "", "", "", "", scores["honest"][1]]
        assert {row[1]: (row[0], row[5]) for row in students} == {
            student: (who.name, total[student]) for student, who in expected.items()}
    if platform is moodle:
        header, *students = rows(out / moodle.IMPORT_FILE)
        assert header == ["Identifier", "Full name", "Email address", "Status", "Grade", "Maximum Grade",
                          "Grade can be changed", "Last modified (submission)", "Last modified (grade)",
                          "Feedback comments"]
        assert {row[0]: (row[1], row[4], row[5]) for row in students} == {
            f"Participant {student}": (who.name, total[student], scores["honest"][1])
            for student, who in expected.items()}


def test_a_rerun_with_nothing_new_says_so(graded):
    _, expected, _, out = graded
    again = grade(out.parent / "export", out)
    assert again.returncode == 0, again.stderr
    assert f"nothing new: all {len(expected)} students were graded" in again.stderr


def test_a_class_with_nothing_to_grade_exits_non_zero(tmp_path):
    """Every student's folder is there and none holds a module: the command says so and fails."""
    for person in exports.ROSTER:
        exports.write(tmp_path / "export" / person.login, {"notes.txt": "I could not start\n"})
    done = grade(tmp_path / "export", tmp_path / "graded")
    assert done.returncode == 1, done.stderr
    assert f"none of the {len(exports.ROSTER)} students could be graded" in done.stderr
