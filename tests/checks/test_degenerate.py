"""Degenerate answers earn (almost) nothing: under 2% of the points, all checks together.

Every strategy of ``tests/degenerate.py`` is graded once, with every function
of every exercise degenerate. For each check we take the most points any
strategy earned on it: the sum of those maxima is what a learner could farm by
picking, check by check, the best lazy answer.
"""

import pytest

import degenerate
from helpers import run_batch
from grader.engine import registry

BUDGET = 0.02  # of the kit's total points


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """{strategy: {(exercise, check): points earned}}, the strategies graded as one class, as `grade` would."""
    folders = {strategy: degenerate.write(tmp_path_factory.mktemp(strategy), strategy)
               for strategy in degenerate.STRATEGIES}
    results = run_batch(folders, [e.module for e in registry.EXERCISES], tmp_path_factory.mktemp("class"))
    earned = {}
    for strategy, result in results.items():
        earned[strategy] = {}
        for exercise in result.exercises:
            for check in exercise.checks:
                key = (exercise.name, check.check)
                earned[strategy][key] = earned[strategy].get(key, 0.0) + check.points
    return earned


def best_per_check(graded) -> dict[tuple[str, str], float]:
    checks = {key for points in graded.values() for key in points}
    return {key: max(points.get(key, 0.0) for points in graded.values()) for key in sorted(checks)}


def test_degenerate_answers_earn_under_two_percent(graded):
    total = sum(exercise.max_points for exercise in registry.EXERCISES)
    best = best_per_check(graded)
    for strategy, points in graded.items():
        print(f"{strategy:>12}: {sum(points.values()):5.2f} / {total:g}")
    leaks = {f"{module}:{check}": round(points, 2) for (module, check), points in best.items() if points}
    print("checks a degenerate answer passes:", leaks)
    assert sum(best.values()) < BUDGET * total, leaks


def test_every_strategy_was_graded_on_every_check(graded):
    """The bound above means nothing if a strategy was graded on fewer checks than the registry lists."""
    expected = {(e.module, check) for e in registry.EXERCISES for check in e.points}
    for strategy, points in graded.items():
        assert set(points) == expected, strategy
