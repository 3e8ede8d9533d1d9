"""The words every table of results uses: a check's verdict, its first problem, an exercise's one line, points.

The terminal report, the notebook's HTML table, the gradebook's feedback
and nbgrader's test cells say the same things in different markup: they
take their words from here, so they cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.engine.results import CheckResult, ExerciseResult


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


def summary(exercise: ExerciseResult) -> str:
    """One line that explains the whole exercise, when there is one: "not started", or the one shared failure."""
    if exercise.status == "not started":
        return "not started"
    if exercise.score == 0 and len(shared := {c.message for c in exercise.checks if c.outcome == "failed"}) == 1:
        return shared.pop()
    return ""


def points(value: float) -> str:
    """Points as every table writes them: 3, 2.5 → 2.50, 1/3 → 0.33."""
    return f"{value:g}" if abs(value - round(value)) < 1e-9 else f"{value:.2f}"
