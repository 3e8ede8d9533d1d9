"""The words every table of results uses: a check's verdict, its first problem, an exercise's one line, points.

The terminal report, the notebook's HTML table, the gradebook's feedback
and nbgrader's test cells say the same things in different markup: they
take their words from here, so they cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.engine.results import CheckResult, ExerciseResult, SubmissionResult


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


def one_line(exercise: ExerciseResult) -> str:
    """One line that explains the whole exercise, when there is one: "not started", or the one shared failure.

    A hidden check the student sees only as the kit's general sentence
    (:func:`~grader.engine.results.redacted`) shares the failure when its
    error is the public checks' own: a syntax error, a missing module, a loop.
    """
    if exercise.status == "not started":
        return "not started"
    failed = [c for c in exercise.checks if c.outcome == "failed"]
    public = [c for c in failed if not c.hidden] or failed
    errors = {c.error for c in public}
    alike = all(c.error and c.error in errors for c in failed if c not in public)
    if exercise.score == 0 and len(shared := {c.message for c in public}) == 1 and alike:
        return shared.pop()
    return ""


def points(value: float) -> str:
    """Points as every table writes them: 3, 2.5 → 2.50, 1/3 → 0.33."""
    return f"{value:g}" if abs(value - round(value)) < 1e-9 else f"{value:.2f}"


# Why a submission's status is not ok, in the student's terms ({where}: the exercises' files).
STATUS_WORDS = {
    "timeout": "your code ran past its time limit in {where}: is there a loop that never ends? The checks it "
               "was stopped in, and those of the modules that import it, earned nothing",
    "memory": "your code tried to use more memory than allowed in {where}; those checks earned nothing",
    "disk": "your code wrote more to its scratch folder (files it made) than allowed in {where}; those checks "
            "earned nothing",
    "crashed": "your code crashed or ended the program in {where} (or the grading of it stopped); the checks "
               "below say where",
    "judge-died": "the grader's process grading you was killed twice; nothing of yours was graded (your "
                  "instructor can grade you again)",
    "missing-function": "your {where} has no function of a name the checks call (renamed, or deleted?); the checks "
                        "below say which, and those checks earned nothing",
    "import-error": "your {where} raised an error as it was imported, before any of its functions could be "
                    "called; the checks below say where, and none of them earned anything",
    "syntax-error": "Python could not read {where}: a syntax error, in it or in a module it imports; the checks "
                    "below say where",
    "invalid": "what you handed in for {where} could not be read (a file that is not a module or a notebook); the "
               "checks below say why",
    "not-started": "you have not started {where} yet: its functions still raise NotImplementedError, as handed out",
    "missing": "there was no {where} in what you handed in",
}


def listed(names: list[str], last: str = "and") -> str:
    """``a.py, b.py and c.py``: a list as a sentence says it, ``last`` ("and", "or") before its last name."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {last} {names[-1]}"


def sentence(text: str) -> str:
    """``text`` opening a sentence: its first letter a capital, unless it opens with code (``softmax.softmax()``
    is a function of a module, never a class ``Softmax``)."""
    first = text.split(" ", 1)[0]
    return text if not text or any(mark in first for mark in "._()`") else text[0].upper() + text[1:]


def status_lines(result: SubmissionResult) -> list[str]:
    """The submission's status and why, one sentence per thing that went wrong ([] when all is ok): what
    feedback says under the total, so that ``timeout`` and ``missing`` in the gradebook explain themselves."""
    lines = []
    for kind, exercises in result.statuses().items():
        where = listed([f"{name}.py" for name in exercises], "or" if kind == "missing" else "and")
        if kind == "missing" and len(exercises) == len(result.exercises):
            lines.append("no exercise was found in what you handed in: nothing could be graded")
        elif kind == "not-started" and len(exercises) > 1:
            lines.append(f"you have not started {where} yet: their functions still raise NotImplementedError, as "
                         "handed out")
        else:
            lines.append(STATUS_WORDS[kind].format(where=where))
    return lines
