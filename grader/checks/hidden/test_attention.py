"""Hidden checks for attention: seeded random vectors against the reference.

Tolerance: absolute 1e-6 plus relative 1e-6 on weights; an output, an average
of value vectors, inherits from its weights an absolute 1e-6 times the sum of
the values' sizes.
"""

import numpy as np
import pytest

from grader.engine import verify
from grader.checks.attention_weights import mask_array

SHAPES = [(1, 3, 1, 1), (3, 4, 2, 5), (6, 6, 8, 3), (2, 9, 64, 4)]  # (queries, keys, d_k, d_v)


def inputs(shape, seed):
    m, n, d, dv = shape
    rng = np.random.default_rng(seed)
    return rng.normal(size=(m, d)), rng.normal(size=(n, d)), rng.normal(size=(n, dv)), rng


def compare(received, expected, what, values):
    pair = verify.pair(received, what)
    verify.close(verify.array(pair[0], f"the output of {what}"), expected[0], f"the output of {what}",
                 atol=verify.average_atol(values), rtol=0)
    verify.close(verify.array(pair[1], f"the weights of {what}"), expected[1], f"the weights of {what}",
                 atol=1e-6, rtol=1e-6)


@pytest.mark.points(1)
@pytest.mark.parametrize("shape", SHAPES, ids=["x".join(map(str, s)) for s in SHAPES])
def test_attend_matches_reference(submission, reference, shape):
    """attend on random vectors matches the reference."""
    Q, K, V, _ = inputs(shape, 11)
    what = f"attend(query of length {shape[2]}, {shape[1]} keys, values of length {shape[3]})"
    compare(submission.attention.attend(Q[0], K, V), reference.attention.attend(Q[0], K, V), what, V)


@pytest.mark.points(3)
@pytest.mark.parametrize("masked", [False, True], ids=["no-mask", "random-mask"])
@pytest.mark.parametrize("shape", SHAPES, ids=["x".join(map(str, s)) for s in SHAPES])
def test_sdpa_matches_reference(submission, reference, shape, masked):
    """scaled_dot_product_attention on random inputs, with and without a mask, matches the reference."""
    Q, K, V, rng = inputs(shape, 12)
    mask = None
    if masked:
        mask = rng.random((shape[0], shape[1])) < 0.6
        mask[np.arange(shape[0]), rng.integers(0, shape[1], shape[0])] = True  # every row allows a key
    what = f"scaled_dot_product_attention on Q {Q.shape}, K {K.shape}, V {V.shape}" + (" with a mask" if masked else "")
    compare(submission.attention.scaled_dot_product_attention(Q, K, V, mask),
            reference.attention.scaled_dot_product_attention(Q, K, V, mask), what, V)


@pytest.mark.points(1)
@pytest.mark.parametrize("n", [3, 10])
def test_causal_mask_matches_reference(submission, reference, n):
    """causal_mask(n) matches the reference."""
    expected = reference.attention.causal_mask(n)
    received = mask_array(submission.attention.causal_mask(n), n)
    verify.expect(np.array_equal(received, expected), f"causal_mask({n}) differs from the expected mask.")
