"""The instructor's record of ``softlookup grade``: whole whenever the run stops, whatever a student did.

Issue 45 (a judge that dies, a whole run killed with SIGKILL, a full disk) and issue 46 (a record stands only
while nothing grading read has changed; one student's folder is no class). Every test runs the real command
on the numpy exercises of :mod:`classes`; a test waits for a state (a file, a process), never for a time.
"""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import classes
from attacks import kit_copy
from classes import MAX, NUMPY, OPTIONS, cli, rows
from grader.engine import registry
from grader.reports import gradebook
from grader.reports.class_record import RESERVE_FILE

FILES = ("results.json", "feedback.md", "feedback.html", gradebook.RESULT_FILE)
LOOPING = {"softmax": "def softmax(x, axis=-1):\n    while True:\n        pass\n"}
PARTIAL = {"softmax": "import numpy as np\n\ndef softmax(x, axis=-1):\n    return np.exp(x) / np.exp(x).sum()\n"}


def wait_for(condition, what: str, seconds: float = 300):
    """Poll until ``condition()`` is true (a state, never a time): its value; fails after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if found := condition():
            return found
        time.sleep(0.02)
    raise AssertionError(f"waited {seconds} s for {what}")


def recorded(out: Path) -> set[str]:
    """The students whose record (softlookup.json) is written in ``out``."""
    return {path.parent.name for path in out.glob(f"*/{gradebook.RESULT_FILE}")}


def judges(coordinator: int) -> set[int]:
    """The live judges of a ``grade`` run: its children that serve students."""
    found = set()
    with contextlib.suppress(OSError):
        for child in Path(f"/proc/{coordinator}/task/{coordinator}/children").read_text().split():
            with contextlib.suppress(OSError):
                if b"serve" in Path(f"/proc/{child}/cmdline").read_bytes():
                    found.add(int(child))
    return found


def finished(running: subprocess.Popen) -> tuple[int, str, str]:
    out, errors = running.communicate(timeout=600)
    return running.returncode, out, errors


# -- a whole run killed, and resumed ----------------------------------------------------------------


@pytest.fixture(scope="module")
def klass(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("record") / "submissions"
    for number in range(3):
        classes.honest(root / f"honest-{number}")
        classes.modules(root / f"partial-{number}", PARTIAL)
    classes.stubs(root / "stubs")
    return root


@pytest.fixture(scope="module")
def clean(klass, tmp_path_factory) -> dict[str, dict]:
    """The gradebook of an uninterrupted run of :func:`klass`."""
    out = tmp_path_factory.mktemp("clean") / "out"
    done = cli(klass, out)
    assert done.returncode == 0, done.stderr
    return rows(out)


@pytest.mark.slow  # a whole road end to end (tests/pytest.ini)
def test_a_run_killed_with_sigkill_leaves_every_finished_student_and_resumes(klass, clean, tmp_path):
    """SIGKILL of the whole ``grade`` process once two students are recorded: grades.csv holds a row for every
    student recorded, equal to a clean run's, each with their four files; the next run grades only the rest,
    and its gradebook is the clean run's, with nothing half-written left behind."""
    out = tmp_path / "out"
    running = cli(klass, out, wait=False)
    wait_for(lambda: len(recorded(out)) >= 2, "two students recorded")
    running.send_signal(signal.SIGKILL)
    running.communicate(timeout=60)
    assert running.returncode == -signal.SIGKILL
    done = recorded(out)
    assert 2 <= len(done) < len(clean)
    left = rows(out)
    assert done <= set(left)  # every student recorded has their row, as a clean run gives it
    assert all(left[student] == clean[student] for student in left)
    for student in done:
        assert all((out / student / name).is_file() for name in FILES)
    resumed = cli(klass, out)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(clean)} of {len(clean)} students graded ({len(clean) - len(done)} new)" in resumed.stdout
    assert rows(out) == clean
    assert not list(out.rglob(".*.tmp")) and not (out / RESERVE_FILE).exists()


# -- a judge that dies --------------------------------------------------------------------------------


@pytest.mark.slow  # a whole road end to end (tests/pytest.ini)
def test_a_student_whose_judge_dies_is_graded_again_once_then_recorded_as_judge_died(tmp_path):
    """Judges killed with SIGKILL while they hold a student: b's judge twice (the second before it was even
    ready), c's once. b is recorded judge-died, with feedback that says so; c is graded on the new judge as
    if nothing happened; a and d, before and after, keep full marks."""
    root = tmp_path / "submissions"
    classes.honest(root / "a-honest")
    classes.modules(root / "b-twice", LOOPING)  # it never finishes by itself: its judge is killed first
    classes.honest(root / "c-once")
    classes.honest(root / "d-honest")
    out = tmp_path / "out"
    running = cli(root, out, "--time-limit", "60", wait=False)
    killed = set()

    def kill_the_judge():
        judge = wait_for(lambda: judges(running.pid) - killed, "a judge not killed yet").pop()
        os.kill(judge, signal.SIGKILL)
        killed.add(judge)

    wait_for(lambda: "a-honest" in recorded(out), "a-honest recorded")  # its judge has been given b-twice
    kill_the_judge()
    kill_the_judge()  # the new judge, given b-twice first
    wait_for(lambda: "b-twice" in recorded(out), "b-twice recorded")  # the next judge has been given c-once
    kill_the_judge()
    code, _, errors = finished(running)
    assert code == 0, errors
    found = rows(out)
    assert (found["b-twice"]["score"], found["b-twice"]["status"]) == ("0", "judge-died"), found["b-twice"]
    for student in ("a-honest", "c-once", "d-honest"):
        assert (found[student]["score"], found[student]["status"]) == (f"{MAX:g}", "ok"), found[student]
    feedback = (out / "b-twice" / "feedback.md").read_text()
    assert "grader's process grading you was killed twice; nothing of yours was graded" in feedback
    assert "SIGKILL" in feedback
    assert "killed twice" not in (out / "summary.md").read_text()  # the kit's words, never a mistake of the class


# -- a full disk ------------------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path):
    """A file system of 16 MB of its own (tmpfs), where a test can fill every byte; skipped where this
    machine cannot mount one (not root)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(disk)],
                                           capture_output=True).returncode != 0:
        pytest.skip("mounting a small file system takes root")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=True)


def fill(disk: Path):
    """Take every byte left on ``disk``, as a submission filling its scratch folder there would."""
    with open(disk / "filler", "wb") as handle:
        with contextlib.suppress(OSError):
            while True:
                handle.write(b"\0" * 2**16)
                handle.flush()


@pytest.mark.slow  # a whole road end to end (tests/pytest.ini)
def test_the_record_is_written_whatever_fills_the_disk(small_disk, tmp_path):
    """Once the first student is recorded, the disk of OUT is filled to its last byte (here by the test,
    standing in for a student whose scratch is on that disk): every student is still graded and recorded,
    the gradebook and the summary are written, and the space kept aside is given back at the end."""
    root = tmp_path / "submissions"
    for name in ("a", "b", "c", "d"):
        classes.honest(root / name)
    out = small_disk / "out"
    running = cli(root, out, wait=False)
    wait_for(lambda: recorded(out), "a student recorded")
    fill(small_disk)
    code, _, errors = finished(running)
    assert code == 0, errors
    found = rows(out)
    assert {student: (row["score"], row["status"]) for student, row in found.items()} == \
        {student: (f"{MAX:g}", "ok") for student in ("a", "b", "c", "d")}
    for student in found:
        assert all((out / student / name).stat().st_size for name in FILES)
    assert all((out / name).stat().st_size for name in gradebook.CLASS_FILES)
    assert not (out / RESERVE_FILE).exists()


# -- resuming: graded again whenever what grading read changed -----------------------------------


def grade_with(kit: Path, submissions: Path, out: Path) -> subprocess.CompletedProcess:
    """``grade`` with the kit at ``kit`` (its checks, engine and solutions), run outside the real kit's root."""
    return subprocess.run([sys.executable, "-m", "grader.cli", "grade", str(submissions), "--out", str(out),
                           "--solutions", str(kit / "solutions"), *OPTIONS],
                          env={**os.environ, "PYTHONPATH": str(kit), "HF_HUB_OFFLINE": "1"}, capture_output=True,
                          text=True, timeout=600, cwd=out.parent)


def editions(out: Path) -> dict[str, tuple[str, str]]:
    """Each student's edition, as grades.csv and their results.json name it."""
    return {student: (row["edition"], json.loads((out / student / "results.json").read_text())["extra_data"]["edition"])
            for student, row in rows(out).items()}


@pytest.mark.slow  # a whole road end to end (tests/pytest.ini)
def test_a_student_is_graded_again_when_their_work_or_the_checks_change(tmp_path):
    """An unchanged class is skipped (a file saved again unchanged included); a resubmission corrected after
    grading is graded again, alone; a changed check grades everyone again; every row and results.json names
    the edition of the kit that graded it."""
    kit = kit_copy(tmp_path, registry.KIT_ROOT)
    root = tmp_path / "submissions"
    classes.honest(root / "honest")
    classes.modules(root / "resubmits", PARTIAL)
    out = tmp_path / "out"
    first = grade_with(kit, root, out)
    assert first.returncode == 0, first.stderr
    before = rows(out)
    assert float(before["resubmits"]["score"]) < MAX
    (edition,) = {found for pair in editions(out).values() for found in pair}
    assert len(edition) == 16

    (root / "honest" / "softmax.py").touch()  # saved again, the same content: nothing to grade
    again = grade_with(kit, root, out)
    assert again.returncode == 0 and "nothing new" in again.stderr, again.stderr
    assert rows(out) == before

    shutil.copy(classes.SOLUTIONS / "softmax.py", root / "resubmits" / "softmax.py")  # corrected after grading
    corrected = grade_with(kit, root, out)
    assert corrected.returncode == 0, corrected.stderr
    assert "2 of 2 students graded (0 new; 1 regraded: work changed)" in corrected.stdout
    assert rows(out)["resubmits"]["score"] == f"{MAX:g}" and rows(out)["honest"] == before["honest"]

    check = kit / "grader" / "checks" / "public" / "test_softmax.py"
    check.write_text(check.read_text() + "\n# a check changed by the instructor\n")
    changed = grade_with(kit, root, out)
    assert changed.returncode == 0, changed.stderr
    assert "2 of 2 students graded (0 new; 2 regraded: checks changed)" in changed.stdout
    (newer,) = {found for pair in editions(out).values() for found in pair}
    assert newer != edition and all(row["score"] == f"{MAX:g}" for row in rows(out).values())


# -- one student's folder is no class -----------------------------------------------------------------


@pytest.mark.parametrize("layout", ["modules", "notebook", "clone"])
def test_one_students_folder_is_refused_in_one_line(layout, tmp_path):
    """A folder that holds exercises itself (modules, a notebook, or a clone's assignments/) is one student's
    work: refused in one line that names `softlookup check`, exit 2, nothing written."""
    student = tmp_path / "alice"
    if layout == "modules":
        classes.honest(student)
    elif layout == "notebook":
        student.mkdir()
        (student / "softmax.ipynb").write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    else:
        classes.honest(student / "assignments")
    out = tmp_path / "out"
    done = cli(student, out)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "softlookup check" in done.stderr, done.stderr
    assert "one student's work" in done.stderr and not out.exists()
