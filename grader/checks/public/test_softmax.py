"""Public checks for exercise 1, softmax. They need no reference solution."""

import numpy as np
import pytest

from grader.engine import judge

# The scores of the two-number example (exercise 3) and the weights the lesson gives them.
LESSON_SCORES = [-1.53, 2.44, 0.79, -1.05, -0.64]
LESSON_WEIGHTS = [0.0147, 0.7768, 0.1492, 0.0237, 0.0357]  # shown to 0.01%

SHAPES = {"vector": (5,), "matrix": (3, 4), "3-D": (2, 3, 4)}


def scores(shape, seed=0):
    return np.random.default_rng(seed).normal(0, 2, size=shape)


def weights_of(submission, x, axis=-1, shape=None):
    x = np.asarray(x, dtype=float)
    return judge.array(submission.softmax.softmax(x, axis), "softmax's result", shape=shape or x.shape)


def diagnose_sums(weights, axis):
    """Name the likely mistake behind weights that do not sum to 1 along ``axis``."""
    sums = weights.sum(axis=axis)
    shown = judge.show(sums, judge.digits_to_differ(np.ones_like(sums), sums))
    others = [other for other in range(weights.ndim)
              if other != axis % weights.ndim and np.allclose(weights.sum(axis=other), 1, atol=1e-6)]
    if others:
        return (f"with axis={axis} the weights sum to 1 along axis {others[0]} instead: "
                "pass `axis` on to np.max and np.sum.")
    if np.allclose(weights.max(axis=axis), 1):
        return (f"the weights sum to {shown} and the largest weight is 1: did you divide by the "
                "max (or not divide at all) instead of dividing by the sum?")
    if np.allclose(sums, sums.flat[0]):
        total = float(sums.flat[0])
        shown = judge.show(total, judge.digits_to_differ(1.0, total))
        return f"the weights sum to {shown}: divide the exponentials by their sum."
    return f"sums along axis {axis} are {shown}, not all 1: is the sum taken over the right axis, with keepdims=True?"


def expect_weights(weights, x, axis=-1):
    """Softmax's three properties: positive (0 only for -inf), summing to 1, in the order of the scores."""
    judge.expect(np.all(weights[x > -np.inf] > 0), f"some weights are not positive: {judge.show(weights)}. "
                 "exp() of any finite score is positive, so every weight must be too.")
    judge.expect(np.allclose(weights.sum(axis=axis), 1, atol=1e-6), diagnose_sums(weights, axis))
    if not judge.ranked_like(weights, x, axis):
        flipped = " They follow it backwards: is a sign flipped?" if judge.ranked_like(weights, -x, axis) else ""
        judge.fail(f"the weights {judge.show(weights)} do not follow the order of the scores {judge.show(x)}: "
                   f"a higher score must always get a larger weight, because exp() is increasing.{flipped}")


@pytest.mark.points(2)
def test_lesson_scores(submission):
    """The two-number example: scores [-1.53, 2.44, 0.79, -1.05, -0.64] give 77.68% to "cat"."""
    weights = weights_of(submission, LESSON_SCORES)
    judge.close(weights, LESSON_WEIGHTS, "softmax of the lesson's scores", atol=6e-5, rtol=0,
                hint=f"In percent you gave {judge.percent(weights)}; the lesson has "
                     f"{judge.percent(LESSON_WEIGHTS)}. Softmax is exp(score) divided by the sum of exp(score).")


@pytest.mark.points(2)
@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_weights_positive_and_sum_to_one(submission, shape):
    """Weights are positive, sum to 1 along the last axis and keep the order of the scores."""
    x = scores(shape)
    expect_weights(weights_of(submission, x), x)


@pytest.mark.points(1)
@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_keeps_shape(submission, shape):
    """The weights have the shape of the scores, and are weights of those scores."""
    x = scores(shape, seed=1)
    weights = judge.array(submission.softmax.softmax(x), f"softmax of an array of shape {shape}", shape=shape)
    expect_weights(weights, x)


@pytest.mark.points(2)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_axis(submission, axis):
    """The weights sum to 1 along the axis asked for, not another one."""
    x = scores((3, 4), seed=2)
    expect_weights(weights_of(submission, x, axis=axis), x, axis)


@pytest.mark.points(1)
def test_shift_invariance(submission):
    """Adding the same number to every score changes nothing."""
    x = scores((2, 5), seed=3)
    base = weights_of(submission, x)
    for shift in (-7.0, 3.5, 40.0):
        judge.close(weights_of(submission, x + shift), base, f"softmax(scores + {shift:g})",
                    atol=1e-6, rtol=1e-6,
                    hint="exp(s + c) = exp(s) * exp(c), and the factor exp(c) cancels in the division.")
    expect_weights(base, x)


@pytest.mark.points(2)
@pytest.mark.parametrize("big", [1000.0, -1000.0], ids=["plus-1000", "minus-1000"])
def test_large_scores(submission, big):
    """Scores of +1000 or -1000 give finite weights: no overflow, no NaN."""
    x = np.array([big, big - 1.0, big - 3.0])
    # NaN or infinity here has one cause, which the scores show: name it, not every way softmax can give NaN.
    what = "overflows to inf, and inf/inf is NaN" if big > 0 else "underflows to 0, and 0/0 is NaN"
    weights = judge.finite(submission.softmax.softmax(x), f"softmax({judge.show(x)})", shape=(3,), cause=(
        f"exp() of every one of these scores {what}. Only the differences between scores matter: subtract the "
        "largest score first, so that the largest exp() is exactly 1."))
    expected = np.exp([0.0, -1.0, -3.0]) / np.exp([0.0, -1.0, -3.0]).sum()
    judge.close(weights, expected, f"softmax({judge.show(x)})", atol=1e-6,
                hint="Only the differences between scores matter: subtract the largest score first.")


@pytest.mark.points(1)
def test_minus_infinity_gets_zero(submission):
    """A score of -inf (a masked entry) gets a weight of exactly 0."""
    x = np.array([[1.0, -np.inf, 0.5], [-np.inf, 2.0, -np.inf]])
    weights = judge.array(submission.softmax.softmax(x), "softmax with -inf scores", shape=x.shape)
    judge.expect(np.all(weights[np.isinf(x)] == 0),
                 f"entries with score -inf got weights {judge.show(weights[np.isinf(x)])}, not exactly 0.")
    expect_weights(weights, x)


@pytest.mark.points(1)
def test_sharpness_limits(submission):
    """Scores times a big factor approach one-hot; times a tiny factor, equal weights."""
    x = np.array([0.3, 1.2, -0.4, 0.9])
    sharp = weights_of(submission, 200.0 * x)
    judge.close(sharp, [0.0, 1.0, 0.0, 0.0], "softmax(200 * scores)", atol=1e-6,
                hint="A large factor should give (almost) all the weight to the largest score.")
    flat = weights_of(submission, 1e-6 * x)
    judge.close(flat, [0.25] * 4, "softmax(0.000001 * scores)", atol=1e-5,
                hint="Scores that are nearly equal should give nearly equal weights.")


@pytest.mark.points(1)
@pytest.mark.parametrize("axis", [-1, 0])
def test_rows_far_apart(submission, axis):
    """Rows of scores far apart (near +1000 and near -1000) each get finite weights of their own."""
    rows = np.array([[1000.0, 1001.0, 998.0], [-1000.0, -999.0, -1002.0]])
    near_zero = rows - np.array([[1000.0], [-1000.0]])  # the same differences within each row
    x, moved = (rows, near_zero) if axis == -1 else (rows.T, near_zero.T)
    what = f"softmax of rows near +1000 and -1000 (axis={axis})"
    weights = judge.finite(submission.softmax.softmax(x, axis), what, shape=x.shape, cause=(
        "Each row (here one near +1000, one near -1000) needs its own shift: subtract each row's own largest "
        "score, np.max(x, axis=axis, keepdims=True). One largest score for the whole array shifts the row near "
        "-1000 down to -2000, where every exp() underflows to 0, and 0/0 is NaN."))
    expect_weights(weights, x, axis)
    judge.close(weights, weights_of(submission, moved, axis), what, atol=1e-6,
                hint="Each row keeps the weights of the same scores moved near 0: a row's shift cancels.")


@pytest.mark.points(1)
def test_arguments_unchanged(submission):
    """softmax leaves the scores it is given as they were: the caller still needs them."""
    x = scores((3, 4), seed=4)
    for axis in (-1, 0):
        weights, after = submission.softmax.softmax.arguments_after(x, axis)
        judge.unchanged({"x": x, "axis": axis}, after, f"softmax(x, axis={axis})")
        expect_weights(judge.array(weights, f"softmax(x, axis={axis})", shape=x.shape), x, axis)
