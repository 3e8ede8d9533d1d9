"""``softlookup grade SUBMISSIONS --out OUT``: grade a class, one subfolder (or .zip) per student.

The command is a small coordinator. It starts ``--jobs`` judges, each one
pytest session that collects the checks once and then grades student after
student (:class:`_Batch`): pytest's start-up, the fork servers' imports and
every answer of the reference are paid once per judge, not per student. A
judge takes the next student whenever it is free, writes that student's
files itself (atomically, after every worker of that student is gone) and
reports one line. The coordinator shows progress and, at the end or on
Ctrl-C, writes the gradebook and the summary from every student graded so
far. Run it again and the students already graded are skipped (``--force``
grades them again), so an interrupted class resumes where it stopped.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from grader.commands import check, gradebook
from grader.engine import notebooks, plugin, registry
from grader.cli import Parser
from grader.engine.results import write_atomically

ZIP_LIMITS = (500, 20 * 2**20)  # members and bytes a student's zip may unpack to


@dataclass
class Student:
    id: str  # the folder's (or zip's) name, made printable
    path: str  # where the submission is; for a zip, the zip itself
    problem: str = ""  # why it cannot be graded at all, if it cannot


def printable(name: str) -> str:
    """A file name as a student id safe for a CSV cell and a folder: bytes that are not UTF-8, and
    characters that do not print, shown as \\xNN."""
    text = os.fsencode(name).decode("utf-8", errors="backslashreplace")
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)


def students(folder: Path) -> list[Student]:
    """One student per entry of ``folder``: a folder, or a .zip of one (as Gradescope and LMSs export them)."""
    found: dict[str, Student] = {}
    for entry in sorted(os.scandir(folder), key=lambda entry: entry.name):
        if entry.name.startswith("."):
            continue
        name = printable(entry.name)
        if entry.is_symlink():
            student = Student(name, entry.path, f"{name} is a link; put the student's folder itself there")
        elif entry.is_dir():
            student = Student(name, entry.path)
        elif entry.name.endswith(".zip"):
            student = Student(printable(entry.name[:-4]), entry.path)
        else:
            student = Student(name, entry.path, f"{name} is a file, not a folder or a .zip of one")
        if student.id in found:
            student.problem = f"two submissions are named {student.id} (a folder and a .zip?); keep one"
        found[student.id] = student
    return list(found.values())


def unpacked(student: Student, scratch: Path) -> Path:
    """The folder to grade: the student's own, or their zip unpacked; one lone subfolder is entered.

    Raises ValueError for a zip that is broken, too large or has paths that leave it.
    """
    folder = Path(student.path)
    if student.path.endswith(".zip"):
        folder = scratch / "unzipped"
        try:
            with zipfile.ZipFile(student.path) as archive:
                members = archive.infolist()
                if len(members) > ZIP_LIMITS[0] or sum(m.file_size for m in members) > ZIP_LIMITS[1]:
                    raise ValueError(f"the zip unpacks to more than {ZIP_LIMITS[0]} files or "
                                     f"{ZIP_LIMITS[1] // 2**20} MB")
                for member in members:
                    target = (folder / member.filename).resolve()
                    if folder.resolve() not in target.parents or (member.external_attr >> 28) == 0o12:
                        raise ValueError(f"the zip holds {member.filename!r}, which would land outside it")
                archive.extractall(folder)
        except (zipfile.BadZipFile, OSError) as error:
            raise ValueError(f"the zip cannot be read ({error})") from None
    entries = [entry for entry in folder.iterdir() if not entry.name.startswith((".", "__"))] if folder.is_dir() else []
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink():
        return entries[0]  # student/submission/softmax.py, as many exports nest it
    return folder


# -- a judge: one pytest session, student after student ---------------------------------------


class _Batch:
    """A pytest plugin that replaces the run loop: each student read from ``requests`` runs every check."""

    def __init__(self, requests, replies, out: Path):
        self.requests, self.replies, self.out = requests, replies, out

    @staticmethod
    def pytest_configure(config):
        config.stash[plugin.BATCH] = True

    @pytest.hookimpl(tryfirst=True)  # instead of pytest's own loop, which would run each check once
    def pytest_runtestloop(self, session):
        for line in self.requests:
            student = Student(**json.loads(line))
            with tempfile.TemporaryDirectory(prefix="softlookup-student-") as scratch:
                try:
                    folder, problem = unpacked(student, Path(scratch)), student.problem
                except ValueError as error:
                    folder, problem = Path(student.path), f"{student.id}: {error}"
                # Notebooks become modules before grading: the engine only ever grades modules.
                with notebooks.module_folder(folder, keep_going=True) as modules:
                    result = self.grade_one(session, modules, problem)
            result.submission = student.id
            gradebook.write_student(self.out / student.id, student.id, result)
            self.replies.write(json.dumps({"student": student.id, "score": result.score,
                                           "status": result.status}) + "\n")
            self.replies.flush()
        return True

    @staticmethod
    def grade_one(session, folder: Path, problem: str):
        plugin.begin_submission(session.config, folder, problem)
        for index, item in enumerate(session.items):
            following = session.items[index + 1] if index + 1 < len(session.items) else None
            item.ihook.pytest_runtest_protocol(item=item, nextitem=following)
            if session.shouldfail or session.shouldstop:
                raise session.Interrupted(session.shouldstop or session.shouldfail)
        return plugin.end_submission(session.config)


def serve(argv: list[str]) -> int:
    """A judge (``serve([FD, OUT, *PYTEST_ARGS])``): students from stdin, a line per student to FD."""
    replies, out, pytest_args = os.fdopen(int(argv[0]), "w"), Path(argv[1]), argv[2:]
    requests = os.fdopen(os.dup(0), "r")  # pytest's capture points descriptor 0 at /dev/null
    check.stop_cleanly_on_sigterm()
    with check.plugins_named_only(), open(os.devnull, "w") as quiet:
        sys.stdout = quiet  # pytest's own reporting is not wanted here; errors still reach stderr
        code = pytest.main([*pytest_args, *check.PYTEST_ARGS, "-o", "softlookup_table=false", "-p", "no:terminal"],
                           plugins=[_Batch(requests, replies, out)])
    return 0 if code in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED) \
        else int(code)


# -- the coordinator ------------------------------------------------------------------------------


def parser() -> Parser:
    p = Parser(prog="softlookup grade", description="Grade a class: one subfolder (or .zip) per student.")
    p.add_argument("submissions", type=Path, help="folder with one subfolder (or .zip) per student")
    p.add_argument("--out", type=Path, required=True, help="where the gradebook, summary and feedback go")
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="students graded at once (default 1)")
    check.add_grading_options(p)
    p.add_argument("--force", action="store_true", help="grade again students already graded in OUT")
    p.add_argument("--allow-unconfined", action="store_true",
                   help="grade even where this machine cannot confine student code fully (not recommended)")
    return p


def usage_problem(args) -> str | None:
    if not args.submissions.is_dir():
        return f"{args.submissions} is not a folder; give the folder with one subfolder (or .zip) per student"
    if args.out.exists() and not args.out.is_dir():
        return f"--out {args.out} is a file; give a folder for the gradebook and the feedback"
    if args.out.resolve() == args.submissions.resolve() or args.submissions.resolve() in args.out.resolve().parents:
        return "--out must not be inside the submissions folder (it would be graded as a student)"
    if args.jobs < 1:
        return f"--jobs must be 1 or more, not {args.jobs}"
    return check.grading_problem(args)


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    if problem := usage_problem(args):
        print(f"softlookup grade: {problem}", file=sys.stderr)
        return 2
    exercises = check.chosen_exercises(args)
    everyone = students(args.submissions.resolve())
    args.out.mkdir(parents=True, exist_ok=True)
    todo = [s for s in everyone if args.force or gradebook.read_student(args.out / s.id) is None]
    args.require_isolation = not args.allow_unconfined
    pytest_args = [*[str(path) for e in exercises for path in e.check_files(hidden=True)], *check.plugin_options(args)]
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    interrupted, failure = False, ""
    try:
        failure = _run_judges(todo, min(args.jobs, len(todo)), args.out.resolve(), pytest_args)
    except KeyboardInterrupt:
        interrupted = True
    graded = {s.id: found[1] for s in everyone if (found := gradebook.read_student(args.out / s.id))}
    names = [exercise.module for exercise in exercises]
    write_atomically(args.out / "grades.csv", gradebook.grades_csv(graded, names))
    write_atomically(args.out / "summary.md", gradebook.summary_markdown(graded))
    write_atomically(args.out / "summary.html", gradebook.summary_html(graded))
    done = f"{len(graded)} of {len(everyone)} students graded; gradebook in {args.out / 'grades.csv'}"
    if failure:
        print(f"softlookup grade: {failure}", file=sys.stderr)
        print(done, file=sys.stderr)
        return 2
    if interrupted:
        print(f"Interrupted: {done}. Run the same command again to grade the rest.", file=sys.stderr)
        return 130
    print(done)
    return 0


def _run_judges(todo: list[Student], jobs: int, out: Path, pytest_args: list[str]) -> str:
    """Feed students to ``jobs`` judges until all are graded; the error of a judge that failed, if one did."""
    judges, selector = [], selectors.DefaultSelector()
    queue = list(todo)
    progress = Progress(TextColumn("grading"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TextColumn("left"), TimeRemainingColumn(), disable=not sys.stdout.isatty())
    try:
        for _ in range(jobs):
            judge = _Judge(out, pytest_args)
            judges.append(judge)
            selector.register(judge.replies, selectors.EVENT_READ, judge)
            judge.give(queue.pop(0) if queue else None)
        with progress:
            task = progress.add_task("grading", total=len(todo))
            busy = len(judges)
            while busy:
                for key, _ in selector.select():
                    judge = key.data
                    line = judge.replies.readline()
                    if not line:  # the judge stopped
                        selector.unregister(judge.replies)
                        busy -= 1
                        if judge.current is not None:
                            return judge.failure()
                        continue
                    progress.advance(task)
                    judge.give(queue.pop(0) if queue else None)
        return ""
    finally:
        for judge in judges:
            judge.stop()


class _Judge:
    """A judge process and the student it is grading."""

    def __init__(self, out: Path, pytest_args: list[str]):
        reader, writer = os.pipe()
        self.errors = tempfile.TemporaryFile()
        same_kit = (f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r}); "
                    "from grader.commands.grade import serve; sys.exit(serve(sys.argv[1:]))")  # the coordinator's own code
        self.process = subprocess.Popen(
            [sys.executable, "-c", same_kit, str(writer), str(out), *pytest_args],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self.errors, pass_fds=[writer], text=True,
            cwd=out)
        os.close(writer)
        self.replies = os.fdopen(reader, "r")
        self.current: Student | None = None

    def give(self, student: Student | None):
        self.current = student
        if student is None:
            self.process.stdin.close()  # no more students: the judge finishes its session and exits
        else:
            self.process.stdin.write(json.dumps(student.__dict__) + "\n")
            self.process.stdin.flush()

    def failure(self) -> str:
        self.process.wait()
        self.errors.seek(0)
        lines = [line for line in self.errors.read().decode(errors="replace").splitlines() if line.strip()]
        errors = [line.removeprefix("ERROR: ") for line in lines if line.startswith("ERROR: ")]
        why = errors[0] if errors else (lines[-1] if lines else f"exit status {self.process.returncode}")
        return f"a judge stopped while grading {self.current.id}: {why}"

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()  # a judge stops cleanly on SIGTERM, which nohup does not ignore
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.replies.close()
        self.errors.close()


