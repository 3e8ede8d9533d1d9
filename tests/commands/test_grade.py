"""softlookup grade on a class of 40: honest, partial, hostile and broken submissions, in one gradebook.

The class is graded against a disposable copy of the kit (as the attack
corpus is), on the three numpy exercises, with a 1 s limit per call. The
honest students' rows must not depend on how they were graded: alone with
``softlookup check``, in the batch with one judge, or with two judges
interrupted and resumed.
"""

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from attacks import ATTACKS, kit_copy
from helpers import SOLUTIONS
from grader.engine import registry
from grader.reports.inert import inline
from grader.releases.exercise_notebooks import learner_notebook
from mistakes import MISTAKES
from helpers import with_ctrl_c

pytestmark = pytest.mark.slow  # a whole road end to end (tests/pytest.ini)

NUMPY = ["softmax", "lookup", "attention"]
CAPPED = "causal mask capped at 8 tokens"  # caught by a hidden check alone: its feedback must not show the input
PARTIAL = [m for number, m in enumerate(m for m in MISTAKES if m.module in NUMPY)
           if number % 4 == 0 or m.name == CAPPED]  # a spread of wrong implementations, and that one
HOSTILE = [a for a in ATTACKS if a.module == "lookup" and not a.links and not a.harmful]
MAX = sum(registry.exercise(name).max_points for name in NUMPY)


def _modules(folder: Path, source: Path):
    folder.mkdir(parents=True)
    for name in NUMPY:
        shutil.copy(source / f"{name}.py", folder)


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    return kit_copy(tmp_path_factory.mktemp("graded-kit"), registry.KIT_ROOT)


@pytest.fixture(scope="module")
def klass(tmp_path_factory, kit):
    """The class folder, and each student's expected (score, status); None for "0 < score < MAX"."""
    root = tmp_path_factory.mktemp("class") / "submissions"
    root.mkdir()
    expected = {}
    for number in range(3):
        _modules(root / f"honest-{number}", SOLUTIONS)
        expected[f"honest-{number}"] = (MAX, "ok")
    for mistake in PARTIAL:
        name = "partial-" + mistake.name.replace(" ", "-")
        _modules(root / name, SOLUTIONS)
        mistake.apply(root / name)
        expected[name] = (None, "ok")
    for attack in HOSTILE:
        name = "hostile-" + "".join(c if c.isalnum() else "-" for c in attack.name)
        _modules(root / name, kit / "assignments")
        (root / name / "lookup.py").write_text(attack.source(kit, os.getpid(), 9, root / name / "r.json"))
        expected[name] = (0.0, "any")
    (root / "empty").mkdir()
    expected["empty"] = (0.0, "missing")
    (root / "a-file").write_text("not a folder")
    expected["a-file"] = (0.0, "invalid")
    os.symlink(root / "honest-0", root / "linked")
    expected["linked"] = (0.0, "invalid")
    _modules(Path(os.fsdecode(bytes(root) + b"/caf\xe9")), SOLUTIONS)  # a name that is not UTF-8
    expected["caf\\xe9"] = (MAX, "ok")
    _modules(root / "nested" / "submission", SOLUTIONS)
    expected["nested"] = (MAX, "ok")
    with zipfile.ZipFile(root / "zipped.zip", "w") as archive:
        for name in NUMPY:
            archive.write(SOLUTIONS / f"{name}.py", f"zipped/{name}.py")
    expected["zipped"] = (MAX, "ok")
    (root / "notebooks").mkdir()  # a student who worked in JupyterLab
    for name in NUMPY:
        source = (SOLUTIONS / f"{name}.py").read_text()
        (root / "notebooks" / f"{name}.ipynb").write_text(learner_notebook(registry.exercise(name), source, stub=False))
    expected["notebooks"] = (MAX, "ok")
    _modules(root / "broken-notebook", SOLUTIONS)
    (root / "broken-notebook" / "attention.py").unlink()
    (root / "broken-notebook" / "attention.ipynb").write_text("{ this is not JSON")
    expected["broken-notebook"] = (MAX - registry.exercise("attention").max_points, "invalid")  # only attention lost
    with zipfile.ZipFile(root / "escaping.zip", "w") as archive:
        archive.writestr("../../escaped.py", "x = 1\n")
    expected["escaping"] = (0.0, "invalid")
    assert len(expected) >= 30
    return root, expected


def grade(kit: Path, submissions: Path, out: Path, *extra, wait=True):
    command = [sys.executable, "-m", "grader.cli", "grade", str(submissions), "--out", str(out), "--time-limit", "1",
               "--solutions", str(kit / "solutions"), *[f"--exercise={name}" for name in NUMPY], *extra]
    env = {**os.environ, "PYTHONPATH": str(kit), "HF_HUB_OFFLINE": "1"}
    if not wait:  # (run elsewhere than the kit's root, which would put the real kit ahead of the copy)
        return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                cwd=out.parent, preexec_fn=with_ctrl_c)
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=900, cwd=out.parent)


def rows(out: Path) -> dict[str, dict]:
    with open(out / "grades.csv", newline="") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


@pytest.fixture(scope="module")
def graded(kit, klass, tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    done = grade(kit, klass[0], out)
    assert done.returncode == 0, done.stderr
    return out


def test_every_student_gets_the_row_expected(graded, klass):
    found = rows(graded)
    _, expected = klass
    assert set(found) == set(expected)
    for student, (score, status) in expected.items():
        row = found[student]
        assert float(row["max_score"]) == MAX
        if score is None:
            assert 0 < float(row["score"]) < MAX, (student, row)
        else:
            assert float(row["score"]) == score, (student, row)
        if status != "any":
            assert row["status"] == status, (student, row)
        # Each column is rounded to hundredths, as the total is: their sum may be a hundredth off per column.
        assert sum(float(row[name]) for name in NUMPY) == pytest.approx(float(row["score"]), abs=0.005 * len(NUMPY))


def test_every_student_gets_feedback_without_hidden_inputs(graded, klass):
    for student in klass[1]:
        folder = graded / student
        results = json.loads((folder / "results.json").read_text())
        assert {"score", "max_score", "tests"} <= set(results)
        feedback = (folder / "feedback.md").read_text()
        assert feedback.startswith(f"# Feedback for {inline(student)}")  # the id as Markdown text, `_` escaped
        assert (folder / "feedback.html").read_text().startswith("<!DOCTYPE html>")
    capped = (graded / ("partial-" + CAPPED.replace(" ", "-")) / "feedback.md").read_text()
    assert "inputs that stay hidden" in capped and "(10, 10)" not in capped


def test_the_summary_says_what_to_reteach(graded):
    summary = (graded / "summary.md").read_text()
    assert "What to reteach" in summary and "| mistake | students |" in summary
    assert "Not started, missing, unreadable or not importable" in summary
    assert "data:image/png;base64," in (graded / "summary.html").read_text()


def test_an_honest_grade_alone_is_the_one_in_the_batch(graded, kit, klass, tmp_path):
    alone = subprocess.run([sys.executable, "-m", "grader.cli", "check", str(klass[0] / "honest-1"), "--json",
                            str(tmp_path / "alone.json"), "--time-limit", "1", "--solutions", str(kit / "solutions"),
                            *[f"--exercise={name}" for name in NUMPY]],
                           env={**os.environ, "PYTHONPATH": str(kit)}, capture_output=True, text=True, timeout=300,
                           cwd=tmp_path)
    assert json.loads((tmp_path / "alone.json").read_text())["score"] == MAX, alone.stderr
    assert float(rows(graded)["honest-1"]["score"]) == MAX


def test_an_interrupted_batch_resumes_and_loses_nothing(graded, kit, klass, tmp_path):
    """Two judges, stopped by Ctrl-C and run again: the honest rows are those of one judge's uninterrupted run."""
    out = tmp_path / "interrupted"
    running = grade(kit, klass[0], out, "--jobs", "2", wait=False)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(out.glob("*/softlookup.json"))) < 5:
        time.sleep(0.1)
    running.send_signal(signal.SIGINT)
    _, errors = running.communicate(timeout=120)
    assert running.returncode == 130, errors
    assert "Run the same command again" in errors
    first = rows(out)  # a consistent gradebook of those graded so far
    assert 5 <= len(first) < len(klass[1])
    finished = grade(kit, klass[0], out, "--jobs", "2")
    assert finished.returncode == 0, finished.stderr
    total = len(klass[1])
    assert f"{total} of {total} students graded ({total - len(first)} new)" in finished.stdout  # the rest, said so
    resumed = rows(out)
    assert {s: resumed[s] for s in first} == first  # nothing graded was lost or redone
    honest = [s for s, (score, _) in klass[1].items() if score is not None]
    assert {s: resumed[s] for s in honest} == {s: rows(graded)[s] for s in honest}
    assert not list(Path(out).rglob(".*.tmp"))  # every file was written whole


@pytest.mark.parametrize("args,fragment", [
    (["grade", "/no/such/class", "--out", "/tmp/x"], "is not a folder"),
    (["grade", str(SOLUTIONS), "--out", str(SOLUTIONS / "softmax.py")], "is a file"),
    (["grade", str(SOLUTIONS), "--out", str(SOLUTIONS / "out")], "inside the submissions folder"),
    (["grade", str(SOLUTIONS), "--out", "/tmp/x", "--jobs", "0"], "--jobs must be 1 or more"),
    (["grade", str(SOLUTIONS)], "required"),
])
def test_bad_usage_is_one_line(args, fragment):
    done = subprocess.run([sys.executable, "-m", "grader.cli", *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and fragment in done.stderr and len(done.stderr.strip().splitlines()) == 1
