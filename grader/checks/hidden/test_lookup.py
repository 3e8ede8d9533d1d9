"""Hidden checks for the lookups: seeded random records against the reference.

Keys are random floats, so ties (where the rule could differ) have
probability 0. Tolerance: absolute 1e-6 plus relative 1e-6 on weights and
looked-up values; a soft answer, an average of values, inherits from its
weights an absolute 1e-6 times the sum of the values' sizes.
"""

import numpy as np
import pytest

from grader.engine import verify

SEEDS = [0, 1, 2]


def records(seed, n=7):
    rng = np.random.default_rng(seed)
    keys = rng.uniform(0, 10, size=n)
    values = rng.normal(100, 40, size=n)
    return rng, keys, values


@pytest.mark.points(1)
@pytest.mark.parametrize("seed", SEEDS)
def test_exact_matches_reference(submission, reference, seed):
    """Exact lookups of present and absent keys match the reference."""
    rng, keys, values = records(seed)
    for query in [keys[3], keys[0], keys[3] + 0.5, -1.0]:
        expected = reference.lookup.exact_lookup(float(query), keys, values)
        received = submission.lookup.exact_lookup(float(query), keys, values)
        what = f"exact_lookup({query:.4g}, ...) on random records"
        if expected is None:
            verify.expect(received is None, f"{what}: expected None, received {verify.show(received)}.")
        else:
            verify.close(verify.number(received, what), expected, what)


@pytest.mark.points(1)
@pytest.mark.parametrize("seed", SEEDS)
def test_nearest_matches_reference(submission, reference, seed):
    """Nearest lookups of random queries match the reference."""
    rng, keys, values = records(seed)
    for query in rng.uniform(-2, 12, size=6):
        what = f"nearest_lookup({query:.4g}, ...) on random records"
        expected = reference.lookup.nearest_lookup(float(query), keys, values)
        verify.close(verify.number(submission.lookup.nearest_lookup(float(query), keys, values), what), expected, what)


@pytest.mark.points(3)
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("sharpness", [0.3, 2.0])
def test_soft_matches_reference(submission, reference, seed, sharpness):
    """Soft lookups of random queries, one at a time and all at once, match the reference."""
    rng, keys, values = records(seed)
    queries = rng.uniform(-1, 11, size=5)
    for query in queries[:2]:
        what = f"soft_lookup({query:.4g}, random records, sharpness={sharpness:g})"
        expected_answer, expected_weights = reference.lookup.soft_lookup(float(query), keys, values, sharpness)
        answer, weights = verify.pair(submission.lookup.soft_lookup(float(query), keys, values, sharpness), what)
        verify.close(verify.number(answer, what), expected_answer, f"the answer of {what}",
                     atol=verify.average_atol(values), rtol=0)
        verify.close(verify.array(weights, f"the weights of {what}"), expected_weights, f"the weights of {what}",
                     atol=1e-6, rtol=1e-6)
    what = f"soft_lookup(5 random queries, sharpness={sharpness:g})"
    expected_answers, expected_weights = reference.lookup.soft_lookup(queries, keys, values, sharpness)
    answers, weights = verify.pair(submission.lookup.soft_lookup(queries, keys, values, sharpness), what)
    verify.close(verify.array(answers, f"the answers of {what}"), expected_answers, f"the answers of {what}",
                 atol=verify.average_atol(values), rtol=0)
    verify.close(verify.array(weights, f"the weights of {what}"), expected_weights, f"the weights of {what}",
                 atol=1e-6, rtol=1e-6)
