"""Hidden checks for softmax: seeded random scores against the reference.

Tolerance: absolute 1e-6 plus relative 1e-6 on each weight.
"""

import numpy as np
import pytest

from grader.engine import verify

CASES = [((6,), -1), ((4, 7), -1), ((4, 7), 0), ((2, 3, 5), 1), ((2, 3, 5), -1), ((1, 5), -1)]


@pytest.mark.points(3)
@pytest.mark.parametrize("shape,axis", CASES, ids=[f"{'x'.join(map(str, s))}-axis{a}" for s, a in CASES])
def test_matches_reference(submission, reference, shape, axis):
    """Random scores of several shapes and axes match the reference softmax."""
    x = np.random.default_rng(sum(shape) * 10 + axis).normal(0, 3, size=shape)
    expected = reference.softmax.softmax(x, axis)
    received = verify.array(submission.softmax.softmax(x, axis), f"softmax(x, axis={axis})", shape=shape)
    verify.close(received, expected, f"softmax of random scores of shape {shape}, axis={axis}")
