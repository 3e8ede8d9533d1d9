"""Public checks for exercise 1, softmax. They need no reference solution."""

import numpy as np
import pytest

from grader.engine import verify
from grader.checks.promised import promised
from grader.engine.errors import SubmissionError
from grader.engine.results import ErrorKind

# Every kind of input softmax's docstring and the lesson allow, and the checks (public and hidden) that try it:
# the one place to see what is covered. tests/checks/test_inputs.py holds each check named here to exist.
INPUTS = {
    "a vector, a matrix, a 3-D array": ("test_weights_positive_and_sum_to_one", "test_keeps_shape",
                                        "hidden"),
    "a single row, shape (1, n)": ("hidden",),
    "axis 0, 1, -1, and no axis (the default, -1)": ("test_axis", "hidden", "test_lesson_scores"),
    "a (nested) list, of floats or masked scores": ("test_arguments_unchanged",),
    "integer scores (the docstring's [2, 1, 0])": ("test_lesson_scores",),
    "scores near +1000 or -1000, or 1000 apart in one row (beyond exp's range)": ("test_large_scores",),
    "rows far apart in one array (one near +1000, one near -1000), along either axis": ("test_rows_far_apart",),
    "nearly equal scores, and scores far apart (times 1e-6, times 200)": ("test_sharpness_limits",),
    "shifted scores (+ -7, 3.5, 40)": ("test_shift_invariance",),
    "-inf beside finite scores (a mask), as an array and a list": ("test_minus_infinity_gets_zero",
                                                                   "test_arguments_unchanged"),
    "-inf beside allowed scores far below 0; -1e9 as a stand-in for -inf; allowed scores below -1e9": (
        "test_masked_scores_far_below_zero",),
    "every kind above, judged by the type the docstring promises": ("test_return_types",),
}
# Left out on purpose: a 0-d score (np.max has no axis -1 to take it along), +inf (the docstring does not say what
# it gets: inf - inf is NaN), a row of -inf alone (every weight 0/0; the docstring says nothing of it either).

# The scores of the two-number example (exercise 3) and the weights the lesson gives them.
LESSON_SCORES = [-1.53, 2.44, 0.79, -1.05, -0.64]
LESSON_WEIGHTS = [0.0147, 0.7768, 0.1492, 0.0237, 0.0357]  # shown to 0.01%

SHAPES = {"vector": (5,), "matrix": (3, 4), "3-D": (2, 3, 4)}


def scores(shape, seed=0):
    return np.random.default_rng(seed).normal(0, 2, size=shape)


def weights_of(submission, x, axis=-1, shape=None):
    x = np.asarray(x, dtype=float)
    return verify.array(submission.softmax.softmax(x, axis), "softmax's result", shape=shape or x.shape)


def diagnose_sums(weights, axis) -> tuple[str, str]:
    """The likely mistake behind weights that do not sum to 1 along ``axis``: what to say, and its name."""
    sums = weights.sum(axis=axis)
    shown = verify.show(sums, verify.digits_to_differ(np.ones_like(sums), sums))
    others = [other for other in range(weights.ndim)
              if other != axis % weights.ndim and np.allclose(weights.sum(axis=other), 1, atol=1e-6)]
    if others:
        return (f"with axis={axis} the weights sum to 1 along axis {others[0]} instead: "
                "pass `axis` on to np.max and np.sum."), "axis-ignored"
    if np.allclose(weights.max(axis=axis), 1):
        return (f"the weights sum to {shown} and the largest weight is 1: did you divide by the "
                "max (or not divide at all) instead of dividing by the sum?"), "divided-by-max"
    if np.allclose(sums, sums.flat[0]):
        total = float(sums.flat[0])
        shown = verify.show(total, verify.digits_to_differ(1.0, total))
        return f"the weights sum to {shown}: divide the exponentials by their sum.", "not-divided-by-sum"
    return (f"sums along axis {axis} are {shown}, not all 1: is the sum taken over the right axis, with "
            "keepdims=True?"), "sum-without-keepdims"


def expect_sums(weights, axis=-1):
    """Weights far from summing to 1 fail with the cause of their sums, before a check compares their values.

    Only the sums: float32 and float16 weights underflow to 0, and tie, where float64 ones do not.
    """
    if not np.allclose(weights.sum(axis=axis), 1, atol=1e-3):
        verify.fail(*diagnose_sums(weights, axis))


def expect_weights(weights, x, axis=-1):
    """Softmax's three properties: summing to 1, positive (but where exp() underflows), in the order of the scores."""
    # The sums first: weights of another axis (a wrong `axis`) can underflow to 0 along this one.
    if not np.allclose(weights.sum(axis=axis), 1, atol=1e-6):
        verify.fail(*diagnose_sums(weights, axis))
    within = x - np.max(x, axis=axis, keepdims=True) > -700  # exp() of a score 745 below the largest underflows to 0
    verify.expect(np.all(weights[within] > 0), lambda: f"some weights are not positive: {verify.show(weights)}. "
                  "exp() of any finite score is positive, so every weight must be too.", mistake="weights-not-positive")
    if not verify.ranked_like(weights, x, axis):
        backwards = verify.ranked_like(weights, -x, axis)
        verify.fail(f"the weights {verify.show(weights)} do not follow the order of the scores {verify.show(x)}: "
                    "a higher score must always get a larger weight, because exp() is increasing."
                    + (" They follow it backwards: is a sign flipped?" if backwards else ""),
                    "order-reversed" if backwards else "order-not-kept")


@pytest.mark.points(2)
def test_lesson_scores(submission):
    """The two-number example gives 77.68% to "cat"; the docstring's integer scores [2, 1, 0] give 66.5%."""
    weights = weights_of(submission, LESSON_SCORES)
    expect_sums(weights)  # weights that do not sum to 1 have a cause of their own
    verify.close(weights, LESSON_WEIGHTS, "softmax of the lesson's scores", atol=6e-5, rtol=0,
                 hint=f"In percent you gave {verify.percent(weights)}; the lesson has "
                     f"{verify.percent(LESSON_WEIGHTS)}. Softmax is exp(score) divided by the sum of exp(score).",
                 mistake="not-exp-over-sum")
    integers = np.array([2, 1, 0])  # scores may be integers: the docstring's own example
    try:
        received = submission.softmax.softmax(integers)
    except SubmissionError as error:
        if error.kind != ErrorKind.EXCEPTION:
            raise
        verify.fail(f"softmax(np.array([2, 1, 0])), integer scores, raised {error.message}. Scores may be integers: "
                    "turn them into floats first (np.asarray(x, dtype=float), or a float64 tensor).",
                    "integers-not-floats")
    verify.close(verify.array(received, "softmax of the integer scores [2, 1, 0]", shape=(3,)),
                 np.exp(integers) / np.exp(integers).sum(), "softmax of the integer scores [2, 1, 0]",
                 hint="The docstring's example: weights [0.665, 0.245, 0.090]. Integer scores are scores too.",
                 mistake="integers-not-floats")


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
    weights = verify.array(submission.softmax.softmax(x), f"softmax of an array of shape {shape}", shape=shape)
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
        verify.close(weights_of(submission, x + shift), base, f"softmax(scores + {shift:g})",
                     atol=1e-6, rtol=1e-6,
                     hint="exp(s + c) = exp(s) * exp(c), and the factor exp(c) cancels in the division.",
                     mistake="not-shift-invariant")
    expect_weights(base, x)


LARGE = {"plus-1000": [1000.0, 999.0, 997.0], "minus-1000": [-1000.0, -1001.0, -1003.0],
         "spread-1000": [-1000.0, 0.0, -1.0]}  # the last: one row whose scores lie 1000 apart


@pytest.mark.points(2)
@pytest.mark.parametrize("scores", LARGE.values(), ids=LARGE.keys())
def test_large_scores(submission, scores):
    """Scores of +1000 or -1000, or 1000 apart in one row, give finite weights: no overflow, no NaN."""
    x = np.array(scores)
    # NaN or infinity here has one cause, which the scores show: name it, not every way softmax can give NaN.
    if x[0] != x.max():  # the largest score is not the first: only a shift by the largest keeps exp() finite
        mistake = "shifted-by-another-score"
        cause = ("These scores lie 1000 apart: shifted by any score but the largest (the first, or the smallest), "
                 "the largest becomes +1000 and exp(1000) overflows to inf, and inf/inf is NaN. Subtract the largest "
                 "score along the axis, np.max(x, axis=axis, keepdims=True).")
    else:
        what = "overflows to inf, and inf/inf is NaN" if x[0] > 0 else "underflows to 0, and 0/0 is NaN"
        mistake = "largest-not-subtracted"
        cause = (f"exp() of every one of these scores {what}. Only the differences between scores matter: subtract "
                 "the largest score first, so that the largest exp() is exactly 1.")
    weights = verify.finite(submission.softmax.softmax(x), f"softmax({verify.show(x)})", shape=(3,), cause=cause,
                            mistake=mistake)
    expect_weights(weights, x)  # a wrong sum has its own cause (divided by the max, say), whatever the scores
    expected = np.exp(x - x.max()) / np.exp(x - x.max()).sum()
    verify.close(weights, expected, f"softmax({verify.show(x)})", atol=1e-6,
                 hint="Only the differences between scores matter: subtract the largest score first.",
                 mistake="largest-not-subtracted")


@pytest.mark.points(1)
def test_minus_infinity_gets_zero(submission):
    """A score of -inf (a masked entry) gets a weight of exactly 0."""
    x = np.array([[1.0, -np.inf, 0.5], [-np.inf, 2.0, -np.inf]])
    weights = verify.array(submission.softmax.softmax(x), "softmax with -inf scores", shape=x.shape, finite=False)
    nan_rows = np.isnan(weights).any(axis=1)
    if nan_rows.any() and np.array_equal(nan_rows, np.isneginf(x[:, 0])):  # NaN exactly where the first is -inf
        verify.fail(f"softmax with -inf scores is NaN in row {np.flatnonzero(nan_rows).tolist()}, exactly where the "
                    "first score is -inf: shifted by the first score, that row becomes -inf - (-inf), which is NaN. "
                    "Subtract each row's largest score, np.max(x, axis=axis, keepdims=True): it is finite as long as "
                    "one score of the row is.", "shifted-by-another-score")
    weights = verify.array(weights, "softmax with -inf scores")
    verify.expect(np.all(weights[np.isinf(x)] == 0),
                  f"entries with score -inf got weights {verify.show(weights[np.isinf(x)])}, not exactly 0.",
                  mistake="masked-weight-not-zero")
    expect_weights(weights, x)


# Masked rows whose allowed scores all lie far below 0: beside -inf, beside -1e9 (the finite stand-in for -inf that
# many models write), and below any such stand-in. float32 holds each one's differences (-3e9 and -3e9 - 512 are
# both multiples of float32's step there), so a float32 softmax gets the same weights.
MASKED_FAR_BELOW = np.array([[-1000.0, -np.inf, -1003.0, -1001.0],
                             [-np.inf, -np.inf, -2000.0, -1999.0],
                             [-1e9, -800.0, -1e9, -805.0],
                             [-np.inf, -3e9, -np.inf, -3e9 - 512.0]])


def _shifts_by_another_score(submission) -> str:
    """The name of the mistake where masked rows far below 0 give NaN, if the code does shift its scores (1000 and
    1001 stay finite): then the shift is by another score than the row's largest. Code that shifts by nothing
    gives NaN there too, and test_large_scores names that."""
    try:
        shifted = np.asarray(submission.softmax.softmax(np.array([1000.0, 1001.0])), dtype=float)
    except (TypeError, ValueError, SubmissionError):
        return ""
    return "shifted-by-another-score" if np.all(np.isfinite(shifted)) else ""


@pytest.mark.points(1)
def test_masked_scores_far_below_zero(submission):
    """Masked rows whose allowed scores all lie far below 0 (near -1000, or below a -1e9 mask) still get weights."""
    x = MASKED_FAR_BELOW
    what = "softmax of masked rows whose allowed scores lie far below 0"
    received = verify.array(submission.softmax.softmax(x), what, shape=x.shape, finite=False)
    nan_rows = np.flatnonzero(~np.isfinite(received).all(axis=1)).tolist()
    weights = verify.finite(received, what, mistake=_shifts_by_another_score(submission) if nan_rows else "", cause=(
        f"Row {nan_rows} is NaN: {verify.show(x[nan_rows[0]] if nan_rows else x, 0)}. Its allowed scores all lie far "
        "below 0, so only a shift by the row's own largest score keeps exp() from underflowing to 0, and 0/0 is NaN. "
        "np.max finds it as it is: a -inf is never the largest while one score of the row is finite, so no stand-in "
        "for the -inf (0, say) is needed."))
    expected = np.exp(x - x.max(axis=-1, keepdims=True))
    expected /= expected.sum(axis=-1, keepdims=True)
    # The stand-in for -inf is the diagnosis only where the rows without scores below -1e9 come out right: a
    # wrong axis or a division by the max fails those too, and has a check (and a name) of its own.
    stand_in = np.allclose(weights[:-1], expected[:-1], atol=1e-6)
    verify.close(weights, expected, what, atol=1e-6, hint=(
        "Each row's weights are exp(score - the row's largest score) over their sum, and a -inf gets exactly 0. "
        "The last row's allowed scores, near -3e9, lie below -1e9: a -inf replaced by -1e9 (or any finite stand-in) "
        "outscores them. Leave -inf as it is: exp(-inf) is exactly 0 by itself."),
        mistake="masked-weight-not-zero" if stand_in else "")


@pytest.mark.points(1)
def test_sharpness_limits(submission):
    """Scores times a tiny factor give equal weights; times a big factor, they approach one-hot."""
    x = np.array([0.3, 1.2, -0.4, 0.9])
    flat = weights_of(submission, 1e-6 * x)
    expect_sums(flat)  # weights that do not sum to 1 have a cause of their own
    verify.close(flat, [0.25] * 4, "softmax(0.000001 * scores)", atol=1e-5,
                 hint="Scores that are nearly equal should give nearly equal weights.", mistake="not-flat-in-the-limit")
    sharp = weights_of(submission, 200.0 * x)
    expect_sums(sharp)
    verify.close(sharp, [0.0, 1.0, 0.0, 0.0], "softmax(200 * scores)", atol=1e-6,
                 hint="A large factor should give (almost) all the weight to the largest score.",
                 mistake="not-sharp-in-the-limit")


@pytest.mark.points(1)
@pytest.mark.parametrize("axis", [-1, 0])
def test_rows_far_apart(submission, axis):
    """Rows of scores far apart (near +1000 and near -1000) each get finite weights of their own."""
    rows = np.array([[1000.0, 1001.0, 998.0], [-1000.0, -999.0, -1002.0]])
    near_zero = rows - np.array([[1000.0], [-1000.0]])  # the same differences within each row
    x, moved = (rows, near_zero) if axis == -1 else (rows.T, near_zero.T)
    what = f"softmax of rows near +1000 and -1000 (axis={axis})"
    received = verify.array(submission.softmax.softmax(x, axis), what, shape=x.shape, finite=False)
    # Two mistakes give NaN here, and the rows tell them apart: no shift at all overflows the row near +1000;
    # one shift for the whole array (by +1001) leaves that row finite and underflows the row near -1000.
    if not np.all(np.isfinite(received[0] if axis == -1 else received[:, 0])):
        mistake = "largest-not-subtracted"
        cause = ("The row near +1000 overflowed: exp(1000) is inf, and inf/inf is NaN. Only the differences between "
                 "scores matter: subtract each row's largest score first, np.max(x, axis=axis, keepdims=True).")
    else:
        mistake = "one-shift-for-all-rows"
        cause = ("Each row (here one near +1000, one near -1000) needs its own shift: subtract each row's own largest "
                 "score, np.max(x, axis=axis, keepdims=True). One largest score for the whole array shifts the row "
                 "near -1000 down to -2000, where every exp() underflows to 0, and 0/0 is NaN.")
    weights = verify.finite(received, what, cause=cause, mistake=mistake)
    expect_weights(weights, x, axis)
    verify.close(weights, weights_of(submission, moved, axis), what, atol=1e-6,
                 hint="Each row keeps the weights of the same scores moved near 0: a row's shift cancels.",
                 mistake="one-shift-for-all-rows")


def weights_along_some_axis(weights, x) -> bool:
    """Whether ``weights`` are softmax-like weights of ``x`` along one of its axes, whichever that is: positive
    where a score is finite, 0 where it is -inf."""
    finite = np.isfinite(x)
    return any(np.all(weights[finite] > 0) and np.all(weights[~finite] == 0)
               and np.allclose(weights.sum(axis=axis), 1, atol=1e-6)
               and verify.ranked_like(weights, x, axis) for axis in range(x.ndim))


def masked(shape, seed):
    """Scores with -inf where a mask hides them, on a checkerboard that leaves the first column and some score
    of every row and column finite (a wrong axis or a shift by the first score is another check's business):
    a softmax that writes over the -inf in place (to make them finite, say) changes the caller's mask."""
    x = scores(shape, seed)
    rows, columns = np.indices(shape)
    x[((rows + columns) % 2 == 1) & (columns > 0)] = -np.inf
    return x


# Every kind of scores the docstring allows: a vector, a matrix along either axis, a 3-D array, a nested list,
# masked scores as an array and as a list.
ARGUMENTS = {"vector": (scores((5,), seed=4), -1), "matrix": (scores((3, 4), seed=4), -1),
             "matrix-axis0": (scores((3, 4), seed=5), 0), "3-D": (scores((2, 3, 4), seed=6), 1),
             "list": (scores((2, 3), seed=7).tolist(), -1), "masked": (masked((3, 4), seed=8), -1),
             "masked-list": (masked((2, 5), seed=9).tolist(), -1)}


@pytest.mark.points(1)
@pytest.mark.parametrize("x,axis", ARGUMENTS.values(), ids=ARGUMENTS.keys())
def test_arguments_unchanged(submission, x, axis):
    """softmax leaves the scores it is given as they were, whatever their kind: the caller still needs them."""
    what = f"softmax(x, axis={axis}) of {'a list' if isinstance(x, list) else f'an array of shape {np.shape(x)}'}"
    weights, after = submission.softmax.softmax.arguments_after(x, axis)
    verify.unchanged({"x": x, "axis": axis}, after, what)
    # Weights along some axis: this check is about the arguments, and a wrong axis loses test_axis, not this one.
    weights = verify.array(weights, what, shape=np.shape(x))
    verify.expect(weights_along_some_axis(weights, np.asarray(x)),
                  f"{what} returned {verify.show(weights)}: besides leaving the scores alone, the result must be "
                  "weights, positive and summing to 1, in the order of the scores.")


@pytest.mark.points(1)
def test_return_types(submission):
    """softmax returns a numpy array of floats of x's shape, whatever kind of scores it is given: the right weights."""
    for x, axis in [([2, 1, 0], -1), (np.array([[1, 2], [3, 4]]), 0), ([[1.0, -np.inf, 0.5]], -1),
                    (np.array([5.0]), -1), (np.array([[3.0], [1.0]]), -1)]:
        exps = np.exp(np.asarray(x, dtype=float) - np.max(x, axis=axis, keepdims=True))
        promised(submission.softmax.softmax, x, axis, what=f"softmax({verify.show(x)}, axis={axis})",
                 shape=np.shape(x), expected=exps / exps.sum(axis=axis, keepdims=True))
