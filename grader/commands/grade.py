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

No student stops the class. Whatever grading one student raises (a zip
that cannot be read, a notebook the judge cannot turn into a module, a
text it cannot write) becomes that student's result, ``invalid`` or
``crashed`` with a one-line reason, and the judge goes on; a judge that
dies in the middle of a student costs that student alone, recorded as
crashed, and a new judge takes the rest. A crash is a result like any
other, so a rerun does not try that student first again.
"""

from __future__ import annotations

import dataclasses
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

import pytest
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from grader.commands import check
from grader.reports import gradebook
from grader.engine import notebooks, options, plugin, registry, runner, sandbox
from grader.engine.options import Options
from grader.engine.results import CheckResult, SubmissionResult, write_atomically
from grader.platforms import NAME_BYTES, Intake, Student, detect, escaped, is_litter
from grader.usage import Parser, UsageError

ZIP_LIMITS = (500, 20 * 2**20)  # members and bytes a student's zip (or files, or a zip in their zip) may come to
ZIP_DEPTH = 16  # folders a zip member may sit in: an export nests its modules two or three deep
REASON_CHARS = 300  # a reason written into a student's files is one line of at most this
SUBMISSION = "your submission"  # how a message names the folder graded: the student's, or one unpacked for them
NOT_FOUND = ("missing", "invalid")  # why a check had nothing to grade: no module, or no readable submission


def one_line(text, limit: int = REASON_CHARS) -> str:
    """A reason to write into a student's files or onto a terminal: one line, printable, encodable, capped.

    Reasons quote what failed, and what failed may quote the student (an exception's message, a zip member's
    name): any of that may hold line breaks, control characters or a lone surrogate.
    """
    line = escaped(" ".join(str(text).split()))
    return line if len(line) <= limit else line[: limit - 1] + "…"


def described(error: BaseException) -> str:
    """An exception as one line that names it: ``UnicodeEncodeError: ...``, ``zlib.error: ...``."""
    kind = type(error)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
    return one_line(f"{name}: {error}")


def unpacked(student: Student, scratch: Path) -> Path:
    """The folder to grade: the student's own, their zip unpacked, or (a flat export's student) their files
    gathered under the names they gave them; then, as deep as an export nests it, the folder that holds the
    exercises.

    Inside, a lone subfolder is entered (student/submission/softmax.py) and a lone zip is unpacked (a
    student who uploaded their work zipped) once; a folder holding ``assignments/`` with the exercises in it
    (a clone of the student bundle) gives that. Raises ValueError, with a one-line reason, for a zip that
    cannot be read, is too large, or has a path that leaves it, goes too deep or is too long.
    """
    folder = Path(student.path)
    if student.files or not student.path:
        folder = _gathered(student.files, scratch / "files")
    elif student.zipped:
        folder = scratch / "unzipped"
        _unzip(Path(student.path), folder)
    zip_inside = scratch / "zip-inside"
    for _ in range(ZIP_DEPTH):
        if (found := check.exercise_folder(folder)) is not None:
            return found
        entries = [entry for entry in folder.iterdir() if not is_litter(entry.name)
                   and not entry.name.startswith((".", "__"))] if folder.is_dir() else []
        if len(entries) != 1 or entries[0].is_symlink():
            return folder
        if entries[0].is_dir():
            folder = entries[0]
        elif entries[0].name.lower().endswith(".zip") and not zip_inside.exists():
            _unzip(entries[0], zip_inside)
            folder = zip_inside
        else:
            return folder
    return folder


def _gathered(files: dict[str, str], folder: Path) -> Path:
    """``folder``, made of ``files`` (each name to grade it under, and where it is), within :data:`ZIP_LIMITS`.

    The names are plain file names (the platforms make sure); a link is never read through.
    """
    folder.mkdir()
    allowed = ZIP_LIMITS[1]
    for name, path in files.items():
        try:
            with open(path, "rb", opener=lambda place, flags: os.open(place, flags | os.O_NOFOLLOW)) as source:
                allowed -= os.fstat(source.fileno()).st_size
                if allowed < 0:
                    raise ValueError(f"the files come to more than {ZIP_LIMITS[1] // 2**20} MB")
                with open(folder / name, "wb") as sink:
                    shutil.copyfileobj(source, sink)
        except OSError as error:
            raise ValueError(f"the file {name} cannot be read ({described(error)})") from None
    return folder


class ZipRefused(ValueError):
    """A zip that can be read but is not unpacked: too large, or a path that leaves it or is absurd."""


# What reading an untrusted zip can raise: a broken archive, a compression method zipfile lacks
# (NotImplementedError), an encrypted member (RuntimeError), a corrupt stream (zlib.error, EOFError,
# OSError, lzma.LZMAError, a ValueError), a path the file system refuses (OSError).
ZIP_FAILURES = (zipfile.BadZipFile, NotImplementedError, RuntimeError, EOFError, OSError, ValueError)


def _unzip(path: Path, folder: Path):
    """Unpack the zip at ``path`` into ``folder``, member by member, within :data:`ZIP_LIMITS`.

    Every member's path is checked before anything is written, and every member is read in
    bounded chunks, so a header that lies about the sizes unpacks no more than the limit.
    """
    import lzma
    import zlib

    try:
        if path.stat().st_size > ZIP_LIMITS[1]:
            raise ZipRefused(f"the zip is larger than {ZIP_LIMITS[1] // 2**20} MB")
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            if len(members) > ZIP_LIMITS[0] or sum(m.file_size for m in members) > ZIP_LIMITS[1]:
                raise ZipRefused(f"the zip unpacks to more than {ZIP_LIMITS[0]} files or "
                                 f"{ZIP_LIMITS[1] // 2**20} MB")
            places = [(member, _place(member)) for member in members]
            folder.mkdir()
            written = 0
            for member, parts in places:
                written += _extract(archive, member, folder.joinpath(*parts), ZIP_LIMITS[1] - written)
    except ZipRefused:
        raise
    except (*ZIP_FAILURES, zlib.error, lzma.LZMAError) as error:
        raise ValueError(f"the zip cannot be read ({described(error)})") from None


def _place(member: zipfile.ZipInfo) -> tuple[str, ...]:
    """Where a member goes, as the folders and name under the unpacked folder; ZipRefused if nowhere safe."""
    shown = one_line(repr(member.filename), 120)
    parts = PurePosixPath(member.filename).parts
    if member.filename.startswith("/") or ".." in parts or (member.external_attr >> 28) == 0o12:
        raise ZipRefused(f"the zip holds {shown}, which would land outside it")
    if len(parts) > ZIP_DEPTH:
        raise ZipRefused(f"the zip holds a path {len(parts) - 1} folders deep ({shown}); at most {ZIP_DEPTH - 1} "
                         "are unpacked")
    if any(len(part.encode("utf-8", errors="replace")) > NAME_BYTES for part in parts):
        raise ZipRefused(f"the zip holds a name longer than {NAME_BYTES} bytes ({shown})")
    return parts


def _extract(archive: zipfile.ZipFile, member: zipfile.ZipInfo, target: Path, allowed: int) -> int:
    """Write one member to ``target`` (a folder for a folder); the bytes written. ZipRefused past ``allowed``."""
    if member.is_dir():
        target.mkdir(parents=True, exist_ok=True)
        return 0
    target.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with archive.open(member) as source, open(target, "wb") as sink:
        while chunk := source.read(2**16):
            written += len(chunk)
            if written > allowed:
                raise ZipRefused(f"the zip unpacks to more than {ZIP_LIMITS[1] // 2**20} MB")
            sink.write(chunk)
    return written


def crashed(student: str, exercises: list[registry.Exercise], reason: str) -> SubmissionResult:
    """The result of a student whose grading stopped: every exercise lost, with the reason in one line.

    Written in place of the student's grading, so a rerun does not try them again (``--force`` does):
    one student who stops a judge must not stop every rerun of the class. One failed entry per exercise
    carries all of its points, so the student's maximum stays the class's.
    """
    result = SubmissionResult(student)
    for exercise in exercises:
        result.add(CheckResult(exercise=exercise.module, check="grading", case="", title="Graded to the end",
                               outcome="failed", points=0.0, max_points=float(exercise.max_points),
                               message=f"the grading of this submission stopped: {one_line(reason)}",
                               error="crash"), exercise.title)
    return result


def identified(result: SubmissionResult, student: Student) -> SubmissionResult:
    """``result`` as the student's, with who they are as the export says: every file written from it shows it."""
    result.submission, result.name, result.email, result.late = student.id, student.name, student.email, student.late
    return result


# -- a judge: one pytest session, student after student ---------------------------------------


class _SessionBroken(Exception):
    """Something raised inside pytest's own run of a check: the session's state can no longer be trusted."""


class _Batch:
    """A pytest plugin that replaces the run loop: each student read from ``requests`` runs every check.

    It answers the coordinator one JSON line at a time: ``ready`` once the checks are collected, then per
    student either its score and status (its files written) or ``crashed`` with a one-line reason (the
    coordinator writes that result; with ``stopping`` when this judge can grade no one else), or ``fatal``
    when no student can be graded on this machine.
    """

    def __init__(self, requests, replies, out: Path):
        self.requests, self.replies, self.out = requests, replies, out

    @staticmethod
    def pytest_configure(config):
        config.stash[plugin.BATCH] = True

    @pytest.hookimpl(tryfirst=True)  # instead of pytest's own loop, which would run each check once
    def pytest_runtestloop(self, session):
        self.reply(ready=True)
        for line in self.requests:
            student = Student(**json.loads(line))
            try:
                result = self.graded(session, student)
                gradebook.write_student(gradebook.student_folder(self.out, student.id), student.id, result)
            except sandbox.KitError as error:  # raised only where no student's code runs: the machine's fault
                self.reply(fatal=one_line(error))
                return True
            except _SessionBroken as error:  # pytest's state is unknown now: this judge stops, another takes the rest
                self.reply(student=student.id, crashed=described(error.__cause__), stopping=True)
                return True
            except Exception as error:  # anything one submission makes happen is that submission's result
                self.reply(student=student.id, crashed=described(error))
            else:
                self.reply(student=student.id, score=result.score, status=result.status)
        return True

    def reply(self, **fields):
        self.replies.write(json.dumps(fields) + "\n")
        self.replies.flush()

    def graded(self, session, student: Student):
        """Unpack, turn notebooks into modules, grade: the student's result."""
        with tempfile.TemporaryDirectory(prefix="softlookup-student-", ignore_cleanup_errors=True) as scratch:
            folder, problem = Path(scratch), student.problem  # a submission with a problem is not read at all
            if not problem:
                try:
                    folder = unpacked(student, Path(scratch))
                except ValueError as error:
                    problem = str(error)
            if problem:
                result = self.grade_one(session, folder, problem)
            else:  # notebooks become modules before grading: the engine only ever grades modules
                with notebooks.module_folder(folder, keep_going=True) as modules:
                    result = self.grade_one(session, modules, problem)
        return identified(result, student)

    @staticmethod
    def grade_one(session, folder: Path, problem: str):
        plugin.begin_submission(session.config, folder, problem, shown=SUBMISSION)
        try:
            for index, item in enumerate(session.items):
                following = session.items[index + 1] if index + 1 < len(session.items) else None
                item.ihook.pytest_runtest_protocol(item=item, nextitem=following)
                if session.shouldfail or session.shouldstop:
                    raise session.Interrupted(session.shouldstop or session.shouldfail)
        except Exception as error:
            raise _SessionBroken() from error
        finally:
            result = plugin.end_submission(session.config)  # the student's workers stop whatever happened
        return result


def serve(argv: list[str]) -> int:
    """A judge (``serve([FD, OUT, *PYTEST_ARGS])``): students from stdin, a line per student to FD."""
    replies, out, pytest_args = os.fdopen(int(argv[0]), "w"), Path(argv[1]), argv[2:]
    requests = os.fdopen(os.dup(0), "r")  # pytest's capture points descriptor 0 at /dev/null
    runner.stop_cleanly_on_sigterm()
    with runner.plugins_named_only(), open(os.devnull, "w") as quiet:
        sys.stdout = quiet  # pytest's own reporting is not wanted here; errors still reach stderr
        code = pytest.main([*pytest_args, "-p", "no:terminal"],
                           plugins=[_Batch(requests, replies, out)])
    if code == pytest.ExitCode.INTERRUPTED:
        return 130
    return 0 if code in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED) \
        else int(code)


# -- the coordinator ------------------------------------------------------------------------------


def parser() -> Parser:
    p = Parser(prog="softlookup grade", description="Grade a class: a course platform's export of submissions, or "
                                                    "one subfolder (or .zip) per student.")
    p.add_argument("submissions", type=Path,
                   help="the export's folder (Canvas, Moodle, Blackboard, Gradescope, GitHub Classroom clones) or a "
                        "folder with one subfolder (or .zip) per student")
    p.add_argument("--out", type=Path, required=True, help="where the gradebook, summary and feedback go")
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="students graded at once (default 1)")
    p.add_argument("--layout", choices=list(detect.LAYOUTS),
                   help="read SUBMISSIONS as this layout instead of the one detected")
    p.add_argument("--assignment", default="softlookup", metavar="NAME",
                   help="the assignment's column in Canvas's import file: \"<title> (<assignment id>)\" fills that "
                        "assignment (default: softlookup, which Canvas adds as a new assignment)")
    check.add_exercise_option(p)
    options.declare(p.add_argument, ("solutions", "time_limit", "memory_limit", "time_budget"))
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
    return Options.of(args).problem()


def judge_arguments(args, exercises: list[registry.Exercise]) -> list[str]:
    """What every judge passes to pytest: the chosen exercises' checks, hidden ones included, and the options;
    full confinement is required unless --allow-unconfined."""
    return runner.pytest_args(exercises, dataclasses.replace(Options.of(args), require_isolation=not args.allow_unconfined))


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    if problem := usage_problem(args):
        raise UsageError(problem)
    exercises = check.chosen_exercises(args)
    intake = detect.read(args.submissions.resolve(), args.layout)
    print(f"softlookup grade: {escaped(intake.described())}", file=sys.stderr)
    if not intake.students:
        print(f"softlookup grade: there is no student to grade in {args.submissions}; give the folder of the "
              "platform's export (unzipped), or one with a subfolder (or .zip) per student", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    todo = [s for s in intake.students if args.force or _result_in(args.out, s) is None]
    if not todo:
        print(f"softlookup grade: nothing new: all {len(intake.students)} students were graded in {args.out} "
              "before (--force grades them again)", file=sys.stderr)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    interrupted, failure = False, ""
    try:
        failure = _run_judges(todo, min(args.jobs, len(todo)), args.out.resolve(), exercises,
                              judge_arguments(args, exercises))
    except KeyboardInterrupt:
        interrupted = True
    except Exception as error:  # the coordinator's own fault: the gradebook of those graded is still written
        failure = f"the batch stopped ({described(error)})"
    graded = write_gradebook(args.out, intake, exercises, args.assignment)
    written = ", ".join(str(args.out / name) for name in ("grades.csv", *_import_file(intake.layout)))
    done = f"{len(graded)} of {len(intake.students)} students graded; gradebook in {written}"
    if failure:
        raise UsageError(f"{failure}; {done}")
    if interrupted:
        print(f"Interrupted: {done}. Run the same command again to grade the rest.", file=sys.stderr)
        return 130
    print(done)
    if not any(map(_found_anything, graded.values())):
        print(f"softlookup grade: none of the {len(intake.students)} students could be graded: no exercise module "
              f"was found in any submission read as {intake.title} (see their feedback.md; --layout reads the "
              "folder as another layout)", file=sys.stderr)
        return 1
    return 0


def write_gradebook(out: Path, intake: Intake, exercises: list[registry.Exercise],
                    assignment: str) -> dict[str, SubmissionResult]:
    """grades.csv, summary.md, summary.html and the platform's import file from every student graded so far.

    Who a student is comes from the export read now, so a corrected export renames them without a regrade.
    """
    graded = {s.id: identified(found, s) for s in intake.students if (found := _result_in(out, s)) is not None}
    gradebook.write_class(out, graded, [exercise.module for exercise in exercises])
    for name in _import_file(intake.layout):
        write_atomically(out / name, detect.LAYOUTS[intake.layout].gradebook_import(graded, assignment))
    return graded


def _import_file(layout: str) -> list[str]:
    """The gradebook import the platform of ``layout`` takes back, if it takes one."""
    platform = detect.LAYOUTS[layout]
    return [platform.IMPORT_FILE] if platform.IMPORT_FILE else []


def _found_anything(result: SubmissionResult) -> bool:
    """Whether grading found something of the student's to grade: a module, even one that fails every check."""
    return any(item.error not in NOT_FOUND for exercise in result.exercises for item in exercise.checks)


def _result_in(out: Path, student: Student) -> SubmissionResult | None:
    """The student's complete result in ``out``, if they were graded (or recorded as crashed) already."""
    found = gradebook.read_student(gradebook.student_folder(out, student.id))
    return found[1] if found else None


def _run_judges(todo: list[Student], jobs: int, out: Path, exercises: list[registry.Exercise],
                pytest_args: list[str]) -> str:
    """Feed students to ``jobs`` judges until all are graded; why the batch stopped, if it did."""
    batch = _Coordinator(todo, out, exercises, pytest_args)
    progress = Progress(TextColumn("grading"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TextColumn("left"), TimeRemainingColumn(), disable=not sys.stdout.isatty())
    try:
        for _ in range(jobs):
            batch.start_judge()
        with progress:
            task = progress.add_task("grading", total=len(todo))
            while batch.selector.get_map():
                for key, _ in batch.selector.select():
                    failure, finished = batch.handle(key.data)
                    if failure:
                        return failure
                    progress.advance(task, finished)
        return ""
    finally:
        batch.stop()


class _Coordinator:
    """The students waiting, the judges grading them, and what each judge's replies mean.

    A judge that stops in the middle of a student (killed, or its pytest session broken) costs that
    student alone: they are recorded as crashed with the judge's last word, and a new judge takes the
    rest. Only a judge that cannot start, or one that finds this machine unable to grade anyone
    (``fatal``), stops the batch.
    """

    def __init__(self, todo: list[Student], out: Path, exercises: list[registry.Exercise], pytest_args: list[str]):
        self.queue, self.out, self.exercises, self.pytest_args = list(todo), out, exercises, pytest_args
        self.selector = selectors.DefaultSelector()
        self.judges: list[_Judge] = []

    def start_judge(self):
        judge = _Judge(self.out, self.pytest_args)
        self.judges.append(judge)
        self.selector.register(judge.replies, selectors.EVENT_READ, judge)
        judge.give(self.queue.pop(0) if self.queue else None)

    def handle(self, judge: "_Judge") -> tuple[str, int]:
        """Act on the judge's next reply: (why the batch must stop, or "", how many students it finished)."""
        reply = judge.next_reply()
        if reply is None:  # the judge stopped
            if judge.current is None:  # it had finished
                self.retire(judge)
                return "", 0
            if judge.interrupted():  # Ctrl-C reached the judges first: the grading stops, nobody is to blame
                raise KeyboardInterrupt
            if not judge.ready:
                return judge.failure(), 0
            reply = {"crashed": judge.why(), "stopping": True}
        if "fatal" in reply:
            return f"a judge stopped while grading {judge.current.id}: {one_line(reply['fatal'])}", 0
        if "ready" in reply:
            judge.ready = True
            return "", 0
        if "crashed" in reply:
            _record_crash(self.out, judge.current, self.exercises, reply["crashed"])
        if reply.get("stopping"):
            self.retire(judge)
        else:
            judge.give(self.queue.pop(0) if self.queue else None)
        return "", 1

    def retire(self, judge: "_Judge"):
        """Give this judge no more students; while students wait, a new judge takes its place."""
        self.selector.unregister(judge.replies)
        judge.current = None
        if self.queue:
            self.start_judge()

    def stop(self):
        for judge in self.judges:
            judge.stop()


def _record_crash(out: Path, student: Student, exercises: list[registry.Exercise], reason: str):
    """Write ``student``'s result as crashed, over whatever a judge left of their files."""
    folder = gradebook.student_folder(out, student.id)
    gradebook.write_student(folder, student.id, identified(crashed(student.id, exercises, reason), student))
    for leftover in folder.glob(".*.tmp"):  # a judge killed while writing leaves its temporary file
        leftover.unlink(missing_ok=True)


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
        self.ready = False  # it has collected the checks and reads students

    def give(self, student: Student | None):
        self.current = student
        try:
            if student is None:
                self.process.stdin.close()  # no more students: the judge finishes its session and exits
            else:
                self.process.stdin.write(json.dumps(student.__dict__) + "\n")
                self.process.stdin.flush()
        except (BrokenPipeError, ValueError):  # it has stopped already; its end of the replies says so next
            pass

    def next_reply(self) -> dict | None:
        """The judge's next reply, or None once it has stopped (a line cut short by its death included)."""
        line = self.replies.readline()
        return json.loads(line) if line.endswith("\n") else None

    def interrupted(self) -> bool:
        """Whether the judge stopped because it was interrupted (Ctrl-C reaches every process of a terminal)."""
        return self.process.wait() in (130, -signal.SIGINT)

    def failure(self) -> str:
        """Why a judge that never started grading stopped: a usage error of pytest's, or its last line."""
        lines = self._error_lines()
        errors = [line.removeprefix("ERROR: ") for line in lines if line.startswith("ERROR: ")]
        why = errors[0] if errors else (lines[-1] if lines else self._exit())
        return one_line(f"a judge stopped while grading {self.current.id}: {why}")

    def why(self) -> str:
        """Why a judge stopped in the middle of a student, in one line: its last error line, or how it ended."""
        lines = [line.removeprefix("INTERNALERROR> ") for line in self._error_lines()]
        return one_line(f"the judge grading it stopped ({lines[-1] if lines else self._exit()})")

    def _error_lines(self) -> list[str]:
        self.process.wait()
        self.errors.seek(0)
        return [line for line in self.errors.read().decode(errors="replace").splitlines() if line.strip()]

    def _exit(self) -> str:
        code = self.process.returncode
        return f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()  # a judge stops cleanly on SIGTERM, which nohup does not ignore
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        try:
            self.process.stdin.close()
        except (BrokenPipeError, ValueError):
            pass
        self.replies.close()
        self.errors.close()
