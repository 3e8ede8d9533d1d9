"""Every check can fail: each catalogued mistake loses points on the check meant to catch it.

That every check worth points has a mistake to catch, six per exercise at least, is `softlookup dev check`'s
(tests/commands/test_dev.py): it reads the catalogue without grading it.
"""

import pytest

from helpers import failures, make_submission, run
from mistakes import MISTAKES


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.id for m in MISTAKES])
def test_mistake_is_caught(tmp_path, mistake):
    folder = make_submission(tmp_path / "submission")
    mistake.apply(folder)
    result = run(folder, [mistake.module])
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
