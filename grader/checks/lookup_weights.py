"""What exercise 2's lookup checks share: the right weights, the verdicts on wrong ones, and the learner's answer
to one lookup read and judged (an exact lookup's price; a soft lookup's answer and weights).

A wrong score that learners write (the sign flipped, the distance not squared, the sharpness ignored) is named
by a second call wherever a check meets it; closer keys must weigh more; NaN weights have their cause told.
"""

import numpy as np

from grader.engine import verify
from grader.engine.errors import SubmissionError
from grader.lesson import lesson

BEDROOMS, PRICES = list(lesson.BEDROOMS), list(lesson.PRICES)  # prices in thousands of pounds


def softmax(scores):
    exps = np.exp(scores - np.max(scores))
    return exps / exps.sum()


# Scores a learner writes instead of -sharpness * (query - key)^2, by what is wrong with them, and its name.
LOOK_ALIKES = {
    ("the sign of the score is flipped: closer keys must get MORE weight (score = -sharpness * d^2)",
     "score-sign-flipped"): lambda d, sharpness: sharpness * d**2,
    ("the distance is not squared (|query - key| instead of (query - key)^2)",
     "distance-not-squared"): lambda d, sharpness: -sharpness * np.abs(d),
    ("`sharpness` is ignored: the scores must be multiplied by it", "sharpness-ignored"): lambda d, sharpness: -d**2,
}
# Where every look-alike's weights differ from the others' and from the right ones, by far more than float32's
# rounding: at a check's own inputs two of them may agree (one-hot when sharp, or at sharpness 0 or 1).
PROBE_QUERY, PROBE_SHARPNESS = 2.6, 0.7


def right_weights(query, sharpness, keys=BEDROOMS):
    return softmax(-sharpness * (np.asarray(keys, dtype=float) - query) ** 2)


def fail_if_look_alike(submission, weights, query, sharpness, keys=BEDROOMS):
    """Wrong weights made by a well-known wrong score fail with its name, whichever check asked: the checks'
    own verdicts would each blame a consequence of it (the nearer keys lighter, the answer jumping).

    Which wrong score it is, is asked of a second call, at :data:`PROBE_QUERY` and :data:`PROBE_SHARPNESS`.
    """
    if np.allclose(weights, right_weights(query, sharpness, keys), atol=1e-4):
        return
    try:
        _, probed = verify.pair(submission.lookup.soft_lookup(PROBE_QUERY, BEDROOMS, PRICES, PROBE_SHARPNESS),
                                "soft_lookup")
        probed = np.asarray(probed, dtype=float)
    except (SubmissionError, verify.CheckFailure, TypeError, ValueError):
        return  # the check's own verdict says what is wrong
    if probed.shape != (len(BEDROOMS),) or np.allclose(probed, right_weights(PROBE_QUERY, PROBE_SHARPNESS), atol=1e-4):
        return
    distances = np.asarray(BEDROOMS, dtype=float) - PROBE_QUERY
    for (cause, mistake), scores in LOOK_ALIKES.items():
        if np.allclose(probed, softmax(scores(distances, PROBE_SHARPNESS)), atol=1e-4):
            verify.fail(f"For query {query:g} and sharpness {sharpness:g} your weights are {verify.percent(weights)}, "
                        f"and for query {PROBE_QUERY:g} and sharpness {PROBE_SHARPNESS:g} they are "
                        f"{verify.percent(probed)}: {cause}.", mistake)


def expect_closer_keys_weigh_more(weights, query, keys=BEDROOMS, sharpness=None):
    """The anchor of the soft-lookup property checks: equal, constant or one-hot weights cannot pass it.

    With ``sharpness`` given, every key whose score is far from underflowing
    must get some weight: softmax never gives exactly 0 to a finite score.
    """
    distances = abs(query - np.asarray(keys, dtype=float))
    verify.expect(verify.ranked_like(weights, -distances),
                  lambda: f"for query {query:g} the weights {verify.percent(weights)} do not favour the keys closest "
                  "to it: a nearer key has a higher score, -sharpness * (query - key)^2, so it must get more weight.",
                  mistake="nearer-not-heavier")
    if sharpness is not None:
        scores = -sharpness * distances**2
        verify.expect(np.all(weights[scores - scores.max() > -80] > 0),  # exp(-80) is a float32 number yet
                      f"for query {query:g} and sharpness {sharpness:g} some keys got a weight of exactly 0: "
                      f"{verify.show(weights)}. A soft lookup gives every key a share, exp(score) over the sum, "
                      "however small: is all the weight put on the nearest key (a hard lookup)?", mistake="hard-lookup")


def underflow_cause(submission, scores) -> tuple[str, str]:
    """Why weights of ``scores`` are NaN, and the mistake's name: the learner's softmax, tried on them, says whether
    it is the cause (then the mistake is exercise 1's, which softmax's checks name, so none is given here)."""
    try:
        theirs = np.asarray(submission.softmax.softmax(scores), dtype=float)
    except (SubmissionError, TypeError, ValueError):
        theirs = None
    if theirs is not None and theirs.shape == scores.shape and not np.all(np.isfinite(theirs)):
        return (f"The scores here are {verify.show(scores, 0)}, and your softmax (exercise 1) itself gives NaN "
                "for them: there, subtract the largest score (not the first one), and this follows."), ""
    cause = (f"The scores here are {verify.show(scores, 0)}: exp() of every one of them underflows to 0, and 0/0 is "
             "NaN. Dividing exp(score) by its sum is softmax without its safety step: pass the scores to your softmax, "
             "which subtracts the largest score first, so the best key's exp() is exactly 1.")
    return cause, "exp-over-sum-not-softmax"


def expect_found(submission, query, price, keys=BEDROOMS, values=PRICES, hint="", mistake=""):
    """The learner's exact lookup of ``query`` finds ``price``.

    ``hint`` and ``mistake``: the likely cause of a wrong price, and its name (by default, the key returned)."""
    if not hint:
        hint, mistake = ("Return the value stored with the matching key, not the key or its position.",
                         "key-instead-of-value")
    what = f"exact_lookup({query:g}, ...)" if keys is BEDROOMS else f"exact_lookup({query:g}, keys={keys}, ...)"
    found = submission.lookup.exact_lookup(query, keys, values)
    verify.expect(found is not None, f"{what} returned None, but key {query:g} is there.")
    verify.close(verify.number(found, what), price, what, hint=hint, mistake=mistake)


def soft(submission, query, sharpness, keys=BEDROOMS, values=PRICES):
    """The learner's (answer, weights) for one query, checked for type and shape, and for a well-known wrong score."""
    what = f"soft_lookup({query:g}, ..., sharpness={sharpness:g})"
    answer, weights = verify.pair(submission.lookup.soft_lookup(query, keys, values, sharpness), what,
                                  "(answer, weights)")
    answer = verify.number(answer, f"the answer of {what}")
    weights = verify.array(weights, f"the weights of {what}", shape=(len(keys),))
    fail_if_look_alike(submission, weights, query, sharpness, keys)
    return answer, weights
