"""Every check can fail: each catalogued mistake loses points on the check meant to catch it.

That every check worth points has a mistake to catch, six per exercise at least, is `softlookup dev check`'s
(tests/commands/test_dev.py): it reads the catalogue without grading it.

The mistakes of one exercise are graded together, as a class of students in the engine's batch
(``helpers.run_batch``), the first time one of them is asked for: one judge's start and one set of the
reference's answers for all of them. Each exercise's mistakes are one xdist group (tests/pytest.ini says
``--dist loadgroup``), so that a single process grades each batch.
"""

import functools
import shutil
import tempfile
from pathlib import Path

import pytest

from helpers import failures, make_submission, run_batch
from mistakes import MISTAKES


@functools.cache
def graded(module: str) -> dict:
    """The result of every catalogued mistake of ``module``, by the mistake's id."""
    root = Path(tempfile.mkdtemp(prefix="softlookup-mistakes-"))
    try:
        folders = {}
        for number, mistake in enumerate(m for m in MISTAKES if m.module == module):
            folders[f"mistake-{number}"] = make_submission(root / f"mistake-{number}")
            mistake.apply(folders[f"mistake-{number}"])
        ids = dict(zip(folders, (m.id for m in MISTAKES if m.module == module)))
        return {ids[student]: result for student, result in run_batch(folders, [module], root).items()}
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("mistake", [pytest.param(m, marks=pytest.mark.xdist_group(f"mistakes-{m.module}"))
                                     for m in MISTAKES], ids=[m.id for m in MISTAKES])
def test_mistake_is_caught(mistake):
    result = graded(mistake.module)[mistake.id]
    messages = failures(result, mistake.caught_by)
    assert messages, f"{mistake.caught_by} passed the mistake {mistake.name!r}"
    assert any(mistake.hint in message for message in messages), messages
    if mistake.named:  # the name the summary counts it by: told by the check meant to catch it
        names = {c.mistake for e in result.exercises for c in e.checks
                 if c.check == mistake.caught_by and c.outcome == "failed"}
        assert mistake.named in names, f"{mistake.caught_by} named {names}, not {mistake.named!r}"
    assert result.score < result.max_score
    assert not any("could not judge" in c.message for e in result.exercises for c in e.checks)
    for check in mistake.passes:  # a check whose hint would blame another cause must let this mistake through
        assert not failures(result, check), f"{check} failed the mistake {mistake.name!r}: {failures(result, check)}"
