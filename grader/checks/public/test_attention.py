"""Public checks for exercise 3: attention with query, key and value vectors."""

import numpy as np
import pytest

from grader.checks.attention_weights import (expect_follow_scores, expect_mask_not_inverted, finite, log_ratios,
                                             mask_array, overflow_cause, right_attention)
from grader.engine import verify
from grader.checks.promised import promised
from grader.lesson.lesson import KEYS, QUERY, VALUES

# Every kind of input the docstrings and the lesson allow that the checks (public and hidden) try, in one place;
# tests/checks/test_inputs.py holds each check named here to exist.
INPUTS = {
    "the two-number example (d = 2, five tokens)": ("test_two_number_example", "test_output_mixes_values"),
    "random queries, keys and values of several sizes": (
        "test_attend_weights_sum_to_one", "test_output_inside_values", "hidden",
        "hidden"),
    "queries scaled by a factor, up to 400 times as long (scores beyond exp's range)": (
        "test_query_length_is_sharpness", "test_long_queries"),
    "a boolean mask, None, a row allowing one key, a causal mask": (
        "test_mask_gives_exact_zero", "test_mask_true_means_allowed", "test_causal_attention",
        "hidden"),
    "a mask forbidding each row's best key, with scores beyond exp's range": ("test_long_queries",),
    "a mask over allowed scores all far below 0 (near -20000), below a finite stand-in for -inf; d_k = 1": (
        "test_mask_over_scores_far_below_zero",),
    "causal_mask(n) for several n": ("test_causal_mask", "hidden"),
    "arguments as arrays and as lists": ("test_arguments_unchanged",),
    "lists, integers, one key, one query, judged by the type the docstring promises": ("test_return_types",),
}
# Left out on purpose: a row the mask forbids whole (the docstring says every row allows one key at least), an
# additive float mask (the docstring asks for a boolean one), allowed scores below -1e9 (-1e9 masking, the Annotated
# Transformer's, is a right answer the kit keeps: test_mask_gives_exact_zero says so).

LESSON_WEIGHTS = [0.0147, 0.7768, 0.1492, 0.0237, 0.0357]  # shown to 0.01%


def attend(submission, query, keys=KEYS, values=VALUES):
    what = f"attend(query={verify.show(np.asarray(query))}, ...)"
    output, weights = verify.pair(submission.attention.attend(query, keys, values), what)
    return (verify.array(output, f"the output of {what}", shape=(values.shape[1],)),
            verify.array(weights, f"the weights of {what}", shape=(len(keys),)))


def sdpa(submission, Q, K, V, mask=None):
    what = "scaled_dot_product_attention(Q, K, V" + (", mask)" if mask is not None else ")")
    output, weights = verify.pair(submission.attention.scaled_dot_product_attention(Q, K, V, mask), what)
    weights = verify.array(weights, f"the weights of {what}", shape=(len(Q), len(K)), finite=False)
    expect_mask_not_inverted(weights, mask, what)
    return (verify.array(output, f"the output of {what}", shape=(len(Q), V.shape[1])),
            verify.array(weights, f"the weights of {what}"))


def random_qkv(seed, m=4, n=5, d=8, dv=3):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(m, d)), rng.normal(size=(n, d)), rng.normal(size=(n, dv))


@pytest.mark.points(3)
def test_two_number_example(submission):
    """The two-number example: "the" gives "cat" 77.68% of its attention."""
    _, weights = attend(submission, QUERY)
    hint, mistake = "Score each key with its dot product with the query, then softmax.", ""
    flipped = np.exp(-KEYS @ QUERY) / np.exp(-KEYS @ QUERY).sum()
    scaled = np.exp(KEYS @ QUERY / np.sqrt(len(QUERY))) / np.exp(KEYS @ QUERY / np.sqrt(len(QUERY))).sum()
    if np.allclose(weights, flipped, atol=1e-4):
        hint = "The weights favour the keys that point *away* from the query: is the score's sign flipped?"
        mistake = "score-sign-flipped"
    elif np.allclose(weights, scaled, atol=1e-4):
        hint = (f"These scores were divided by sqrt(d) = {np.sqrt(len(QUERY)):.3g}, as in scaled_dot_product_attention "
                "(calling it with the query as a one-row Q does that): attend scores each key with the plain dot "
                "product, query . key.")
        mistake = "attend-divided-by-sqrt-d"
    verify.close(weights, LESSON_WEIGHTS, "the weights over The/cat/sat/on/the", atol=6e-5, rtol=0,
                 hint=f"You gave {verify.percent(weights)}. {hint}", mistake=mistake)
    action = np.array([0.3, 1.4])  # the same keys asked for an action instead of a thing: "sat" leads
    _, weights = attend(submission, action)
    expected = np.exp(KEYS @ action) / np.exp(KEYS @ action).sum()
    verify.close(weights, expected, "the weights over The/cat/sat/on/the for the query (0.3, 1.4)", atol=1e-6,
                 hint=f"You gave {verify.percent(weights)}; dot products then softmax give {verify.percent(expected)}.")


@pytest.mark.points(2)
def test_output_mixes_values(submission):
    """The output is the weighted sum of the value vectors (not of the keys)."""
    output, weights = verify.pair(submission.attention.attend(QUERY, KEYS, VALUES), "attend(...)")
    weights = verify.array(weights, "the weights of attend(...)", shape=(5,))
    output = verify.array(output, "the output of attend(...)")
    if output.shape == (2,) and np.allclose(output, weights @ KEYS, atol=1e-6):
        verify.fail("The output is the weighted sum of the *keys*. Keys only decide the weights; the "
                    "output is sum(weights[j] * values[j]).", "keys-mixed-not-values")
    verify.close(output, weights @ VALUES, "the output", atol=1e-6,
                 hint="The output is sum over j of weights[j] * values[j] (weights @ values).",
                 mistake="output-not-weights-times-values")
    expect_follow_scores(weights, KEYS @ QUERY)
    Q, K, V = random_qkv(10, d=2)  # and for a query of the judge's own
    output, weights = attend(submission, Q[0], K, V)
    verify.close(output, weights @ V, "the output for a random query", atol=1e-6,
                 hint="The output is sum over j of weights[j] * values[j] (weights @ values).",
                 mistake="output-not-weights-times-values")
    expect_follow_scores(weights, K @ Q[0])


@pytest.mark.points(1)
def test_attend_weights_sum_to_one(submission):
    """attend's weights are positive and sum to 1."""
    for seed in range(3):
        Q, K, V = random_qkv(seed)
        _, weights = attend(submission, Q[0], K, V)
        verify.expect(np.all(weights > 0), f"some weights are not positive: {verify.show(weights)}.",
                      mistake="weights-not-positive")
        verify.close(weights.sum(), 1.0, "the sum of the weights", atol=1e-6, hint="Use softmax on the scores.",
                     mistake="weights-not-normalised")
        expect_follow_scores(weights, K @ Q[0])


@pytest.mark.points(1)
def test_query_length_is_sharpness(submission):
    """Scaling the query by c multiplies every score by c: long queries are sharp, short ones bland."""
    _, base = attend(submission, QUERY)
    scores = log_ratios(base)
    for factor in (0.5, 3.0):
        _, scaled = attend(submission, factor * QUERY)
        verify.close(log_ratios(scaled), factor * scores,
                     f"the log-weight differences for {factor:g} x query", atol=1e-6,
                     hint="Scores are plain dot products query . key, which grow in proportion to the query.",
                     mistake="scores-not-plain-dot-products")
    _, short = attend(submission, 1e-6 * QUERY)
    verify.close(short, [0.2] * 5, "the weights for a very short query", atol=1e-5,
                 hint="A query of length ~0 scores every key ~0: equal weights, a bland average.",
                 mistake="scores-not-plain-dot-products")
    expect_follow_scores(base, KEYS @ QUERY)


@pytest.mark.points(1)
def test_output_inside_values(submission):
    """The output is a convex combination: inside the box the value vectors span."""
    for seed in range(3):
        Q, K, V = random_qkv(seed, d=3)
        output, weights = attend(submission, 4.0 * Q[0], K, V)
        low, high = V.min(axis=0) - 1e-9, V.max(axis=0) + 1e-9
        verify.expect(np.all((low <= output) & (output <= high)),
                      f"the output {verify.show(output)} lies outside the range of the values "
                      f"(from {verify.show(low)} to {verify.show(high)}): weights that are positive and sum to 1 "
                      "can only average the values.", mistake="output-outside-values")
        expect_follow_scores(weights, K @ Q[0])


@pytest.mark.points(2)
def test_scores_scaled_by_sqrt_d(submission):
    """Scores are Q @ K.T divided by sqrt(d_k)."""
    Q, K, V = random_qkv(3, d=16)
    _, weights = sdpa(submission, Q, K, V)
    raw = Q @ K.T
    with np.errstate(divide="ignore", invalid="ignore"):  # a weight of 0 is -inf here, and the comparisons say so
        log_weights = np.log(weights)
        centred = log_weights - log_weights.mean(axis=1, keepdims=True)
    for divisor, mistake, name in [(1.0, "the scores are not divided by sqrt(d_k)", "not-divided-by-sqrt-dk"),
                                   (16.0, "the scores are divided by d_k, not sqrt(d_k)", "divided-by-dk")]:
        wrong = raw / divisor
        if np.allclose(centred, wrong - wrong.mean(axis=1, keepdims=True), atol=1e-6):
            verify.fail(f"With d_k = 16, {mistake}: divide Q @ K.T by sqrt(16) = 4.", name)
    expected = raw / 4.0
    verify.close(centred, expected - expected.mean(axis=1, keepdims=True),
                 "the log-weights (up to a constant per row) with d_k = 16", atol=1e-6,
                 hint="scores = Q @ K.T / sqrt(d_k) with d_k = K.shape[-1], then softmax along each row.")


@pytest.mark.points(1)
def test_matrix_output_mixes_values(submission):
    """Each output row is its weights times V, and each row of weights sums to 1."""
    Q, K, V = random_qkv(4)
    output, weights = sdpa(submission, Q, K, V)
    verify.close(weights.sum(axis=1), np.ones(len(Q)), "the row sums of the weights", atol=1e-6,
                 hint="Softmax each row (axis=-1): every query spreads exactly 1 unit of attention.",
                 mistake="softmax-not-along-rows")
    verify.close(output, weights @ V, "the output", atol=1e-6, hint="output = weights @ V.",
                 mistake="output-not-weights-times-values")
    expect_follow_scores(weights, Q @ K.T)


@pytest.mark.points(2)
def test_mask_gives_exact_zero(submission):
    """Masked pairs get a weight of exactly 0, and the rest still sum to 1."""
    Q, K, V = random_qkv(5, m=3, n=4)
    mask = np.array([[True, False, True, False], [False, True, True, True], [True, True, False, True]])
    _, weights = sdpa(submission, Q, K, V, mask)
    blocked = weights[~mask]
    if np.any(blocked != 0):
        hint = ("A large negative number such as -1e9 is fine; a small one such as -10 still leaves weight."
                if np.all(blocked < 1e-3) else "Give masked scores -inf before softmax.")
        mistake = "masked-score-not-low-enough" if np.all(blocked < 1e-3) else "masked-weight-not-zero"
        added = Q @ K.T / np.sqrt(K.shape[1]) + mask  # a boolean mask added as numbers: True counts 1, False 0
        if np.allclose(weights, np.exp(added) / np.exp(added).sum(axis=1, keepdims=True), atol=1e-6):
            hint = ("The mask was added to the scores as numbers (True counts 1, False 0), the way an additive "
                    "float mask of 0 and -inf is used. This mask is boolean: give the pairs it forbids (False) a "
                    "score of -inf, np.where(mask, scores, -np.inf).")
            mistake = "mask-added-as-numbers"
        verify.fail(f"masked pairs got weights {verify.show(blocked)}, not exactly 0. {hint}", mistake)
    verify.close(weights.sum(axis=1), np.ones(3), "the row sums of the masked weights", atol=1e-6)
    expect_follow_scores(weights, np.where(mask, Q @ K.T, -np.inf), "the masked weights")


@pytest.mark.points(1)
def test_mask_true_means_allowed(submission):
    """True in the mask means 'may attend': a row that allows one key puts all its weight there."""
    Q, K, V = random_qkv(6, m=3, n=3)
    mask = np.array([[False, False, True], [True, False, False], [False, True, True]])
    output, weights = sdpa(submission, Q, K, V, mask)
    if np.allclose(weights[mask], 0):
        verify.fail("The weights are 0 exactly where the mask is True: the mask is inverted. "
                    "True means the query may attend to that key.", "mask-inverted")
    verify.close(weights[:2], mask[:2].astype(float), "the weights of the rows that allow one key", atol=1e-6,
                 hint="With one allowed key in a row, that key must get all the weight.",
                 mistake="one-allowed-key-not-all-weight")
    verify.close(output[:2], V[[2, 0]], "the output of the rows that allow one key", atol=1e-6)
    expect_follow_scores(weights[2], np.where(mask[2], Q[2] @ K.T, -np.inf), "the weights of the row allowing two keys")


# Masked rows whose allowed scores all lie near -20000 (d_k = 1: the scores are the products themselves), beside
# forbidden pairs that score far higher: a finite stand-in for -inf above -20000 (-1e4, as an additive mask of
# some libraries writes it) outscores every allowed key, where -inf, and -1e9, leave them their weights.
# float32 holds each score exactly (its step near 40000 is 1/256).
FAR_BELOW_Q = np.array([[1.0], [2.0]])
FAR_BELOW_K = np.array([[-20000.0], [-20001.0], [3.0], [-20000.5]])
FAR_BELOW_MASK = np.array([[True, True, False, True], [True, False, False, True]])


@pytest.mark.points(1)
def test_mask_over_scores_far_below_zero(submission):
    """Where every allowed score lies far below 0 (near -20000), masked pairs still get exactly 0, the rest softmax."""
    Q, K, V, mask = FAR_BELOW_Q, FAR_BELOW_K, random_qkv(10, m=2, n=4)[2], FAR_BELOW_MASK
    what = "scaled_dot_product_attention(Q, K, V, mask) with allowed scores near -20000"
    output, weights = verify.pair(submission.attention.scaled_dot_product_attention(Q, K, V, mask), what)
    scores = np.where(mask, Q @ K.T, -np.inf)
    weights = verify.array(weights, f"the weights of {what}", shape=scores.shape, finite=False)
    weights = verify.finite(weights, f"the weights of {what}", cause=(
        "Every allowed score here lies near -20000, where exp() underflows to 0: softmax must subtract each row's "
        "largest allowed score, after the mask has given the forbidden pairs -inf, and 0/0 is NaN otherwise."),
        mistake="largest-not-subtracted")
    blocked = weights[~mask]
    verify.expect(np.all(blocked == 0), lambda: (
        f"masked pairs got weights {verify.show(blocked)}, not exactly 0: every allowed score here lies near -20000, "
        "below the stand-in for -inf that the forbidden pairs got (-1e4, say, added or written in). Give them -inf, "
        "np.where(mask, scores, -np.inf): no allowed score lies below it."), mistake="masked-score-not-low-enough")
    expected = np.exp(scores - scores.max(axis=1, keepdims=True))
    expected /= expected.sum(axis=1, keepdims=True)
    verify.close(weights, expected, f"the weights of {what}", atol=1e-6,
                 hint="The allowed keys share the weight as softmax of their scores gives it.")
    verify.close(verify.array(output, f"the output of {what}", shape=(2, V.shape[1])), expected @ V,
                 f"the output of {what}", atol=1e-6, hint="The output is the weights times V.")


@pytest.mark.points(2)
@pytest.mark.parametrize("n", [1, 2, 4, 7])
def test_causal_mask(submission, n):
    """causal_mask(n) is True on and below the diagonal, False above."""
    mask = submission.attention.causal_mask(n)
    expected = np.tril(np.ones((n, n), dtype=bool))
    received = mask_array(mask, n)
    verify.expect(isinstance(mask, np.ndarray) and mask.dtype == bool,
                  f"causal_mask({n}) must be a boolean array; received "
                  f"{mask.dtype if isinstance(mask, np.ndarray) else type(mask).__name__}.",
                  mistake="causal-mask-not-boolean")
    if n > 1 and np.array_equal(received, expected.T):
        verify.fail(f"causal_mask({n}) is True *above* the diagonal: that lets tokens see the future. "
                    "Row i (the query) may see columns 0..i.", "causal-mask-above-diagonal")
    if np.array_equal(received, np.tril(expected, -1)):
        verify.fail(f"causal_mask({n}) is False on the diagonal: a token may always attend to itself.",
                    "causal-mask-without-diagonal")
    verify.expect(np.array_equal(received, expected),
                  f"causal_mask({n}): expected\n{expected.astype(int)}\nreceived\n{received.astype(int)}")


@pytest.mark.points(1)
def test_causal_attention(submission):
    """With a causal mask, token 0 attends only to itself and nobody sees the future."""
    n = 5
    Q, K, V = random_qkv(7, m=n, n=n)
    mask = np.tril(np.ones((n, n), dtype=bool))
    output, weights = sdpa(submission, Q, K, V, mask)
    verify.expect(np.all(np.triu(weights, 1) == 0),
                  f"weights above the diagonal are not 0:\n{verify.show(weights)}", mistake="masked-weight-not-zero")
    verify.close(weights[0], np.eye(n)[0], "the first row of the weights", atol=1e-6,
                 hint="The first token can only see itself, so it gives itself weight 1.",
                 mistake="one-allowed-key-not-all-weight")
    verify.close(output[0], V[0], "the first output row", atol=1e-6)
    expect_follow_scores(weights, np.where(mask, Q @ K.T, -np.inf), "the causal weights")


MASK_AFTER = (" Or, where the mask forbids the best scores, as here: taken before the mask, softmax gives the allowed "
              "keys weights that underflow to 0, and renormalising them is 0/0. Give forbidden pairs -inf before "
              "softmax.")


@pytest.mark.points(2)
@pytest.mark.parametrize("function", ["attend", "scaled_dot_product_attention", "masked-best"])
def test_long_queries(submission, function):
    """Queries 400 times as long as usual give finite weights: nearly all on the best-matching key allowed."""
    mask = None
    if function == "attend":
        tie = verify.pair(submission.attention.attend(400 * np.ones(2), KEYS, VALUES), "attend(400 x (1, 1), ...)")[1]
        scores = KEYS @ (400 * np.ones(2))  # "cat" and "sat" score 760 each: half the weight each
        cause, mistake = overflow_cause(submission, scores) if not finite(tie) else ("", "")
        verify.close(verify.finite(tie, "the weights of attend(400 x (1, 1), ...)", cause=cause, mistake=mistake),
                     verify.all_on_the_best(scores), "the weights of attend(400 x (1, 1), ...)", atol=1e-6,
                     hint="\"cat\" and \"sat\" score 760 each, far above the rest: half the weight each.",
                     mistake="tie-not-shared")
        query = 400 * QUERY
        scores, what = KEYS @ query, "attend(400 x the lesson's query, ...)"
        output, weights = verify.pair(submission.attention.attend(query, KEYS, VALUES), what)
        values = VALUES
    else:
        Q, K, values = random_qkv(8, m=5, n=5)  # in every row the runner-up trails the best score by 54 or more
        Q = 400 * Q
        raw = Q @ K.T / np.sqrt(K.shape[1])
        if function == "masked-best":  # each row's best key is forbidden: every allowed score is far below it
            mask = raw < raw.max(axis=1, keepdims=True)
            what = "scaled_dot_product_attention(400 x Q, K, V, a mask that forbids each row's best key)"
        else:
            mask = np.tril(np.ones((5, 5), dtype=bool))
            what = "scaled_dot_product_attention(400 x Q, K, V, causal mask)"
        scores = np.where(mask, raw, -np.inf)
        output, weights = verify.pair(submission.attention.scaled_dot_product_attention(Q, K, values, mask), what)
        expect_mask_not_inverted(weights, mask, what)
    cause, mistake = "", ""
    if not (finite(weights) and finite(output)):  # which of the causes it is: try the learner's own code on it
        cause, mistake = overflow_cause(submission, scores, MASK_AFTER if function == "masked-best" else "")
        if function == "masked-best":
            unmasked = verify.pair(submission.attention.scaled_dot_product_attention(Q, K, values, None), what)[1]
            if finite(unmasked):  # finite without the mask: the mask's doing
                cause = ("The masked scores here are the largest of their rows, and without the mask your weights "
                         f"are finite: {MASK_AFTER.split(', as here: ')[1]}")
                mistake = "mask-after-softmax"
    weights = verify.finite(weights, f"the weights of {what}", shape=scores.shape, cause=cause, mistake=mistake)
    expected = verify.all_on_the_best(scores)
    verify.close(weights, expected, f"the weights of {what}", atol=1e-6,
                 hint="A long query is a sharp lookup: the best-matching key takes almost everything.",
                 mistake="long-query-not-sharp")
    expect_follow_scores(weights, scores, f"the weights of {what}")
    verify.close(verify.finite(output, f"the output of {what}", cause=cause, mistake=mistake), expected @ values,
                 f"the output of {what}", atol=1e-6)


# The kinds of input the docstrings allow: arrays, lists, a mask or none.
def _arguments(kind):
    Q, K, V = random_qkv(9, m=3, n=4)
    mask = np.array([[True, False, True, False], [False, True, True, True], [True, True, False, True]])
    if kind == "lists":
        return dict(query=Q[0].tolist(), keys=K.tolist(), values=V.tolist()), dict(Q=Q.tolist(), K=K.tolist(),
                                                                                      V=V.tolist(), mask=mask.tolist())
    if kind == "no-mask":
        return dict(query=Q[1], keys=K, values=V), dict(Q=Q, K=K, V=V)
    return dict(query=Q[0], keys=K, values=V), dict(Q=Q, K=K, V=V, mask=mask)


@pytest.mark.points(1)
@pytest.mark.parametrize("kind", ["arrays", "lists", "no-mask"])
def test_arguments_unchanged(submission, kind):
    """attend and scaled_dot_product_attention leave the queries, keys, values and mask they are given as they were."""
    for name, arguments in zip(("attend", "scaled_dot_product_attention"), _arguments(kind)):
        value, after = getattr(submission.attention, name).arguments_after(*arguments.values())
        verify.unchanged(arguments, after, f"{name}(...) of {kind}")
        q = np.asarray(arguments.get("query", arguments.get("Q")), dtype=float)
        k = np.asarray(arguments.get("keys", arguments.get("K")), dtype=float)
        scores = k @ q if q.ndim == 1 else q @ k.T
        if "mask" in arguments:
            scores = np.where(arguments["mask"], scores, -np.inf)
        weights = verify.array(verify.pair(value, f"{name}(...)")[1], f"the weights of {name}(...)", shape=scores.shape,
                               finite=False)
        expect_mask_not_inverted(weights, arguments.get("mask"), f"{name}(...)")
        weights = verify.array(weights, f"the weights of {name}(...)")
        verify.close(weights.sum(axis=-1), np.ones(scores.shape[:-1]), f"the sums of the weights of {name}(...)",
                     atol=1e-6, hint="Besides leaving the arrays alone, the weights must be a softmax of the scores.",
                     mistake="weights-not-normalised")
        expect_follow_scores(weights, scores)


@pytest.mark.points(1)
def test_return_types(submission):
    """attend and scaled_dot_product_attention return numpy arrays of floats, causal_mask one of booleans: the right
    ones."""
    attention = submission.attention
    for query, keys, values in [(QUERY, KEYS, VALUES), (list(QUERY), np.asarray(KEYS).tolist(), [[1], [2], [3],
                                                                                               [4], [5]]),
                                (np.array([1, 0]), np.array([[2, 1]]), np.array([[7, 5]]))]:
        promised(attention.attend, query, keys, values, what=f"attend(query, {len(keys)} keys, values)",
                 expected=right_attention(query, keys, values, scaled=False))
    Q = np.array([[1, 0], [0, 1], [1, 1]])
    for mask in [None, np.tri(3, dtype=bool)]:
        promised(attention.scaled_dot_product_attention, Q, Q, Q, mask,
                 what=f"scaled_dot_product_attention(Q, K, V, mask={'None' if mask is None else 'causal'})",
                 expected=right_attention(Q, Q, Q, mask))
    promised(attention.scaled_dot_product_attention, Q[:1].tolist(), Q[:1].tolist(), [[4.0]], None,
             what="scaled_dot_product_attention(one query, one key, one value)", expected=([[4.0]], [[1.0]]))
    for n in (1, 4):
        promised(attention.causal_mask, n, what=f"causal_mask({n})", shape=(n, n), expected=np.tri(n, dtype=bool))
