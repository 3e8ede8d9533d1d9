"""What one submission may cost the judge in time: a budget for all its calls, and no hang paid twice.

Every call has its own time limit, but a submission whose every call stops
just short of it would still hold a judge for an hour, and one honest
infinite loop in softmax used to be waited for again by every check of the
exercises that import softmax. These tests grade whole submissions the way
``softlookup check`` and ``softlookup grade`` do.
"""

from __future__ import annotations

import csv
import time

import pytest

from helpers import exercise_score, make_submission, run
from grader.engine import registry
from grader.engine.budget import Budget
from grader.engine.classes.runner import run_checks
from grader.engine.options import TIME_BUDGET, Options
from helpers import softlookup

LOOPING_SOFTMAX = """
def softmax(x, axis=-1):
    while True:
        pass
"""

SLOW_SOFTMAX = """
import time as _time

_right = softmax


def softmax(x, axis=-1):
    _time.sleep(0.25)  # right, and slow: every call takes a quarter of a second
    return _right(x, axis)
"""

BUDGET_WORDS = "used up their time budget"


def check_points(result, module: str, checks: set[str]) -> float:
    return sum(c.points for e in result.exercises if e.name == module for c in e.checks if c.check in checks)


def test_a_looping_softmax_is_waited_for_once(tmp_path):
    """softmax loops and everything else is right: one hang of 5 s, then every caller of softmax fails at once.

    Before, each check of lookup, attention and exercise 6 that reached the
    looping softmax waited its own limit: 84 s for all six exercises on an
    idle 2-core machine; now the hang is paid once (its 5 s of computing) and every caller of softmax fails at
    once. The
    functions that do not call softmax keep their points.
    """
    folder = make_submission(tmp_path / "looping", append={"softmax": LOOPING_SOFTMAX})
    started = time.monotonic()
    result = run(folder)
    seconds = time.monotonic() - started
    print(f"looping softmax, all six exercises: {seconds:.1f} s, {result.score:g}/{result.max_score:g} points")
    exact_and_nearest = {name for name in registry.exercise("lookup").points if "exact" in name or "nearest" in name}
    assert check_points(result, "lookup", exact_and_nearest) == pytest.approx(sum(
        registry.exercise("lookup").points[name] for name in exact_and_nearest))
    assert check_points(result, "attention", {"test_causal_mask", "test_causal_mask_matches_reference"}) == \
        pytest.approx(3)
    for module in ("gpt2_heads", "learning"):  # they do not import softmax: full marks
        score, most = exercise_score(result, module)
        assert score == pytest.approx(most), module
    soft_lookup = [c.message for e in result.exercises if e.name == "lookup" for c in e.checks
                   if c.check == "test_lesson_table"]
    assert "calls softmax.softmax(), which ran past its time limit earlier" in soft_lookup[0]
    assert "fix softmax.softmax() first" in soft_lookup[0]
    assert result.status == "timeout"


def test_a_spent_budget_fails_the_remaining_checks_at_once(tmp_path):
    """Right but slow: the checks pass until the budget is spent, then fail fast, saying why and what to do."""
    folder = make_submission(tmp_path / "slow", append={"softmax": SLOW_SOFTMAX})
    exercises = [registry.exercise("softmax"), registry.exercise("lookup")]
    started = time.monotonic()
    result = run_checks(folder, exercises, Options(time_budget=2))
    seconds = time.monotonic() - started
    messages = [c.message for e in result.exercises for c in e.checks if c.outcome == "failed"]
    passed = [c for e in result.exercises for c in e.checks if c.passed]
    assert passed, "the checks before the budget ran out keep their points"
    assert messages and all(BUDGET_WORDS in message for message in messages), messages[:3]
    assert "--time-budget SECONDS" in messages[-1] and "was not run" in messages[-1]
    assert result.status == "timeout"
    print(f"a spent budget of 2 s: {seconds:.1f} s in all")  # the budget, one call's overrun, the judge's own work


def test_check_takes_a_time_budget_and_refuses_a_bad_one(tmp_path):
    folder = make_submission(tmp_path / "slow", append={"softmax": SLOW_SOFTMAX})
    done = softlookup("check", folder, "--exercise", "softmax", "--time-budget", "1")
    assert done.returncode == 1 and "time budget (1 s for all of them" in done.stdout, done.stdout + done.stderr
    bad = softlookup("check", folder, "--time-budget", "0")
    assert bad.returncode == 2 and "--time-budget must be a positive number" in bad.stderr


def test_the_budget_starts_again_for_each_student(tmp_path):
    """In one judge, a student who spends the whole budget leaves the next one a whole budget."""
    submissions = tmp_path / "class"
    make_submission(submissions / "a-slow", append={"softmax": SLOW_SOFTMAX})
    make_submission(submissions / "b-right")
    make_submission(submissions / "c-slow", append={"softmax": SLOW_SOFTMAX})
    make_submission(submissions / "d-right")
    out = tmp_path / "graded"
    done = softlookup("grade", submissions, "--out", out, "--exercise", "softmax", "--time-budget", "1",
                      "--allow-unconfined")
    assert done.returncode == 0, done.stderr
    rows = {row["student"]: row for row in csv.DictReader((out / "grades.csv").open())}
    most = f"{registry.exercise('softmax').max_points:g}"
    assert rows["b-right"]["score"] == rows["d-right"]["score"] == most
    assert rows["a-slow"]["status"] == rows["c-slow"]["status"] == "timeout"
    assert float(rows["a-slow"]["score"]) < registry.exercise("softmax").max_points
    assert BUDGET_WORDS in (out / "c-slow" / "feedback.md").read_text()


def test_the_default_budget_is_many_times_what_the_reference_takes(tmp_path, monkeypatch):
    """What the budget is for, measured: the reference's own calls, charged as a learner's are, must fit in it
    many times over (slow but honest code, a hang or two), and it must still bound a submission whose every
    call stops just short of its limit to minutes, not an hour."""
    charged = []
    monkeypatch.setattr(Budget, "charge", lambda self, seconds: charged.append(seconds))
    result = run(make_submission(tmp_path / "reference"))
    assert result.full_marks and charged
    assert TIME_BUDGET >= 20 * sum(charged), f"the reference's calls took {sum(charged):.2f} s"
    assert TIME_BUDGET <= 5 * 60, "a submission that spends the whole budget holds a judge for that long"
