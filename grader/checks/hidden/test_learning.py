"""Hidden checks for exercise 5: seeded random records against the reference and against the truth.

Keys are random floats in [0, 10], so the nearest lookup has no ties.
Prices are in pounds, not thousands, in the fitting case: the loss is a
million times larger and the learning rate passed is a million times
smaller, so an implementation that ignores ``lr`` overshoots.
"""

import numpy as np
import pytest

from grader.engine import verify
from grader.checks.learning_results import LOSS_RTOL, SLOPE_ATOL, descent, slope_pair

SEEDS = [0, 1, 2]
# The fits' steps: at lr 5e-10 every seed's sharpness is within 2e-4 of the truth after 100 (the check allows 0.005).
STEPS = 100


def records(seed, n=6):
    rng = np.random.default_rng(seed)
    return rng, rng.uniform(0, 10, n), rng.normal(300, 80, n)


@pytest.mark.points(1)
@pytest.mark.parametrize("seed", SEEDS)
def test_lookups_match_reference(submission, reference, seed):
    """soft_answer and nearest_answer on random records and queries match the reference."""
    rng, keys, values = records(seed)
    queries, sharpness = rng.uniform(-1, 11, 5), rng.uniform(0.2, 3.0)
    for function, args in [("soft_answer", (keys, values, sharpness)), ("nearest_answer", (keys, values))]:
        what = f"{function}(5 random queries, random records)"
        expected = getattr(reference.learning, function)(queries, *args)
        received = verify.array(getattr(submission.learning, function)(queries, *args), what, shape=expected.shape)
        verify.close(received, expected, what)


@pytest.mark.points(2)
@pytest.mark.parametrize("seed", SEEDS)
def test_slopes_match_reference(submission, reference, seed):
    """answer_slope and nearest_slope on random records and queries match the reference."""
    rng, keys, values = records(seed)
    sharpness = rng.uniform(0.2, 3.0)
    for query in rng.uniform(-1, 11, 3):
        for function, args in [("answer_slope", (keys, values, sharpness)), ("nearest_slope", (keys, values))]:
            what = f"{function}({query:.4g}, random records)"
            answer, slope = slope_pair(getattr(submission.learning, function)(query, *args), what)
            expected_answer, expected_slope = getattr(reference.learning, function)(query, *args)
            verify.close(answer, expected_answer, f"the answer of {what}")
            verify.close(slope, expected_slope, f"the slope of {what}", atol=SLOPE_ATOL, rtol=1e-6)


@pytest.mark.points(2)
@pytest.mark.parametrize("seed", SEEDS)
def test_fit_matches_reference(submission, reference, seed):
    """fit_sharpness recovers a random sharpness from random records priced in pounds, as the reference does."""
    rng, keys, values = records(seed)
    values = 1000 * values  # pounds
    truth = rng.uniform(0.3, 2.0)
    queries = np.linspace(keys.min(), keys.max(), 9)
    answers = reference.learning.soft_answer(queries, keys, values, truth)
    args = (queries, answers, keys, values, 0.1, STEPS, 5e-10)
    what = f"fit_sharpness on random records, answered at sharpness {truth:.4f}, lr=5e-10"
    expected_sharpness, expected_losses = reference.learning.fit_sharpness(*args)
    sharpness, losses = descent(submission.learning.fit_sharpness(*args), what)
    verify.expect(len(losses) == STEPS, f"{what} returned {len(losses)} losses for {STEPS} steps.",
                  mistake="not-one-loss-per-step")
    verify.close(losses[:20], expected_losses[:20], f"the first 20 losses of {what}", rtol=10 * LOSS_RTOL, atol=0)
    verify.close(sharpness, truth, what, atol=0.005, rtol=0)
    verify.close(sharpness, expected_sharpness, what, atol=0.005, rtol=0)
