"""The result model: check -> exercise -> submission, the one thing every format is made from.

The pytest plugin fills it in (or :func:`crashed`, for a submission whose
grading stopped); the terminal table, the notebook's HTML table,
Gradescope's results.json, the gradebook and anything added later are
functions of a :class:`SubmissionResult` and nothing else: they live in
:mod:`grader.reports`.

Two rules hold for every format. What a student sees goes through
:func:`redacted` (one function, so results.json, feedback.md and
feedback.html cannot disagree): a hidden check says that it failed and why in
general terms, never its message, its case (which names shapes) or what was
printed during it. And every text is :func:`writable` where it is written:
what a learner's code sent was cleaned as it crossed into the judge
(:func:`grader.engine.confinement.clean.clean_text`), but a name from a course's export,
a file name a message quotes or a result read back from disk was not, and a
lone surrogate in any of them must not stop a file or a terminal.
:func:`write_atomically` writes UTF-8 with anything unencodable shown as a
backslash escape, and the renderers take the model escaped the same way
(:func:`writable_copy`), each then escaping for its own format
(:mod:`grader.reports.inert`, :mod:`grader.reports.markup`).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field, fields
from enum import StrEnum
from pathlib import Path


class ErrorKind(StrEnum):
    """Why the learner's code gave a check no answer (:attr:`CheckResult.error`, ``SubmissionError.kind``).

    The one vocabulary every table of kinds is keyed by, here beside the result
    that carries it (and that every report reads) rather than beside the
    exception, so that reading one imports no numpy. A :class:`StrEnum`: JSON,
    CSV and results.json hold the same plain strings as ever, and a kind read
    back from them compares (and hashes) equal to its member.
    """

    # What a worker reports, judged on its side from the exception's type (worker.describe).
    NOT_IMPLEMENTED = "not_implemented"  # the learner's own code raised NotImplementedError: a stub, not started
    EXCEPTION = "exception"  # any other exception, a library's NotImplementedError included
    SYNTAX = "syntax"
    MISSING_FUNCTION = "missing_function"  # the module has no function of the name a check calls
    EXIT = "exit"
    MEMORY = "memory"
    ENCODING = "encoding"  # a value that cannot cross the boundary as plain data
    REFUSED = "refused"  # the confinement refused a network connection, a process or a file
    HUNG = "hung"  # a call into a function that ran past its time limit earlier in this grading
    # What the judge finds itself.
    IMPORT = "import"  # an exception raised while the module was imported: no function of it could be called
    TIMEOUT = "timeout"
    BUDGET = "budget"  # the submission's time budget was spent
    DISK = "disk"  # the worker wrote more to its scratch folder than it may keep there
    CRASH = "crash"
    JUDGE_DIED = "judge_died"  # the judge's own process was killed while grading this student, twice
    MISSING = "missing"
    INVALID = "invalid"
    KIT = "kit"  # the grader's own fault: a check it could not judge (never a SubmissionError's)


WORKER_KINDS = frozenset({ErrorKind.NOT_IMPLEMENTED, ErrorKind.EXCEPTION, ErrorKind.SYNTAX, ErrorKind.EXIT,
                          ErrorKind.MEMORY, ErrorKind.ENCODING, ErrorKind.REFUSED, ErrorKind.HUNG,
                          ErrorKind.MISSING_FUNCTION, ErrorKind.INVALID})  # a worker's say

# Every way a submission failed to run, from best to worst: the gradebook's status column, feedback's status line,
# the summary's counts. ``not-started`` and ``missing`` are quiet: a submission reads one of them only where
# nothing louder happened, so that a loop is never hidden behind a stub left as it was handed out.
STATUSES = ["ok", "not-started", "missing", "timeout", "memory", "disk", "crashed", "judge-died", "missing-function",
            "import-error", "syntax-error", "invalid"]
QUIET_STATUSES = ("not-started", "missing")
ERROR_STATUS = {ErrorKind.TIMEOUT: "timeout", ErrorKind.BUDGET: "timeout", ErrorKind.MEMORY: "memory",
                ErrorKind.DISK: "disk", ErrorKind.CRASH: "crashed", ErrorKind.JUDGE_DIED: "judge-died",
                ErrorKind.EXIT: "crashed", ErrorKind.MISSING: "missing", ErrorKind.INVALID: "invalid",
                ErrorKind.SYNTAX: "syntax-error", ErrorKind.IMPORT: "import-error",
                ErrorKind.MISSING_FUNCTION: "missing-function"}


def points_total(points) -> float:
    """A sum of points, rounded so that fractions of a point (a third per case) add up exactly.

    Without it 17 cases of a point's thirds sum to 16.999999999999993, and a full mark
    would compare unequal to the exercise's maximum.
    """
    return round(sum(points), 9)


@dataclass
class CheckResult:
    exercise: str
    check: str  # the test function's name, as in the registry
    case: str  # the parameter id, or "" for an unparametrised check
    title: str  # first line of the check's docstring
    outcome: str  # "passed", "failed" or "skipped"
    points: float
    max_points: float
    message: str = ""
    hidden: bool = False
    printed: str = ""  # what the learner's code printed during the check (capped)
    error: str = ""  # an ErrorKind: why the learner's code gave no answer, or the grader's own fault; "" for none
    function: str = ""  # the learner's function the check called last: the one its verdict is about (hints follow it)
    mistake: str = ""  # the stable name of the mistake the verdict diagnoses (the exercise's registry lists them)

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"


@dataclass
class ExerciseResult:
    name: str
    title: str
    checks: list[CheckResult] = field(default_factory=list)

    @property
    def score(self) -> float:
        return points_total(check.points for check in self.checks)

    @property
    def max_score(self) -> float:
        return points_total(check.max_points for check in self.checks)

    @property
    def status(self) -> str:
        ran = [check for check in self.checks if check.outcome != "skipped"]
        if ran and all(not check.passed and check.error == ErrorKind.NOT_IMPLEMENTED for check in ran):  # by kind
            return "not started"
        if self.score >= self.max_score - 1e-9:
            return "done"
        return "in progress"

    @property
    def statuses(self) -> set[str]:
        """Every way this exercise's code failed to run (of :data:`STATUSES`, ``ok`` left out): an error of a
        check's that stopped the learner's code, or ``not-started`` where every check met a stub."""
        found = {ERROR_STATUS[check.error] for check in self.checks if check.error in ERROR_STATUS}
        return found | {"not-started"} if self.status == "not started" else found

    def grouped(self) -> dict[tuple[str, bool], list[CheckResult]]:
        """The cases of each check together, in the order they ran."""
        groups: dict[tuple[str, bool], list[CheckResult]] = {}
        for check in self.checks:
            groups.setdefault((check.check, check.hidden), []).append(check)
        return groups


@dataclass
class SubmissionResult:
    submission: str
    exercises: list[ExerciseResult] = field(default_factory=list)
    seconds: float = 0.0
    unprotected: list[str] = field(default_factory=list)  # protections this machine could not give the workers
    # Who submitted it, where a course platform's export says so (grader.platforms): for the gradebooks.
    name: str = ""
    email: str = ""
    late: bool = False
    edition: str = ""  # the kit that graded it (grader.engine.edition.kit_edition), where a class run records it

    @property
    def score(self) -> float:
        return points_total(exercise.score for exercise in self.exercises)

    @property
    def max_score(self) -> float:
        return points_total(exercise.max_score for exercise in self.exercises)

    @property
    def full_marks(self) -> bool:
        return self.max_score > 0 and self.score >= self.max_score - 1e-9

    @property
    def status(self) -> str:
        """What happened while grading, for a gradebook: the worst that the work handed in did (timeout, an
        exception at import, a syntax error, ...), else ``missing`` where something was not handed in, else
        ``not-started`` where a stub was handed in as it was given, else ``ok``.

        A student whose code looped reads ``timeout`` even where a module is
        missing too: a quiet status says that nothing else went wrong, so it
        never hides a loop behind "handed nothing in".
        """
        seen = {status for exercise in self.exercises for status in exercise.statuses}
        if loud := seen - set(QUIET_STATUSES):
            return max(loud, key=STATUSES.index)
        return max(seen, key=STATUSES.index, default="ok")

    def statuses(self) -> dict[str, list[str]]:
        """Every status but ``ok`` that some exercise had, in the order :attr:`status` ranks them (its own first,
        the quiet ones last), each with the exercises that had it."""
        found: dict[str, list[str]] = {}
        for exercise in self.exercises:
            for status in sorted(exercise.statuses):
                found.setdefault(status, []).append(exercise.name)
        return dict(sorted(found.items(), key=lambda item: (item[0] in QUIET_STATUSES, -STATUSES.index(item[0]))))

    def to_plain(self) -> dict:
        """``dataclasses.asdict(self)``, built directly (asdict deep-copies every value: 17 ms for a class's checks)."""
        names = [f.name for f in fields(CheckResult)]
        return {"submission": self.submission,
                "exercises": [{"name": exercise.name, "title": exercise.title,
                               "checks": [{name: getattr(check, name) for name in names} for check in exercise.checks]}
                              for exercise in self.exercises],
                "seconds": self.seconds, "unprotected": list(self.unprotected), "name": self.name,
                "email": self.email, "late": self.late, "edition": self.edition}

    @classmethod
    def from_plain(cls, plain: dict) -> "SubmissionResult":
        """The result ``to_plain`` gave, or a record from before results said who submitted them."""
        exercises = [ExerciseResult(e["name"], e["title"], [CheckResult(**c) for c in e["checks"]])
                     for e in plain["exercises"]]
        return cls(plain["submission"], exercises, plain["seconds"], plain["unprotected"], plain.get("name", ""),
                   plain.get("email", ""), plain.get("late", False), plain.get("edition", ""))

    def add(self, check: CheckResult, title: str):
        for exercise in self.exercises:
            if exercise.name == check.exercise:
                break
        else:
            exercise = ExerciseResult(check.exercise, title)
            self.exercises.append(exercise)
        exercise.checks.append(check)


def crashed(submission: str, exercises, reason: str, kind: ErrorKind = ErrorKind.CRASH,
            said: str = "the grading of this submission stopped: ") -> SubmissionResult:
    """The result of a submission whose grading stopped: every exercise lost, with the reason (one line).

    Recorded in place of the grading (a batch's rerun does not try the student again; ``--force`` does),
    and written to every format like any other result. One failed entry per exercise (of
    :class:`grader.engine.registry.Exercise`) carries all of its points, so the maximum stays the class's.
    ``kind`` is why (:attr:`ErrorKind.JUDGE_DIED` where the judge's own process was killed, the student's
    code perhaps never run), and ``said`` the words before the reason.
    """
    result = SubmissionResult(submission)
    for exercise in exercises:
        result.add(CheckResult(exercise=exercise.module, check="grading", case="", title="Graded to the end",
                               outcome="failed", points=0.0, max_points=float(exercise.max_points),
                               message=f"{said}{reason}", error=kind),
                   exercise.title)
    return result


# What a failed hidden check tells the student, by why it failed (CheckResult.error): words of the kit only.
HIDDEN_FEEDBACK = ("differs from the reference on inputs that stay hidden: test your function on inputs "
                   "of your own (other shapes, other values) against what its docstring promises")
HIDDEN_ERRORS = {
    "": HIDDEN_FEEDBACK,
    ErrorKind.TIMEOUT: "your code ran past its time limit on inputs that stay hidden: is there a loop that never "
                       "ends?",
    ErrorKind.MEMORY: "your code tried to use more memory than allowed on inputs that stay hidden",
    ErrorKind.DISK: "your code wrote more to its scratch folder than allowed on inputs that stay hidden",
    ErrorKind.EXCEPTION: "your code raised an error on inputs that stay hidden: test your function on inputs of "
                         "your own (other shapes, other values) against what its docstring promises",
    ErrorKind.NOT_IMPLEMENTED: "not graded: the function is not implemented yet (it still raises "
                               "NotImplementedError)",
    ErrorKind.MISSING: "not graded: the module is missing (the public checks say what to do)",
    ErrorKind.INVALID: "not graded: the module could not be read (the public checks say why)",
    ErrorKind.SYNTAX: "not graded: the module could not be read (the public checks say why)",
    ErrorKind.IMPORT: "not graded: the module raised an error as it was imported (the public checks say which)",
    ErrorKind.MISSING_FUNCTION: "not graded: the module has no function of the name this check calls (the public "
                                "checks say which)",
    ErrorKind.KIT: "the grader could not judge this check; please report it",
}
HIDDEN_OTHERWISE = ("your code crashed, ended the program or did something the checks refuse on inputs that "
                    "stay hidden (the public checks may say more)")


def writable(text) -> str:
    """``text`` escaped at the edge, as any file or terminal can take it: a character UTF-8 cannot encode (a lone
    surrogate) as \\udXXX, the escape :func:`write_atomically` writes, and nothing else changed."""
    text = text if type(text) is str else str(text)
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def writable_copy(result: SubmissionResult) -> SubmissionResult:
    """A copy of ``result`` whose every text is :func:`writable`: field by field, whichever fields (asdict is slow)."""
    def copied(thing, **parts):  # a shallow copy made by hand: copy.copy was most of a class record's own CPU time
        copy = object.__new__(type(thing))
        copy.__dict__.update({name: writable(value) if isinstance(value, str) else value
                              for name, value in vars(thing).items()}, **parts)
        return copy

    return copied(result, unprotected=[writable(line) for line in result.unprotected],
                  exercises=[copied(exercise, checks=[copied(check) for check in exercise.checks])
                             for exercise in result.exercises])


def redacted(result: SubmissionResult) -> SubmissionResult:
    """The result a student may see, for every student-facing format: a copy, its texts writable.

    A hidden check keeps its title, verdict and points; it loses its case ids
    (which name shapes and seeds) and what was printed during it, and a failed
    one's message becomes a sentence of the kit's that says only why in general
    (:data:`HIDDEN_ERRORS`): the message of a hidden check quotes its inputs,
    shapes and expected values, and an exception message or a print made by
    student code can quote them too. A skipped check's message is the kit's own
    and stays. Applying it twice changes nothing.
    """
    copy = writable_copy(result)
    for exercise in copy.exercises:
        for check in exercise.checks:
            if check.hidden:  # the diagnosis would say what the hidden inputs showed: the message is redacted too
                check.case, check.printed, check.mistake = "", "", ""
                if check.outcome == "failed":
                    check.message = HIDDEN_ERRORS.get(check.error, HIDDEN_OTHERWISE)
                elif check.outcome == "passed":
                    check.message = ""
    return copy


def write_atomically(path: Path, text: str, durable: bool = False):
    """Write ``text`` to ``path`` so that a reader sees the old file or the new one, never half of one.

    The file is UTF-8 whatever the locale; a character UTF-8 cannot encode (a
    lone surrogate) is written as a backslash escape instead of stopping it.
    ``durable``: the content is on the disk itself (fsync) before the name points at it, so that a power cut
    never leaves the name on an empty file; the name is on the disk once the folder is (:func:`sync_folder`,
    once for the files written there together). A killed process loses nothing written either way.
    """
    path = Path(path)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    umask = os.umask(0)
    os.umask(umask)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", errors="backslashreplace") as stream:
            stream.write(text)
            if durable:
                stream.flush()
                os.fsync(stream.fileno())
        os.chmod(temporary, 0o666 & ~umask)  # as if written in place (mkstemp makes it private)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def sync_folder(folder: Path):
    """The entries of ``folder`` (names made, renamed or removed) on the disk itself, before this returns."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
