"""A submission's time budget: what all of its calls together may take, and what they have taken.

Each call into learner code is charged what its meter counted (its CPU time,
or its own waiting where that is longer: :mod:`grader.engine.confinement.clock`), so a
busy machine spends none of it. Once the budget is spent, the checks from
there on fail at once, with a message that says so. Trusted calls (the
reference, the kit) are never charged.
"""

from __future__ import annotations

from grader.engine.confinement.policy import TIME_BUDGET
from grader.engine.errors import SubmissionError
from grader.engine.results import ErrorKind


class Budget:
    """The seconds one submission's calls may take together (None: no budget) and those spent so far."""

    def __init__(self, seconds: float | None = TIME_BUDGET):
        self.restart(seconds)

    def restart(self, seconds: float | None):
        """A new submission's whole budget."""
        self.seconds, self.spent = seconds, 0.0

    def left(self) -> float | None:
        return None if self.seconds is None else self.seconds - self.spent

    def charge(self, seconds: float):
        self.spent += seconds

    def check(self, label: str):
        """Raise SubmissionError ("budget") if the calls have used up the budget: ``label``'s call is not run."""
        left = self.left()
        if left is not None and left <= 0:
            raise SubmissionError(ErrorKind.BUDGET, self.spent_message("was not run"), label)

    def spent_message(self, what: str) -> str:
        return (f"{what}: this submission's calls have used up their time budget ({self.seconds:g} s for all of "
                "them together), so the checks from here on fail without running your code. Make your slowest "
                "functions faster (the reference solutions need a few seconds for everything) and check again; "
                "an instructor can allow more time with --time-budget SECONDS")
