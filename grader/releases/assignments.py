"""``assignments/``: what learners edit, made from ``solutions/`` (a stub module and a notebook per exercise).

Beside them, a ``pytest.ini`` of the learner's: ``pytest`` typed in the
folder checks the exercises in it (the plugin's ``softlookup_exercises``), as
``softlookup check`` does, and leaves no cache among the learner's files.
"""

from __future__ import annotations

from pathlib import Path

from grader.engine import registry
from grader.releases.exercise_notebooks import learner_notebook
from grader.releases.stubs import make_stub


def planned(solutions: Path, assignments: Path,
            exercises: tuple[registry.Exercise, ...] = registry.EXERCISES) -> dict[Path, str]:
    """Every assignment file (module and notebook) of ``exercises`` and the text it should have (``softlookup dev
    check`` passes those of the kit it reads, which need not be this package's)."""
    plan = {}
    for exercise in exercises:
        source = (solutions / f"{exercise.module}.py").read_text()
        plan[assignments / f"{exercise.module}.py"] = make_stub(source, f"{exercise.module}.py")
        plan[assignments / f"{exercise.module}.ipynb"] = learner_notebook(exercise, source)
    plan[assignments / "pytest.ini"] = LEARNERS_PYTEST_INI
    return plan


# How a learner's bare `pytest` reports: softlookup's table after pytest's dots, and no cache left behind.
# --noconftest: in a clone, pytest would otherwise load the kit's own tests/conftest.py (it looks in test*
# folders beside the folder it starts from), which moves HOME and the state folder into a temporary one,
# so that `softlookup hint` never saw what the learner's pytest found.
LEARNERS_ADDOPTS = "-p no:cacheprovider --noconftest -q --tb=no -rN"
# A pytest that reads softlookup_exercises without softlookup's plugin (another Python's: a venv made with
# --system-site-packages runs the base's pytest where the base has one) would only warn of an unknown option and
# run nothing; with the plugin required it stops with an error the READMEs answer (`python -m pytest`).
LEARNERS_REQUIRED = "softlookup"
MISSING_PLUGIN = f"Missing required plugins: {LEARNERS_REQUIRED}"  # what that pytest then says, word for word
LEARNERS_PYTEST_INI = f"""\
# `pytest` in this folder checks your exercises, as `softlookup check` does.
# It says "{MISSING_PLUGIN}"? Then it is another Python's: type `python -m pytest`, with the venv active.
[pytest]
softlookup_exercises = true
required_plugins = {LEARNERS_REQUIRED}
addopts = {LEARNERS_ADDOPTS}
"""
# The same in a pyproject.toml at the root of a project with assignments/ (the student bundle's).
LEARNERS_PYPROJECT = f"""
# `pytest` here checks your exercises in assignments/, as `softlookup check` does.
# It says "{MISSING_PLUGIN}"? Then it is another Python's: type `python -m pytest`, with the venv active.
[tool.pytest.ini_options]
softlookup_exercises = true
required_plugins = "{LEARNERS_REQUIRED}"
addopts = "{LEARNERS_ADDOPTS}"
"""


def out_of_date(plan: dict[Path, str]) -> list[Path]:
    """The planned files that are missing or differ from their plan: what ``--check`` reports."""
    return [path for path, text in plan.items() if not path.exists() or path.read_text() != text]
