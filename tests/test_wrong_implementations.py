"""Every check can fail: each catalogued mistake loses points on the check meant to catch it."""

import pytest

from conftest import failures, make_submission, run
from grader.engine import registry
from mistakes import MISTAKES


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.id for m in MISTAKES])
def test_mistake_is_caught(tmp_path, mistake):
    folder = make_submission(tmp_path / "submission")
    mistake.apply(folder)
    result = run(folder, [mistake.module])
    messages = failures(result, mistake.caught_by)
    assert messages, f"{mistake.caught_by} passed the mistake {mistake.name!r}"
    assert any(mistake.hint in message for message in messages), messages
    assert result.score < result.max_score
    assert not any("could not judge" in c.message for e in result.exercises for c in e.checks)


def test_every_check_catches_a_mistake():
    """A check no wrong implementation can fail would be a check that proves nothing."""
    caught = {(m.module, m.caught_by) for m in MISTAKES}
    untested = [(e.module, check) for e in registry.EXERCISES for check, points in e.points.items()
                if points > 0 and (e.module, check) not in caught]
    assert not untested, f"checks with no wrong implementation that fails them: {untested}"


def test_at_least_six_mistakes_per_exercise():
    for exercise in registry.EXERCISES:
        assert sum(m.module == exercise.module for m in MISTAKES) >= 6, exercise.module
