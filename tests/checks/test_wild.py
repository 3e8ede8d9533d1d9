"""Implementations from the wild (tests/wild.py): right ones keep full marks, unstable ones lose the named check,
flawed ones lose exactly the checks their flaw deserves, each with its verdict.

Each case grades only the modules it replaces, so a failure names the
implementation, the check and its message.
"""

import pytest

from helpers import full_marks_problems, make_submission, run
from wild import FLAWED, RIGHT, UNSTABLE

def table(result, passed: bool = True) -> str:
    """Every case of every graded check (only those that did not pass, unless ``passed``), one line each."""
    lines = []
    for exercise in result.exercises:
        lines.append(f"{exercise.name}: {exercise.score:g} / {exercise.max_score:g}")
        for check in exercise.checks:
            if check.outcome == "passed" and not passed:
                continue
            case = f"[{check.case}]" if check.case else ""
            message = f": {check.message}" if check.outcome != "passed" and check.message else ""
            lines.append(f"  {check.outcome:7} {check.check}{case}{message}")
    return "\n".join(lines)


def not_passed(result):
    return [(c.check, c.case, c.outcome, c.message) for e in result.exercises for c in e.checks
            if c.outcome not in ("passed", "skipped")]


def test_the_set_is_big_and_varied():
    """At least 46 right implementations (float32 in exercise 5 is a flaw since its docstrings ask for float64), every
    exercise covered, torch in 8 of the numpy exercises' modules."""
    assert len(RIGHT) >= 46
    covered = {module for files in RIGHT.values() for module in files}
    assert covered == {"softmax", "lookup", "attention", "gpt2_heads", "learning", "gpt2_values"}
    with_torch = [name for name, files in RIGHT.items()
                  if any("import torch" in files.get(m, "") for m in ("softmax", "lookup", "attention"))]
    assert len(with_torch) >= 8, with_torch
    counts = {module: sum(module in files for files in RIGHT.values()) for module in covered}
    assert counts["gpt2_heads"] >= 3 and counts["learning"] >= 2 and counts["gpt2_values"] >= 2, counts


@pytest.mark.parametrize("name", RIGHT)
def test_right_answers_from_the_wild_earn_full_marks(tmp_path, name):
    files = RIGHT[name]
    result = run(make_submission(tmp_path / "s", files=files), list(files))
    assert [e.name for e in result.exercises] == list(files)
    assert not full_marks_problems(result, list(files)), (
        f"{name}: {full_marks_problems(result, list(files))}\n{table(result, passed=False)}")


@pytest.mark.parametrize("variant", UNSTABLE, ids=[u.name for u in UNSTABLE])
def test_unstable_answers_lose_the_check_meant_for_them(tmp_path, variant):
    result = run(make_submission(tmp_path / "s", files=variant.files), list(variant.files))
    failed = [(c.check, c.message) for e in result.exercises for c in e.checks if c.outcome == "failed"]
    messages = [message or "" for check, message in failed if check == variant.check]
    assert messages, f"{variant.name} did not fail {variant.check}:\n{table(result)}"
    assert any(variant.fragment in message for message in messages), (
        f"{variant.name} failed {variant.check}, but no message says {variant.fragment!r}:\n{table(result)}")
    if variant.only:
        others = [entry for entry in not_passed(result) if entry[0] != variant.check]
        assert not others, f"{variant.name} must lose {variant.check} alone:\n{table(result)}"


@pytest.mark.parametrize("flawed", FLAWED, ids=[f.name for f in FLAWED])
def test_flawed_answers_lose_what_their_flaw_deserves(tmp_path, flawed):
    result = run(make_submission(tmp_path / "s", files=flawed.files), list(flawed.files))
    lost = {}
    for check, case, outcome, message in not_passed(result):
        lost.setdefault(check, []).append(message or "")
    assert set(lost) == set(flawed.loses), f"{flawed.name} lost other checks than its flaw's:\n{table(result)}"
    for check, fragment in flawed.loses.items():
        assert any(fragment in message for message in lost[check]), (
            f"{flawed.name} failed {check}, but no message says {fragment!r}:\n{table(result, passed=False)}")
