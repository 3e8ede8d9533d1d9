"""What exercise 3's attention checks share: the verdicts on weights that do not follow the scores, an inverted
mask, and NaN weights, whose cause the learner's own softmax is asked to tell; the readings of a learner's answer
(weights as score differences, a causal mask as an array); and attention as the lesson computes it, the values a
check expects.
"""

import numpy as np

from grader.engine import verify
from grader.engine.errors import SubmissionError


def expect_mask_not_inverted(weights, mask, what):
    """An inverted mask, whatever else the check is about: NaN exactly in the rows the mask allows whole (every
    score there became -inf), and in every other row all the weight on the pairs it forbids. An overflow in the
    rows with most keys gives NaN there too, but leaves the weight of the other rows where the mask allows it."""
    if mask is None:
        return
    weights, mask = np.asarray(weights, dtype=float), np.asarray(mask, dtype=bool)
    nan_rows = np.isnan(weights).any(axis=1)
    others = ~nan_rows
    forbidden_only = np.allclose(np.where(mask[others], weights[others], 0).sum(axis=1), 0)
    if nan_rows.any() and others.any() and forbidden_only and np.array_equal(nan_rows, mask.all(axis=1)):
        verify.fail(f"the weights of {what} are NaN in rows {np.flatnonzero(nan_rows).tolist()}, exactly the rows "
                    "where the mask allows every key: every score there became -inf, so the mask is inverted. "
                    "True means the query may attend to that key; False gets -inf.", "mask-inverted")


def expect_follow_scores(weights, scores, what="the weights"):
    """The anchor of the property checks: a key with a higher score gets more weight, and every key within reach of
    the best some weight (equal weights fail, and so do one-hot weights: a hard lookup)."""
    scores = np.asarray(scores, dtype=float)
    verify.expect(verify.ranked_like(weights, scores),
                  lambda: f"{what} {verify.show(weights)} do not follow the scores {verify.show(scores)}: a key "
                  "whose dot product with the query is higher must get more weight.",
                  mistake="weights-do-not-follow-scores")
    with np.errstate(invalid="ignore"):  # -inf - -inf in a row that allows nothing: not a row of these checks
        within = scores - np.max(scores, axis=-1, keepdims=True) > -80  # exp(-80) is a float32 number yet
    verify.expect(np.all(np.asarray(weights)[within] > 0),
                  lambda: f"{what} {verify.show(weights)} give some keys a weight of exactly 0 though their scores "
                  f"{verify.show(scores)} are within 80 of the best: softmax gives every allowed key a share, however "
                  "small. Is all the weight put on the best key (a hard lookup)?", mistake="hard-lookup")


OVERFLOW = ("exp() of a score above about 709 overflows to inf, and inf/inf is NaN: subtract the largest score of "
            "each row before exp(), as your softmax from exercise 1 does (or call that softmax).")


def overflow_cause(submission, scores, what_else="") -> tuple[str, str]:
    """Why the weights of ``scores`` are not finite: the learner's own softmax, tried on them, says which cause
    (what to say, and its name)."""
    rows = np.atleast_2d(scores)
    try:
        theirs = np.asarray(submission.softmax.softmax(rows, -1), dtype=float)
    except (SubmissionError, TypeError, ValueError):
        theirs = None
    if theirs is not None and theirs.shape == rows.shape and not np.all(np.isfinite(theirs)):
        return (f"Its scores reach {np.max(scores[np.isfinite(scores)]):.0f}, and your softmax (exercise 1) itself "
                "gives NaN or infinity for them: subtract the largest score of each row (not the first, not a "
                "global one) there, and this follows."), "largest-not-subtracted"
    return (f"Its scores reach {np.max(scores[np.isfinite(scores)]):.0f}: {OVERFLOW}{what_else}",
            "largest-not-subtracted")


def finite(value) -> bool:
    """Whether ``value`` is an array of numbers, all finite (anything else is for verify.finite to say)."""
    try:
        return bool(np.all(np.isfinite(np.asarray(value, dtype=float))))
    except (TypeError, ValueError):
        return True


def log_ratios(weights):
    """Each weight's log relative to the second's: the score differences, where the weights are softmax's.

    A weight of 0 (a hard lookup) gives -inf or NaN, which the comparison then fails, without numpy's warning.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(weights) - np.log(weights[1])


def mask_array(mask, n: int) -> np.ndarray:
    """``causal_mask(n)``'s result as an array; an additive float mask (0 and -inf) is told why it is not one."""
    if isinstance(mask, np.ndarray) and mask.dtype.kind == "f" and mask.size and np.isneginf(mask).any() and \
            np.all((mask == 0) | np.isneginf(mask)):
        verify.fail(f"causal_mask({n}) returned floats, 0 where a token may look and -inf where it may not: an "
                    "additive mask, as PyTorch's generate_square_subsequent_mask makes, to be added to the scores. "
                    "Here the mask must be boolean, True where row i may attend to column j (np.tril of True): "
                    "scaled_dot_product_attention itself turns False into -inf.", "additive-float-mask")
    return verify.array(mask, f"causal_mask({n})", shape=(n, n))


def right_attention(Q, K, V, mask=None, scaled=True):
    """(output, weights) as the lesson computes them: softmax of the dot products (over sqrt(d) when ``scaled``,
    -inf where ``mask`` is False), then the weights times the values. One query or a matrix of them."""
    Q, K, V = (np.asarray(x, dtype=float) for x in (Q, K, V))
    scores = Q @ K.T / (np.sqrt(K.shape[-1]) if scaled else 1.0)
    if mask is not None:
        scores = np.where(np.asarray(mask, dtype=bool), scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return np.dot(weights, V), weights
