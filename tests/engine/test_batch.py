"""The batch loop of ``softlookup grade``: no student reaches another's files, and no student stops the class.

Issue 16, sections 1 and 2. Classes are graded on the two exercises that
need no torch (softmax, lookup) with the real kit: nothing here aims at the
kit's own files. :mod:`classes` builds the students.
"""

import contextlib
import os
import re
import signal
import threading
import time
import zipfile
from pathlib import Path

import pytest

import classes
from classes import MAX, NUMPY, OPTIONS, cli, result_of, rows
from grader.commands import grade
from grader.engine import options, registry
from grader.engine.classes import batch as batch_engine
from grader.engine.results import ERROR_STATUS, SubmissionResult
from grader.engine.submissions import intake
from grader.platforms import detect
from grader.reports import gradebook
from grader.reports.class_record import ClassRecord
from helpers import descendants, make_submission

FILES = ("results.json", "feedback.md", "feedback.html", "softlookup.json")
# All that may differ between two gradings of one submission: how long they took.
TIMES = [(re.compile(rb'"(execution_time|seconds)": [-+.e0-9]+'), rb'"\1": 0'),
         (re.compile(rb"\(\d+\.\d s\)"), b"(0 s)")]


def reasons(out: Path, student: str) -> set[str]:
    """Why a student could not be graded: the messages of their checks that failed as invalid or crashed."""
    return {check["message"] for exercise in result_of(out, student)["exercises"] for check in exercise["checks"]
            if ERROR_STATUS.get(check["error"]) in ("invalid", "crashed")}


def marks(out: Path) -> dict[Path, int]:
    """When each student's result was last written: a rerun that grades nobody leaves every one as it was."""
    return {path: path.stat().st_mtime_ns for path in out.glob("*/" + gradebook.RESULT_FILE)}


# -- 1. one student's grading never reaches another's ---------------------------------------------


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """The class of :data:`classes.MIXED`, as the students ``softlookup grade`` finds in it, by id."""
    root = tmp_path_factory.mktemp("mixed") / "submissions"
    root.mkdir()
    for name, build in classes.MIXED.items():
        build(root / name)
    return {student.id: student for student in detect.read(root.resolve()).students}


def batch(students: list, jobs: int, out: Path) -> Path:
    """``softlookup grade``'s own batch (its coordinator, its judges) on ``students`` in the order given.

    The command itself always takes a class in the order of the names; this is how a test chooses who
    is graded after whom, by the same judge or by another.
    """
    # A generous limit per call: a loaded machine must not time a check out in one grading and not another.
    args = grade.parser().parse_args(["unused", "--out", str(out), "--time-limit", "30", *OPTIONS])
    exercises = options.chosen_exercises(args)
    out.mkdir()
    record = ClassRecord(out.resolve(), [exercise.module for exercise in exercises], "edition",
                         grade.settings(args, exercises))
    try:
        assert grade._graded(students, jobs, record, exercises, grade.judge_arguments(args, exercises)) == ""
    finally:
        record.close()
    return out


def files_of(out: Path, student: str) -> dict[str, bytes]:
    """A student's four files as bytes, times set to 0."""
    folder = gradebook.student_folder(out, student)
    found = {}
    for name in FILES:
        data = (folder / name).read_bytes()
        for pattern, replacement in TIMES:
            data = pattern.sub(replacement, data)
        found[name] = data
    return found


def test_each_students_files_are_the_same_whoever_was_graded_before(mixed, tmp_path):
    alone = batch(list(mixed.values()), len(mixed), tmp_path / "alone")  # a judge each: nobody before them
    shown = {"printer": b"Note from the instructor", "partial": b"partial's own debug output"}
    for student, text in shown.items():  # prints there to leak: shown under the student's own failures
        assert text in files_of(alone, student)["feedback.md"], student
    # One judge: each student whose checks never run (stubs, missing, a-file) right after one who printed.
    # Two judges: who follows whom is up to the judges.
    order = ["printer", "missing", "partial", "stubs", "loud", "a-file", "honest"]
    assert sorted(order) == sorted(mixed)
    for label, students, jobs in [("in one judge", order, 1), ("by two judges", order[::-1], 2)]:
        out = batch([mixed[student] for student in students], jobs, tmp_path / label)
        for student in students:
            assert files_of(out, student) == files_of(alone, student), f"{student}, graded {label}"
    printed = {**shown, "loud": b"loud's own debug output"}
    for student in mixed:
        found = [(name, text) for name, data in files_of(alone, student).items()
                 for owner, text in printed.items() if owner != student and text in data]
        assert not found, (student, found)


def test_a_class_pays_for_its_fork_servers_imports_once(mixed, tmp_path):
    """Two judges fork their workers from copies of the coordinator's fork server, which alone imports numpy
    and the worker's modules; a copy gives every student the same files as a fork server of the judge's own
    (the test before)."""
    seen, done, ours = {}, threading.Event(), set(descendants(os.getpid()))  # this test run's own fork servers

    def watch():
        while not done.is_set():
            seen.update({pid: found for pid, found in descendants(os.getpid()).items()
                         if pid not in ours and "grader.engine.confinement.zygote import main" in found[1]})
            time.sleep(0.01)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        out = batch(list(mixed.values()), 2, tmp_path / "out")
    finally:
        done.set()
        watcher.join()
    started = {pid: command for pid, (parent, command) in seen.items() if parent not in seen}
    assert len(started) == 1 and " copies numpy grader.engine.confinement.worker" in next(iter(started.values())), started
    assert len(seen) >= 3, seen  # the shared one and a copy for each judge, at least
    assert SubmissionResult.from_plain(result_of(out, "honest")).score == MAX


# -- 2. no file stops the class ----------------------------------------------------------------------


def hostile_class(root: Path) -> Path:
    """Every trigger of issue 16 in one class, beside honest students and tools' litter."""
    root.mkdir()
    for name in ("honest-1", "honest-2", ".hidden"):  # a dot-name is a student too, graded under its name
        classes.honest(root / name)
    for build in classes.TRIGGERS.values():
        build(root)
    (root / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")  # what macOS leaves: left out, and said so
    (root / "__MACOSX").mkdir()
    return root


def test_no_file_stops_the_class(tmp_path):
    """One batch: the honest students keep full marks, each trigger costs its own student alone, the
    gradebook and summary are written, and a rerun grades nobody again."""
    root, out = hostile_class(tmp_path / "submissions"), tmp_path / "out"
    done = cli(root, out, "--jobs", "2")
    assert done.returncode == 0, done.stderr
    assert all((out / name).is_file() for name in gradebook.CLASS_FILES)
    assert "2 entries ignored: .DS_Store, __MACOSX (left by a tool, not a student)" in done.stderr
    found = rows(out)
    assert set(found) == {"honest-1", "honest-2", ".hidden", *classes.TRIGGERS}
    for student in ("honest-1", "honest-2", ".hidden"):
        assert (found[student]["score"], found[student]["status"]) == (f"{MAX:g}", "ok"), found[student]
        assert [found[student][name] for name in NUMPY] == [f"{registry.exercise(n).max_points:g}" for n in NUMPY]
    _zips_are_invalid_with_a_one_line_reason(out, found)
    _text_costs_its_student_alone(out, found)
    before = marks(out)
    assert len(before) == len(found)
    again = cli(root, out)
    assert again.returncode == 0, again.stderr
    assert marks(out) == before


def _zips_are_invalid_with_a_one_line_reason(out: Path, found: dict[str, dict]):
    expected = {"method": "NotImplementedError", "encrypted": "encrypted", "corrupt": "zlib.error",
                "deep": "1000 folders deep"}
    assert set(expected) == set(classes.ZIP_TRIGGERS)
    for student, words in expected.items():
        assert (found[student]["score"], found[student]["status"]) == ("0", "invalid"), found[student]
        (reason,) = reasons(out, student)  # every check says the same
        assert words in reason and "\n" not in reason and len(reason) < 400, reason


def _text_costs_its_student_alone(out: Path, found: dict[str, dict]):
    """A notebook or a message that once stopped the judge, each with the one outcome it now has: a notebook that
    cannot be written as text is invalid with a one-line reason; a 5,000-digit literal is a syntax error that says
    so; a surrogate in an exception's message is graded (the lookups that need no softmax keep their points)."""
    notebook = found["surrogate-notebook"]
    assert (notebook["score"], notebook["status"]) == ("0", "invalid"), notebook
    (reason,) = reasons(out, "surrogate-notebook")
    assert "a code cell holds a character that is not valid text (a lone surrogate" in reason and "\n" not in reason
    big = found["big-integer"]
    assert (big["score"], big["status"]) == ("0", "syntax-error"), big
    assert any("Python could not read your file: Exceeds the limit (4300 digits)" in message
               for message in _messages(out, "big-integer"))
    raised = found["surrogate-exception"]
    without_softmax = {name: points for name, points in registry.exercise("lookup").points.items()
                       if name.startswith(("test_exact", "test_nearest"))}
    assert (raised["status"], raised["softmax"], float(raised["lookup"])) == ("ok", "0", sum(without_softmax.values()))
    messages = _messages(out, "surrogate-exception")
    assert messages and all("raised ValueError: a lone \ufffd surrogate" in message for message in messages), messages
    for student in ("surrogate-notebook", "big-integer", "surrogate-exception"):  # the files whole, written as UTF-8
        for name in FILES:
            (gradebook.student_folder(out, student) / name).read_text(encoding="utf-8")


def _messages(out: Path, student: str) -> list[str]:
    """The messages of a student's checks that did not pass."""
    return [check["message"] for exercise in result_of(out, student)["exercises"] for check in exercise["checks"]
            if check["outcome"] != "passed"]


def test_a_judge_that_dies_costs_its_student_alone(tmp_path):
    """A judge killed in the middle of a student: that student is graded again on a new judge (their loop a
    timeout there, as it would have been), the new judge grades the rest, nothing the dead one started
    outlives the batch, and a rerun does not try the student again. (A second death:
    tests/commands/test_grade_record.py.)"""
    root = tmp_path / "submissions"
    classes.honest(root / "a-honest")
    classes.modules(root / "b-looping", {"softmax": "def softmax(x, axis=-1):\n    while True:\n        pass\n"})
    classes.honest(root / "c-honest")
    out = tmp_path / "out"
    running = cli(root, out, "--time-limit", "1", wait=False)
    deadline = time.monotonic() + 120
    while not (out / "a-honest" / gradebook.RESULT_FILE).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    _wait_for_a_worker_computing(running.pid)  # b-looping's: the judge is in the middle of that student
    judge = _judge_of(running.pid)
    started = _started(descendants(running.pid))  # the judge, the fork servers' copies, b-looping's worker
    os.kill(judge, signal.SIGKILL)
    _, errors = running.communicate(timeout=300)
    assert running.returncode == 0, errors
    deadline = time.monotonic() + 5  # a copy waits 2 s for its workers before it goes, and takes them along
    while (left := _started(started).items() & started.items()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, [descendants(1).get(pid) for pid, _ in left]
    found = rows(out)
    assert (found["a-honest"]["status"], found["c-honest"]["status"]) == ("ok", "ok"), found
    assert found["b-looping"]["status"] == "timeout" and float(found["b-looping"]["score"]) < MAX, found
    before = marks(out)
    again = cli(root, out, "--time-limit", "1")  # the same settings: another limit would grade everyone again
    assert again.returncode == 0 and marks(out) == before, again.stderr


def test_a_student_who_waits_leaves_the_processor_to_the_others(tmp_path):
    """With one job, a student whose call sleeps until its limit stops it (3 s, so 6 s of waiting) holds no
    processor: their judge says so, a second judge grades the two students after them meanwhile, and the sleeper
    is still stopped, with the reason."""
    from grader.engine.options import Options

    folders = {"1-sleeper": make_submission(tmp_path / "sleeper", {"softmax": SLEEPER}),
               "2-right": make_submission(tmp_path / "right"), "3-right": make_submission(tmp_path / "also-right")}
    exercises = [registry.exercise("softmax")]
    finished = []
    stopped = batch_engine.grade_class([intake.Student(student, str(folder)) for student, folder in folders.items()],
                                       1, exercises, options.pytest_command(exercises, Options(time_limit=3.0)),
                                       lambda student, result: finished.append((student.id, result)), tmp_path)
    assert stopped == ""
    assert [student for student, _ in finished] == ["2-right", "3-right", "1-sleeper"]
    assert all(result.score == result.max_score for _, result in finished[:2])
    messages = {check.message for exercise in finished[2][1].exercises for check in exercise.checks}
    assert any("waited for more than 6 s without computing" in message for message in messages), messages


SLEEPER = """
import time

def softmax(scores):
    time.sleep(600)
"""


def test_a_result_that_cannot_be_written_costs_its_student_alone(tmp_path):
    """The engine's batch hands each result to the caller's ``record``; one that raises (a full disk, a
    name the file system refuses) makes that student crashed, with why, and the class goes on."""
    root = tmp_path / "submissions"
    for name in ("a", "b", "c"):
        classes.honest(root / name)
    students = detect.read(root.resolve()).students
    recorded = {}

    def record(student, result):
        if student.id == "b" and "b" not in recorded:
            recorded["b"] = None
            raise OSError(28, "No space left on device")
        recorded[student.id] = result

    args = grade.parser().parse_args(["unused", "--out", str(tmp_path / "out"), "--time-limit", "30", *OPTIONS])
    exercises = options.chosen_exercises(args)
    pytest_args = grade.judge_arguments(args, exercises)
    assert batch_engine.grade_class(students, 1, exercises, pytest_args, record, workdir=tmp_path) == ""
    assert [recorded[name].status for name in ("a", "b", "c")] == ["ok", "crashed", "ok"]
    assert recorded["a"].score == recorded["c"].score == MAX and recorded["b"].score == 0
    assert recorded["b"].max_score == MAX and recorded["b"].submission == "b"
    assert all("OSError: [Errno 28] No space left on device" in item.message
               for exercise in recorded["b"].exercises for item in exercise.checks)


def _started(pids) -> dict[int, str]:
    """When each of ``pids`` that still runs was started (a pid used again is another process)."""
    found = {}
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            if fields[0] != "Z":
                found[pid] = fields[19]
    return found


def _wait_for_a_worker_computing(coordinator: int, seconds: float = 0.3):
    """Wait (for the state, not the clock) until a learner's worker under ``coordinator`` has computed for
    ``seconds``: a worker runs in a scratch folder of its own, and only a looping student's computes that long."""
    ticks, deadline = seconds * os.sysconf("SC_CLK_TCK"), time.monotonic() + 120
    while time.monotonic() < deadline:
        for pid in descendants(coordinator):
            with contextlib.suppress(OSError, ValueError, IndexError):
                fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
                if "/scratch-" in os.readlink(f"/proc/{pid}/cwd") and int(fields[11]) + int(fields[12]) >= ticks:
                    return
        time.sleep(0.05)
    raise AssertionError("no worker computed for its student")


def _judge_of(coordinator: int) -> int:
    """The pid of the coordinator's one judge (a child that serves students), waiting for it to start."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        children = Path(f"/proc/{coordinator}/task/{coordinator}/children").read_text().split()
        for child in children:
            if b"serve" in Path(f"/proc/{child}/cmdline").read_bytes():
                return int(child)
        time.sleep(0.05)
    raise AssertionError("no judge started")


# -- the intake, without grading -----------------------------------------------------------------


@pytest.mark.parametrize("trigger", classes.ZIP_TRIGGERS)
def test_unpacking_refuses_a_bad_zip_in_one_line(trigger, tmp_path):
    path = classes.TRIGGERS[trigger](tmp_path)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    with pytest.raises(ValueError) as refused:
        intake.unpacked(intake.Student(trigger, str(path), zipped=True), scratch)
    assert "\n" not in str(refused.value) and len(str(refused.value)) <= intake.REASON_CHARS


def test_unpacking_bounds_what_a_zip_holds(tmp_path):
    def unpack(path: Path):
        (tmp_path / path.stem).mkdir()
        return intake.unpacked(intake.Student(path.stem, str(path), zipped=True), tmp_path / path.stem)

    honest = unpack(classes.honest_zip(tmp_path / "honest.zip"))
    assert (honest / "softmax.py").read_text() == classes.reference("softmax")
    bomb = classes.zipped(tmp_path / "bomb.zip", {"softmax.py": " " * (intake.MAX_BYTES + 1)}, zipfile.ZIP_DEFLATED)
    assert bomb.stat().st_size < 2**20
    with pytest.raises(ValueError, match="more than 500 files or 20 MB"):
        unpack(bomb)
    many = classes.zipped(tmp_path / "many.zip", {f"m{number}.py": "" for number in range(intake.MAX_FILES + 1)})
    with pytest.raises(ValueError, match="more than 500 files"):
        unpack(many)
    with pytest.raises(ValueError, match="would land outside it"):
        unpack(classes.zipped(tmp_path / "outside.zip", {"../../escaped.py": "x = 1\n"}))
    with pytest.raises(ValueError, match="longer than 255 bytes"):
        unpack(classes.zipped(tmp_path / "long.zip", {"x" * 300 + ".py": ""}))


def test_every_entry_is_a_student_but_tools_litter(tmp_path):
    for name in (".DS_Store", "._softmax.py", "Thumbs.db"):
        (tmp_path / name).write_text("")
    for name in ("__MACOSX", ".ipynb_checkpoints", ".hidden", "alice", "alice.zip"):
        (tmp_path / name).mkdir()
    (tmp_path / "bob.zip").write_bytes(b"")
    (tmp_path / ".zip").write_bytes(b"")
    (tmp_path / "carol").write_text("a file")
    export = detect.read(tmp_path)
    assert export.layout == "folders"
    assert sorted(ignored for ignored, _ in export.ignored) == sorted([".DS_Store", "._softmax.py", "Thumbs.db",
                                                                        "__MACOSX", ".ipynb_checkpoints"])
    by_id = {student.id: student for student in export.students}
    assert set(by_id) == {".hidden", "alice", "alice.zip", "bob", ".zip", "carol"}
    assert not by_id["alice.zip"].zipped and by_id["bob"].zipped and by_id[".zip"].zipped  # a folder named x.zip
    assert "is a file" in by_id["carol"].problem and not by_id[".hidden"].problem


@pytest.mark.parametrize("text", ["line one\nline two", "a lone \ud800 surrogate", "a bell \x07", "x" * 5000])
def test_a_reason_is_one_printable_encodable_line(text):
    reason = intake.one_line(text)
    assert reason.isprintable() and len(reason) <= intake.REASON_CHARS
    reason.encode("utf-8")
