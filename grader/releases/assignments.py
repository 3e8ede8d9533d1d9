"""``assignments/``: what learners edit, made from ``solutions/`` (a stub module and a notebook per exercise)."""

from __future__ import annotations

from pathlib import Path

from grader.engine import registry
from grader.releases.exercise_notebooks import learner_notebook
from grader.releases.stubs import make_stub


def planned(solutions: Path, assignments: Path) -> dict[Path, str]:
    """Every assignment file (module and notebook) and the text it should have."""
    plan = {}
    for exercise in registry.EXERCISES:
        source = (solutions / f"{exercise.module}.py").read_text()
        plan[assignments / f"{exercise.module}.py"] = make_stub(source, f"{exercise.module}.py")
        plan[assignments / f"{exercise.module}.ipynb"] = learner_notebook(exercise, source)
    return plan


def out_of_date(plan: dict[Path, str]) -> list[Path]:
    """The planned files that are missing or differ from their plan: what ``--check`` reports."""
    return [path for path, text in plan.items() if not path.exists() or path.read_text() != text]
