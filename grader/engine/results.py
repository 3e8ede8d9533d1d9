"""The result model: check -> exercise -> submission, and every format made from it.

The pytest plugin fills it in; the terminal table, the notebook's HTML table,
Gradescope's results.json and anything added later are functions of a
:class:`SubmissionResult` and nothing else. The two tables share their words
(:func:`summary`, :func:`verdict`, :class:`Problem`) and differ only in markup.

Two rules hold for every format. What a student sees goes through
:func:`redacted` (one function, so results.json, feedback.md and
feedback.html cannot disagree): a hidden check says that it failed and why in
general terms, never its message, its case (which names shapes) or what was
printed during it. And every text is made :func:`encodable` before it is
written (a lone surrogate from a student's exception message cannot stop a
file or a terminal): :func:`write_atomically` writes UTF-8 with anything
unencodable shown as a backslash escape, and the renderers clean the model
first.
"""

from __future__ import annotations

import copy as _copy
import json
import os
import tempfile
from dataclasses import dataclass, field, fields
from pathlib import Path

from grader.engine import markup

STATUSES = ["ok", "timeout", "memory", "crashed", "missing", "invalid"]  # from best to worst
ERROR_STATUS = {"timeout": "timeout", "memory": "memory", "crash": "crashed", "exit": "crashed",
                "missing": "missing", "invalid": "invalid", "syntax": "invalid"}


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
    error: str = ""  # why the learner's code gave no answer (SubmissionError.kind), "kit" for the grader's fault
    function: str = ""  # the learner's function the check called last: the one its verdict is about (hints follow it)

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
        return sum(check.points for check in self.checks)

    @property
    def max_score(self) -> float:
        return sum(check.max_points for check in self.checks)

    @property
    def status(self) -> str:
        ran = [check for check in self.checks if check.outcome != "skipped"]
        if ran and all(not check.passed and "not implemented yet" in check.message for check in ran):
            return "not started"
        if self.score >= self.max_score - 1e-9:
            return "done"
        return "in progress"

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

    @property
    def score(self) -> float:
        return sum(exercise.score for exercise in self.exercises)

    @property
    def max_score(self) -> float:
        return sum(exercise.max_score for exercise in self.exercises)

    @property
    def full_marks(self) -> bool:
        return self.max_score > 0 and self.score >= self.max_score - 1e-9

    @property
    def status(self) -> str:
        """The worst thing that happened while grading, for a gradebook: ok, timeout, memory, crashed, ..."""
        seen = {ERROR_STATUS.get(check.error, "ok") for exercise in self.exercises for check in exercise.checks}
        return max(seen | {"ok"}, key=STATUSES.index)

    def to_plain(self) -> dict:
        """``dataclasses.asdict(self)``, built directly (asdict deep-copies every value: 17 ms for a class's checks)."""
        names = [f.name for f in fields(CheckResult)]
        return {"submission": self.submission,
                "exercises": [{"name": exercise.name, "title": exercise.title,
                               "checks": [{name: getattr(check, name) for name in names} for check in exercise.checks]}
                              for exercise in self.exercises],
                "seconds": self.seconds, "unprotected": list(self.unprotected), "name": self.name,
                "email": self.email, "late": self.late}

    @classmethod
    def from_plain(cls, plain: dict) -> "SubmissionResult":
        """The result ``to_plain`` gave, or a record from before results said who submitted them."""
        exercises = [ExerciseResult(e["name"], e["title"], [CheckResult(**c) for c in e["checks"]])
                     for e in plain["exercises"]]
        return cls(plain["submission"], exercises, plain["seconds"], plain["unprotected"], plain.get("name", ""),
                   plain.get("email", ""), plain.get("late", False))

    def add(self, check: CheckResult, title: str):
        for exercise in self.exercises:
            if exercise.name == check.exercise:
                break
        else:
            exercise = ExerciseResult(check.exercise, title)
            self.exercises.append(exercise)
        exercise.checks.append(check)


# What a failed hidden check tells the student, by why it failed (CheckResult.error): words of the kit only.
HIDDEN_FEEDBACK = ("differs from the reference on inputs that stay hidden: test your function on inputs "
                   "of your own (other shapes, other values) against what its docstring promises")
HIDDEN_ERRORS = {
    "": HIDDEN_FEEDBACK,
    "timeout": "your code ran past its time limit on inputs that stay hidden: is there a loop that never ends?",
    "memory": "your code tried to use more memory than allowed on inputs that stay hidden",
    "exception": "your code raised an error on inputs that stay hidden: test your function on inputs of your own "
                 "(other shapes, other values) against what its docstring promises",
    "not_implemented": "not graded: the function is not implemented yet (it still raises NotImplementedError)",
    "missing": "not graded: the module is missing (the public checks say what to do)",
    "invalid": "not graded: the module could not be read (the public checks say why)",
    "syntax": "not graded: the module could not be read (the public checks say why)",
    "kit": "the grader could not judge this check; please report it",
}
HIDDEN_OTHERWISE = ("your code crashed, ended the program or did something the checks refuse on inputs that "
                    "stay hidden (the public checks may say more)")


def encodable(text) -> str:
    """``text`` as any file or terminal can take it: a character UTF-8 cannot encode (a lone surrogate) as \\udXXX."""
    text = text if type(text) is str else str(text)
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def cleaned(result: SubmissionResult) -> SubmissionResult:
    """A copy of ``result`` whose every text is :func:`encodable`: field by field, whichever fields (asdict is slow)."""
    def copied(thing, **parts):
        copy = _copy.copy(thing)
        for name, value in vars(copy).items():
            if isinstance(value, str):
                setattr(copy, name, encodable(value))
        for name, value in parts.items():
            setattr(copy, name, value)
        return copy

    return copied(result, unprotected=[encodable(line) for line in result.unprotected],
                  exercises=[copied(exercise, checks=[copied(check) for check in exercise.checks])
                             for exercise in result.exercises])


def redacted(result: SubmissionResult) -> SubmissionResult:
    """The result a student may see, for every student-facing format: a copy, its texts encodable.

    A hidden check keeps its title, verdict and points; it loses its case ids
    (which name shapes and seeds) and what was printed during it, and a failed
    one's message becomes a sentence of the kit's that says only why in general
    (:data:`HIDDEN_ERRORS`): the message of a hidden check quotes its inputs,
    shapes and expected values, and an exception message or a print made by
    student code can quote them too. A skipped check's message is the kit's own
    and stays. Applying it twice changes nothing.
    """
    copy = cleaned(result)
    for exercise in copy.exercises:
        for check in exercise.checks:
            if check.hidden:
                check.case, check.printed = "", ""
                if check.outcome == "failed":
                    check.message = HIDDEN_ERRORS.get(check.error, HIDDEN_OTHERWISE)
                elif check.outcome == "passed":
                    check.message = ""
    return copy


def gradescope(result: SubmissionResult) -> dict:
    """Gradescope's results.json: one test per check, its cases added up, :func:`redacted`.

    Hidden checks are shown once grades are published ("after_published").
    Whoever runs ``softlookup check --json`` with the reference solutions
    sees the hidden checks' messages in the terminal table; the file, which
    is Gradescope's and so the student's, is redacted wherever it is made.
    """
    result = redacted(result)
    tests = []
    for exercise in result.exercises:
        for (name, hidden), cases in exercise.grouped().items():
            failures = [c for c in cases if c.outcome == "failed"]
            skips = [c for c in cases if c.outcome == "skipped"]
            lines = [f"[{c.case}] {c.message}" if c.case else c.message for c in failures + skips]
            lines = list(dict.fromkeys(lines))  # a redacted hidden check says it once, not once per case
            lines += [failures[0].printed] if failures and failures[0].printed else []
            tests.append({
                "name": f"{exercise.name}: {cases[0].title or name}",
                "score": round(sum(c.points for c in cases), 4),
                "max_score": round(sum(c.max_points for c in cases), 4),
                "output": "\n".join(lines) if lines else "Passed.",
                "visibility": "after_published" if hidden else "visible",
            })
    return {
        "score": round(result.score, 4),
        "max_score": round(result.max_score, 4),
        "execution_time": round(result.seconds, 3),
        "tests": tests,
    }


def write_gradescope(result: SubmissionResult, path: Path):
    write_atomically(path, json.dumps(gradescope(result), indent=2) + "\n")


def write_atomically(path: Path, text: str):
    """Write ``text`` to ``path`` so that a reader sees the old file or the new one, never half of one.

    The file is UTF-8 whatever the locale; a character UTF-8 cannot encode (a
    lone surrogate) is written as a backslash escape instead of stopping it.
    """
    path = Path(path)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    umask = os.umask(0)
    os.umask(umask)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", errors="backslashreplace") as stream:
            stream.write(text)
        os.chmod(temporary, 0o666 & ~umask)  # as if written in place (mkstemp makes it private)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def render(result: SubmissionResult, console) -> None:
    """The terminal report: a table per exercise, then each failed check's first message.

    Into a pipe (no terminal) rich would wrap everything at 80 columns, in the
    middle of a verdict; there every table and message is printed whole, one
    line each, and whatever reads the pipe decides how to wrap.
    """
    from rich.markup import escape
    from rich.table import Table

    result = cleaned(result)  # a terminal cannot take a lone surrogate either
    if result.unprotected:
        console.print(f"[yellow]Learner code ran without: {escape('; '.join(result.unprotected))}.[/]")
    for exercise in result.exercises:
        # One line when one thing explains every failure, so a first run reads as a to-do list.
        heading = f"[bold]{exercise.name}.py[/]: {escape(exercise.title)}: [bold]0/{_fmt(exercise.max_score)}[/] points"
        if (line := summary(exercise)) == "not started":
            _print_whole(console, f"{heading}, not started [dim](stuck? softlookup hint {exercise.name})[/]")
            continue
        if line:
            _print_whole(console, f"{heading}: [red]{markup.rich(line)}[/]")
            continue
        table = Table(title=f"{exercise.name}.py: {escape(exercise.title)}", title_justify="left")
        table.add_column("check")
        table.add_column("points", justify="right")
        table.add_column("result")
        problems = {}
        for (name, hidden), cases in exercise.grouped().items():
            earned, possible = sum(c.points for c in cases), sum(c.max_points for c in cases)
            failed = [c for c in cases if c.outcome == "failed"]
            problems[name] = failed or [c for c in cases if c.outcome == "skipped"]
            label = markup.rich(cases[0].title or name) + (" [dim](hidden)[/]" if hidden else "")
            table.add_row(label, f"{_fmt(earned)}/{_fmt(possible)}", _verdict(cases))
        _print_whole(console, table)
        _print_whole(console, f"  [bold]{_fmt(exercise.score)}/{_fmt(exercise.max_score)}[/] points, {exercise.status}")
        for name, cases in problems.items():
            if cases:
                _print_whole(console, _first_problem(name, cases))
                if cases[0].printed:  # what the learner's own prints said while the check ran
                    _print_whole(console, _indented(cases[0].printed))
        console.print()
    _print_whole(console, f"[bold]Total: {_fmt(result.score)}/{_fmt(result.max_score)}[/] ({result.seconds:.1f} s)")


def verdict(cases: list[CheckResult]) -> tuple[str, str]:
    """A check's result in words that cannot be misread ("2 of 3 cases passed", not "failed 2/3"), and its colour."""
    passed = sum(c.passed for c in cases)
    if all(c.outcome == "skipped" for c in cases):
        return "skipped", "yellow"
    if passed == len(cases):
        return "passed", "green"
    if len(cases) == 1:
        return "failed", "red"
    return f"{passed} of {len(cases)} cases passed", "red"


def _verdict(cases: list[CheckResult]) -> str:
    words, colour = verdict(cases)
    return f"[{colour}]{words}[/]"


@dataclass
class Problem:
    """The first failing case of a check, once, with how many cases repeat it and how many fail otherwise."""

    check: str
    first: CheckResult
    cases: list[str]  # the cases that share its message
    others: int  # cases that fail with other messages

    @classmethod
    def of(cls, name: str, cases: list[CheckResult]) -> "Problem":
        first = cases[0]
        same = [c for c in cases if c.message == first.message]
        return cls(name, first, [c.case for c in same] if first.case else [], len(cases) - len(same))


def _first_problem(name: str, cases: list[CheckResult]) -> str:
    from rich.markup import escape

    problem = Problem.of(name, cases)
    mark = "[yellow]○" if problem.first.outcome == "skipped" else "[red]✗"
    where = f" \\[{escape(', '.join(problem.cases))}]" if problem.cases else ""
    repeated = f" (× {len(problem.cases)} cases)" if len(problem.cases) > 1 else ""
    others = problem.others
    otherwise = (f" [dim](and {others} more case{'s' * (others > 1)} with other messages: --cases {name} shows "
                 "every one)[/]") if others else ""
    return f"  {mark} {name}{where}{repeated}[/]: {markup.rich(problem.first.message)}{otherwise}"


def summary(exercise: ExerciseResult) -> str:
    """One line that explains the whole exercise, when there is one: "not started", or the one shared failure."""
    if exercise.status == "not started":
        return "not started"
    if exercise.score == 0 and len(shared := {c.message for c in exercise.checks if c.outcome == "failed"}) == 1:
        return shared.pop()
    return ""


def html(result: SubmissionResult, total_first: bool = False) -> str:
    """The terminal report's content as HTML, for a notebook: the same verdicts, problems and totals.

    The total comes last, as in the terminal, or first (``total_first``), as a page of feedback opens.
    """
    from html import escape

    colours = {"green": "#1a7f37", "red": "#cf222e", "yellow": "#9a6700"}
    result = cleaned(result)
    parts = []
    for exercise in result.exercises:
        heading = (f"<b>{escape(exercise.name)}</b>: {escape(exercise.title)}: "
                   f"<b>{_fmt(exercise.score)}/{_fmt(exercise.max_score)}</b> points")
        if (line := summary(exercise)) == "not started":
            parts.append(f"<p>{heading}, not started (stuck? <code>softlookup hint {escape(exercise.name)}</code>)</p>")
            continue
        if line:
            parts.append(f'<p>{heading}: <span style="color:{colours["red"]}">{markup.html(line)}</span></p>')
            continue
        rows = []
        for (name, hidden), cases in exercise.grouped().items():
            words, colour = verdict(cases)
            problems = [c for c in cases if c.outcome == "failed"] or [c for c in cases if c.outcome == "skipped"]
            message = ""
            if problems:
                problem = Problem.of(name, problems)
                where = f"[{escape(', '.join(problem.cases))}] " if problem.cases else ""
                message = where + markup.html(problem.first.message) + (f" (and {problem.others} more)" if problem.others else "")
            label = markup.html(cases[0].title or name) + (" <i>(hidden)</i>" if hidden else "")
            earned, possible = sum(c.points for c in cases), sum(c.max_points for c in cases)
            rows.append(f'<tr><td style="text-align:left">{label}</td><td>{_fmt(earned)}/{_fmt(possible)}</td>'
                        f'<td style="color:{colours[colour]}">{words}</td><td style="text-align:left">{message}</td></tr>')
        parts.append(f"<p>{heading}, {exercise.status}</p><table><thead><tr><th style=\"text-align:left\">check</th>"
                     "<th>points</th><th>result</th><th style=\"text-align:left\">what went wrong</th></tr></thead>"
                     f"<tbody>{''.join(rows)}</tbody></table>")
    total = f"<p><b>Total: {_fmt(result.score)}/{_fmt(result.max_score)}</b> ({result.seconds:.1f} s)</p>"
    return "\n".join([total, *parts] if total_first else [*parts, total])


def _indented(printed: str) -> str:
    from rich.markup import escape

    return "\n".join(f"      [dim]{escape(line)}[/]" for line in printed.splitlines())


def _print_whole(console, renderable) -> None:
    """Print without rich's wrapping when there is no terminal: a pipe gets whole lines."""
    if console.is_terminal:
        console.print(renderable)
    elif isinstance(renderable, str):
        console.print(renderable, soft_wrap=True)
    else:
        from rich.measure import Measurement

        width = console.width
        console.width = max(width, Measurement.get(console, console.options.update_width(10**4), renderable).maximum)
        try:
            console.print(renderable)
        finally:
            console.width = width


def _fmt(points: float) -> str:
    return f"{points:g}" if abs(points - round(points)) < 1e-9 else f"{points:.2f}"
