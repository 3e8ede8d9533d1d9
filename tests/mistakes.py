"""A catalogue of wrong implementations, and the check meant to catch each.

Most mistakes are *one edit* of the reference solution (``edit``): the
smallest change that makes it wrong, the way a learner might slip. The few
that need more are whole functions appended to the reference module, which
replace the right ones (``rewrite``). ``tests/checks/test_wrong_implementations.py``
grades every one and requires its check to fail with a message containing
``hint`` and, where the verdict diagnoses it, the stable name ``named``;
``softlookup dev check`` requires every check worth points to catch at least
one mistake, six mistakes per exercise, and every mistake name an exercise
lists to be told to one of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Mistake:
    name: str
    module: str
    caught_by: str
    hint: str  # a fragment of the message the learner must see
    old: str = ""  # text of the reference module to change...
    new: str = ""  # ...into this (every occurrence)
    code: str = ""  # or: functions appended to the module
    passes: tuple[str, ...] = ()  # checks the mistake must not cost: their hint would name another cause
    named: str = ""  # the stable name caught_by's verdict gives it (its exercise's mistakes in exercises.toml)

    @property
    def id(self) -> str:
        return f"{self.module}:{self.name}"

    def apply(self, folder: Path):
        """Make the mistake in ``folder``, a copy of the reference solutions."""
        path = folder / f"{self.module}.py"
        text = path.read_text()
        if self.code:
            path.write_text(text + "\n\n" + self.code.strip() + "\n")
            return
        if self.old not in text:
            raise ValueError(f"{self.id}: {self.old!r} is not in the reference {self.module}.py")
        path.write_text(text.replace(self.old, self.new))


def edit(name, module, old, new, caught_by, hint, passes=(), named="") -> Mistake:
    return Mistake(name, module, caught_by, hint, old=old, new=new, passes=tuple(passes), named=named)


def rewrite(name, module, code, caught_by, hint, passes=(), named="") -> Mistake:
    return Mistake(name, module, caught_by, hint, code=code, passes=tuple(passes), named=named)


MISTAKES = [
    # -- softmax ---------------------------------------------------------------------------
    edit("no max subtraction", "softmax", "shifted = x - np.max(x, axis=axis, keepdims=True)", "shifted = x",
         "test_large_scores", "subtract the largest score", named="largest-not-subtracted"),
    edit("axis ignored", "softmax", "axis=axis", "axis=0", "test_axis", "pass `axis` on",
         passes=["test_arguments_unchanged"],  # the arguments are left alone: that check is not the axis's
         named="axis-ignored"),
    # On the masked scores the wrong-axis weights have a largest weight of 1: not "did you divide by the max".
    edit("axis ignored, seen on -inf scores", "softmax", "axis=axis", "axis=0", "test_minus_infinity_gets_zero",
         "pass `axis` on", named="axis-ignored"),
    edit("exp of minus the scores", "softmax", "exps = np.exp(shifted)", "exps = np.exp(-shifted)",
         "test_weights_positive_and_sum_to_one", "order of the scores", named="order-reversed"),
    edit("divide by the max", "softmax", "np.sum(exps", "np.max(exps",
         "test_weights_positive_and_sum_to_one", "divide by the max", named="divided-by-max"),
    # The max is subtracted, so large scores stay finite: their verdict is the sum's, not the shift's.
    edit("divide by the max, seen on large scores", "softmax", "np.sum(exps", "np.max(exps",
         "test_large_scores", "divide by the max", named="divided-by-max"),
    edit("shifted by the first score", "softmax", "np.max(x, axis=axis, keepdims=True)",
         "np.take(x, [0], axis=axis)", "test_large_scores", "shifted by any score but the largest",
         named="shifted-by-another-score"),
    rewrite("integer scores handed to torch as they are", "softmax", """
import torch


def softmax(x, axis=-1):
    return torch.softmax(torch.as_tensor(x), dim=axis).numpy()
""", "test_lesson_scores", "Scores may be integers", named="integers-not-floats"),
    rewrite("a vector shifted in place", "softmax", """
def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)  # the caller's own array, when it is one of floats
    if x.ndim == 1:
        x -= np.max(x)
    exps = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return exps / np.sum(exps, axis=axis, keepdims=True)
""", "test_arguments_unchanged", "changed its argument `x` in place", named="changed-in-place"),
    edit("sum over every axis", "softmax", "np.sum(exps, axis=axis, keepdims=True)", "np.sum(exps)",
         "test_axis", "keepdims=True", named="sum-without-keepdims"),
    edit("flattened result", "softmax", "return exps / np.sum(exps, axis=axis, keepdims=True)",
         "return (exps / np.sum(exps, axis=axis, keepdims=True)).ravel()", "test_keeps_shape", "expected shape"),
    edit("scores clipped to [-50, 50]", "softmax", "x = np.asarray(x, dtype=float)",
         "x = np.clip(np.asarray(x, dtype=float), -50, 50)", "test_minus_infinity_gets_zero", "not exactly 0", named="masked-weight-not-zero"),
    edit("scores normalised without exp", "softmax", "exps = np.exp(shifted)", "exps = x + 10.0",
         "test_shift_invariance", "cancels", named="not-shift-invariant"),
    edit("scores standardised first", "softmax", "x = np.asarray(x, dtype=float)",
         "x = np.asarray(x, dtype=float)\n    x = (x - x.mean(axis=axis, keepdims=True)) / x.std(axis=axis, keepdims=True)",
         "test_sharpness_limits", "nearly equal weights", named="not-flat-in-the-limit"),
    edit("scores clipped to [-50, 50], seen on sharp scores", "softmax", "x = np.asarray(x, dtype=float)",
         "x = np.clip(np.asarray(x, dtype=float), -50, 50)", "test_sharpness_limits", "largest score",
         named="not-sharp-in-the-limit"),
    edit("exp minus one (np.expm1)", "softmax", "exps = np.exp(shifted)", "exps = np.expm1(shifted)",
         "test_weights_positive_and_sum_to_one", "not positive", named="weights-not-positive"),
    edit("the weights sorted", "softmax", "return exps / np.sum(exps, axis=axis, keepdims=True)",
         "return np.sort(exps / np.sum(exps, axis=axis, keepdims=True), axis=axis)",
         "test_weights_positive_and_sum_to_one", "do not follow the order", named="order-not-kept"),
    edit("one added to the sum", "softmax", "np.sum(exps, axis=axis, keepdims=True)",
         "(np.sum(exps, axis=axis, keepdims=True) + 1)", "test_weights_positive_and_sum_to_one",
         "divide the exponentials by their sum", named="not-divided-by-sum"),
    edit("powers of 2 instead of e", "softmax", "np.exp(shifted)", "2.0 ** shifted",
         "test_lesson_scores", "exp(score)", named="not-exp-over-sum"),
    edit("axis 1 taken as the last axis", "softmax", "x = np.asarray(x, dtype=float)",
         "x = np.asarray(x, dtype=float)\n    axis = 0 if axis == 0 else -1", "test_matches_reference", "axis=1"),
    edit("largest score of the whole array, not of each row", "softmax", "np.max(x, axis=axis, keepdims=True)",
         "np.max(x)", "test_rows_far_apart", "each row's own largest score", named="one-shift-for-all-rows"),
    # Masked rows whose allowed scores lie far below 0: a shift by anything but each row's largest score underflows.
    edit("a -inf taken as 0 when finding the largest score", "softmax", "np.max(x, axis=axis, keepdims=True)",
         "np.max(np.where(np.isneginf(x), 0.0, x), axis=axis, keepdims=True)", "test_masked_scores_far_below_zero",
         "only a shift by the row's own largest score", named="shifted-by-another-score"),
    edit("-inf replaced by -1e9, as masks write it", "softmax", "x = np.asarray(x, dtype=float)",
         "x = np.asarray(x, dtype=float)\n    x = np.where(np.isneginf(x), -1e9, x)",
         "test_masked_scores_far_below_zero", "outscores them", named="masked-weight-not-zero"),
    rewrite("scores changed in place", "softmax", """
def softmax(x, axis=-1):
    x -= np.max(x, axis=axis, keepdims=True)
    np.exp(x, out=x)
    x /= np.sum(x, axis=axis, keepdims=True)
    return x
""", "test_arguments_unchanged", "changed its argument `x` in place", named="changed-in-place"),
    rewrite("masked scores made finite in place", "softmax", """
def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)  # the caller's own array, when it is one of floats
    x[np.isneginf(x)] = -1e30  # a large finite stand-in for -inf, written over the caller's mask
    shifted = x - np.max(x, axis=axis, keepdims=True)
    exps = np.exp(shifted)
    return exps / np.sum(exps, axis=axis, keepdims=True)
""", "test_arguments_unchanged", "changed its argument `x` in place", named="changed-in-place"),
    # -- lookup ----------------------------------------------------------------------------
    edit("exact lookup returns the key", "lookup", "            return value\n", "            return key\n",
         "test_exact_lookup_finds_key", "Return the value stored", named="key-instead-of-value"),
    edit("exact lookup returns 0 when missing", "lookup", "    return None\n", "    return 0\n",
         "test_exact_lookup_missing_key", "answer is None", named="missing-key-not-none"),
    rewrite("exact lookup through a dict, which keeps the last repeat", "lookup", """
def exact_lookup(query, keys, values):
    return dict(zip(keys, values)).get(query)
""", "test_exact_lookup_first_of_repeated_key", "keeps the last value", named="last-of-repeated-key"),
    edit("exact lookup falls back to the nearest", "lookup", "    return None\n",
         "    return nearest_lookup(query, keys, values)\n",
         "test_exact_lookup_missing_key", "finds nothing when nothing matches", named="missing-key-not-none"),
    edit("nearest uses argmax", "lookup", "np.argmin(distances)", "np.argmax(distances)",
         "test_nearest_lookup", "farthest", named="farthest-key"),
    edit("nearest by the signed difference", "lookup", "distances = np.abs(np.asarray(keys, dtype=float) - query)",
         "distances = np.asarray(keys, dtype=float) - query", "test_nearest_lookup", "smallest |query - key|",
         named="not-the-nearest-key"),
    rewrite("distances in the keys' own dtype", "lookup", """
def nearest_lookup(query, keys, values):
    distances = np.array(keys)  # a copy, but of the keys' dtype: integers stay integers
    distances -= query
    return values[int(np.argmin(np.abs(distances)))]
""", "test_nearest_lookup", "Keys may be integers", named="distances-in-key-dtype"),
    edit("sharpness taken as a temperature", "lookup", "scores = -sharpness * (queries[..., None] - keys) ** 2",
         "scores = -(queries[..., None] - keys) ** 2 / (1 / sharpness)", "test_sharpness_limits",
         "A sharpness of 0 is allowed", named="divided-by-sharpness"),
    edit("the lesson's sharpness as the default", "lookup", "def soft_lookup(query, keys, values, sharpness=1.0):",
         "def soft_lookup(query, keys, values, sharpness=1.5):", "test_squared_distance_scores", "the default is 1.0",
         named="default-sharpness-not-one"),
    rewrite("keys shifted in place for a single query", "lookup", """
def soft_lookup(query, keys, values, sharpness=1.0):
    keys = np.asarray(keys, dtype=float)  # the caller's own array, when it is one of floats
    queries = np.asarray(query, dtype=float)
    if queries.ndim == 0:
        keys -= queries  # the distances, computed where the keys were
        scores = -sharpness * keys**2
    else:
        scores = -sharpness * (queries[..., None] - keys) ** 2
    weights = softmax(scores, axis=-1)
    answers = weights @ np.asarray(values, dtype=float)
    return (float(answers), weights) if queries.ndim == 0 else (answers, weights)
""", "test_arguments_unchanged", "changed its argument `keys` in place", named="changed-in-place"),
    edit("hard lookup, seen on many queries", "lookup", "weights = softmax(scores, axis=-1)",
         "weights = softmax(1e9 * (scores - scores.max(axis=-1, keepdims=True)), axis=-1)",
         "test_many_queries", "a hard lookup", named="hard-lookup"),
    edit("nearest tie goes to the last key", "lookup", "values[int(np.argmin(distances))]",
         "values[len(keys) - 1 - int(np.argmin(distances[::-1]))]", "test_nearest_tie_rule", "tie rule",
         named="tie-not-first"),
    edit("soft score sign flipped", "lookup", "scores = -sharpness", "scores = sharpness",
         "test_squared_distance_scores", "sign of the score is flipped", named="score-sign-flipped"),
    # Every check that asks for weights names the flipped sign, not what follows from it.
    edit("soft score sign flipped, seen on the weights' sums", "lookup", "scores = -sharpness", "scores = sharpness",
         "test_soft_weights_sum_to_one", "sign of the score is flipped", named="score-sign-flipped"),
    edit("query plus key inside the square", "lookup", "(queries[..., None] - keys) ** 2",
         "(queries[..., None] + keys) ** 2", "test_soft_weights_sum_to_one", "do not favour the keys closest",
         named="nearer-not-heavier"),
    edit("absolute distance instead of squared", "lookup", "(queries[..., None] - keys) ** 2",
         "np.abs(queries[..., None] - keys)", "test_squared_distance_scores", "not squared",
         named="distance-not-squared"),
    edit("sharpness ignored", "lookup", "scores = -sharpness * ", "scores = -",
         "test_squared_distance_scores", "`sharpness` is ignored", named="sharpness-ignored"),
    edit("sharpness divides the score", "lookup", "-sharpness * (queries[..., None] - keys) ** 2",
         "-(queries[..., None] - keys) ** 2 / sharpness", "test_sharpness_limits", "closest key",
         named="not-sharp-in-the-limit"),
    edit("keys averaged instead of values", "lookup", "answers = weights @ values", "answers = weights @ keys",
         "test_lesson_table", "average the values", named="keys-averaged"),
    edit("sharpness inside the square", "lookup", "scores = -sharpness * (queries[..., None] - keys) ** 2",
         "scores = -(sharpness * (queries[..., None] - keys)) ** 2", "test_lesson_table", "Score each key with",
         named="score-formula-wrong"),
    rewrite("each key scored by the query's distance to itself", "lookup", """
def soft_lookup(query, keys, values, sharpness=1.0):
    queries = np.asarray(query, dtype=float)
    keys = np.asarray(keys, dtype=float)
    scores = np.stack([-sharpness * (queries - queries) ** 2 for key in keys], axis=-1)  # a slip for queries - key
    weights = softmax(scores, axis=-1)
    answers = weights @ np.asarray(values, dtype=float)
    return (float(answers), weights) if queries.ndim == 0 else (answers, weights)
""", "test_lesson_table", "All weights are equal", named="scores-ignore-distance"),
    edit("answer the mean of weights times values, not their sum", "lookup", "answers = weights @ values",
         "answers = (weights * values).mean(axis=-1)", "test_lesson_table", "The answer is sum(weights * values)",
         named="answer-not-weighted-sum"),
    rewrite("scores written into an array of the keys' dtype", "lookup", """
def soft_lookup(query, keys, values, sharpness=1.0):
    queries = np.asarray(query, dtype=float)
    # One score per query and key, in an array shaped like them, but of the keys' dtype: integers stay integers.
    scores = np.empty_like(np.broadcast_to(keys, queries.shape + (len(keys),)))
    scores[...] = -sharpness * (queries[..., None] - np.asarray(keys, dtype=float)) ** 2
    weights = softmax(scores, axis=-1)
    answers = weights @ np.asarray(values, dtype=float)
    return (float(answers), weights) if queries.ndim == 0 else (answers, weights)
""", "test_lesson_table", "turn them into floats first", named="integers-not-floats"),
    edit("weights never normalised", "lookup", "weights = softmax(scores, axis=-1)", "weights = np.exp(scores)",
         "test_soft_weights_sum_to_one", "softmax", named="weights-not-normalised"),
    edit("hard lookup: all weight on the best key", "lookup", "weights = softmax(scores, axis=-1)",
         "weights = softmax(1e9 * (scores - scores.max(axis=-1, keepdims=True)), axis=-1)",
         "test_soft_answer_is_smooth", "picking one value", named="hard-lookup"),
    edit("distance to the values instead of the keys", "lookup", "(queries[..., None] - keys) ** 2",
         "(queries[..., None] - values) ** 2", "test_soft_answer_is_smooth", "must move with the query",
         named="answer-not-following-query"),
    rewrite("a sharpness of 0 taken as not given", "lookup", """
def soft_lookup(query, keys, values, sharpness=None):
    sharpness = sharpness or 1.0  # not given: 1.0 (but 0 is falsy too)
    queries = np.asarray(query, dtype=float)
    scores = -sharpness * (queries[..., None] - np.asarray(keys, dtype=float)) ** 2
    weights = softmax(scores, axis=-1)
    answers = weights @ np.asarray(values, dtype=float)
    return (float(answers), weights) if queries.ndim == 0 else (answers, weights)
""", "test_sharpness_limits", "makes every score 0", named="not-flat-in-the-limit"),
    edit("answer mixes scores, not weights", "lookup", "answers = weights @ values",
         "answers = -(scores @ values) / len(keys)", "test_soft_answer_within_values", "outside the prices' range",
         named="answer-outside-values"),
    edit("softmax across queries", "lookup", "softmax(scores, axis=-1)", "softmax(scores, axis=0)",
         "test_many_queries", "Row i must be", named="rows-not-per-query"),
    edit("exact lookup rounds the price", "lookup", "            return value\n", "            return int(value)\n",
         "test_exact_matches_reference", "expected"),
    edit("nearest lookup rounds the price", "lookup", "return values[int(np.argmin(distances))]",
         "return int(values[int(np.argmin(distances))])", "test_nearest_matches_reference", "expected"),
    edit("soft answer rounded to pence", "lookup", "return float(answers), weights",
         "return round(float(answers), 2), weights", "test_soft_matches_reference", "expected"),
    rewrite("kernel divided by its sum, no softmax", "lookup", """
def soft_lookup(query, keys, values, sharpness=1.0):
    queries = np.asarray(query, dtype=float)
    kernel = np.exp(-sharpness * (queries[..., None] - np.asarray(keys, dtype=float)) ** 2)
    weights = kernel / kernel.sum(axis=-1, keepdims=True)
    answers = weights @ np.asarray(values, dtype=float)
    return (float(answers), weights) if queries.ndim == 0 else (answers, weights)
""", "test_very_sharp_and_far_queries", "underflow", named="exp-over-sum-not-softmax"),
    edit("scores floored at -50 against underflow", "lookup", "weights = softmax(scores, axis=-1)",
         "weights = softmax(np.maximum(scores, -50.0), axis=-1)", "test_very_sharp_and_far_queries",
         "Only the nearest key", named="not-sharp-in-the-limit"),
    edit("keys shifted in place", "lookup", "    distances = np.abs(np.asarray(keys, dtype=float) - query)\n",
         "    distances = np.asarray(keys, dtype=float)\n    distances -= query\n    np.abs(distances, out=distances)\n",
         "test_arguments_unchanged", "changed its argument `keys` in place", named="changed-in-place"),
    # Inputs the lesson and the docstrings allow that a careless lookup gets wrong (issue 48).
    rewrite("a found price of 0 taken for nothing found", "lookup", """
def exact_lookup(query, keys, values):
    found = {}
    for key, value in zip(keys, values):
        found.setdefault(key, value)  # the first occurrence stays
    return found.get(query) or None  # None when the key is missing
""", "test_exact_lookup_awkward_records", "takes a found 0 for nothing found", named="found-value-lost"),
    rewrite("keys compared as text", "lookup", """
def exact_lookup(query, keys, values):
    for key, value in zip(keys, values):
        if str(key) == str(query):  # keys read as labels
            return value
    return None
""", "test_exact_lookup_awkward_records", "2 == 2.0", named="equal-key-not-found"),
    edit("keys compared within a tolerance", "lookup", "        if key == query:\n",
         "        if abs(key - query) < 1e-3:  # floats are never quite equal\n", "test_exact_lookup_awkward_records",
         "never within a tolerance", named="near-key-taken-as-equal"),
    edit("distances rounded to 3 decimals", "lookup", "distances = np.abs(np.asarray(keys, dtype=float) - query)",
         "distances = np.round(np.abs(np.asarray(keys, dtype=float) - query), 3)",
         "test_exact_lookup_awkward_records", "never round them", named="not-the-nearest-key"),
    rewrite("one shift for the whole table of queries", "lookup", """
def soft_lookup(query, keys, values, sharpness=1.0):
    queries = np.asarray(query, dtype=float)
    scores = -sharpness * (queries[..., None] - np.asarray(keys, dtype=float)) ** 2
    exps = np.exp(scores - scores.max())  # the largest score, so that exp() cannot overflow
    weights = exps / exps.sum(axis=-1, keepdims=True)
    answers = weights @ np.asarray(values, dtype=float)
    return (float(answers), weights) if queries.ndim == 0 else (answers, weights)
""", "test_many_queries", "its own largest score", named="one-shift-for-all-queries"),
    edit("an array of one query answered as a number", "lookup", "    if queries.ndim == 0:\n",
         "    if queries.size == 1:  # one query\n        return float(answers.item()), weights.reshape(-1)\n"
         "    if queries.ndim == 0:\n", "test_many_queries", "An array of one query is still an array"),
    # -- attention -------------------------------------------------------------------------
    edit("attend score sign flipped", "attention", "weights = softmax(scores)\n", "weights = softmax(-scores)\n",
         "test_two_number_example", "sign flipped", named="score-sign-flipped"),
    edit("attend averages the keys", "attention", "return weights @ np.asarray(values, dtype=float), weights",
         "return weights @ np.asarray(keys, dtype=float), weights", "test_output_mixes_values", "*keys*",
         named="keys-mixed-not-values"),
    edit("attend never normalises", "attention", "weights = softmax(scores)\n", "weights = np.exp(scores)\n",
         "test_attend_weights_sum_to_one", "softmax", named="weights-not-normalised"),
    edit("attend uses cosine similarity", "attention", "weights = softmax(scores)\n",
         "weights = softmax(scores / np.linalg.norm(query) / np.linalg.norm(keys, axis=1))\n",
         "test_query_length_is_sharpness", "grow in proportion", named="scores-not-plain-dot-products"),
    edit("attend output mixes the scores", "attention", "return weights @ np.asarray(values, dtype=float), weights",
         "return scores @ np.asarray(values, dtype=float), weights", "test_output_inside_values", "outside the range",
         named="output-outside-values"),
    edit("no sqrt(d) scaling", "attention", " / np.sqrt(K.shape[-1])", "",
         "test_scores_scaled_by_sqrt_d", "not divided by sqrt(d_k)", named="not-divided-by-sqrt-dk"),
    edit("scores divided by d instead of sqrt(d)", "attention", "np.sqrt(K.shape[-1])", "K.shape[-1]",
         "test_scores_scaled_by_sqrt_d", "divided by d_k, not sqrt(d_k)", named="divided-by-dk"),
    edit("softmax down the columns", "attention", "softmax(scores, axis=-1)", "softmax(scores, axis=0)",
         "test_matrix_output_mixes_values", "Softmax each row", named="softmax-not-along-rows"),
    edit("masked scores set to -10", "attention", "np.where(mask, scores, -np.inf)", "np.where(mask, scores, -10.0)",
         "test_mask_gives_exact_zero", "a small one such as -10 still leaves weight",
         named="masked-score-not-low-enough"),
    edit("mask ignored", "attention", "scores = np.where(mask, scores, -np.inf)", "pass",
         "test_mask_gives_exact_zero", "not exactly 0", named="masked-weight-not-zero"),
    edit("mask inverted", "attention", "np.where(mask, scores, -np.inf)", "np.where(mask, -np.inf, scores)",
         "test_mask_true_means_allowed", "inverted", named="mask-inverted"),
    # An inverted causal mask leaves the last row nothing to attend to: NaN, not an overflow.
    edit("mask inverted, seen on a causal mask", "attention", "np.where(mask, scores, -np.inf)",
         "np.where(mask, -np.inf, scores)", "test_causal_attention", "the mask is inverted", named="mask-inverted"),
    rewrite("mask applied after softmax", "attention", """
def scaled_dot_product_attention(Q, K, V, mask=None):
    K = np.asarray(K)
    w = softmax(np.asarray(Q) @ K.T / np.sqrt(K.shape[-1]))
    if mask is not None:
        w = w * mask
    return w @ np.asarray(V), w
""", "test_causal_attention", "first row", named="one-allowed-key-not-all-weight"),
    edit("causal mask above the diagonal", "attention", "np.tril(", "np.triu(", "test_causal_mask", "see the future",
         named="causal-mask-above-diagonal"),
    edit("causal mask without the diagonal", "attention", "dtype=bool))", "dtype=bool), k=-1)",
         "test_causal_mask", "attend to itself", named="causal-mask-without-diagonal"),
    edit("causal mask of floats", "attention", "np.ones((n, n), dtype=bool)", "np.ones((n, n))",
         "test_causal_mask", "boolean array", named="causal-mask-not-boolean"),
    rewrite("causal mask as an additive float mask", "attention", """
def causal_mask(n):
    return np.triu(np.full((n, n), -np.inf), k=1)  # PyTorch's generate_square_subsequent_mask
""", "test_causal_mask", "an additive mask", named="additive-float-mask"),
    edit("boolean mask added to the scores", "attention", "scores = np.where(mask, scores, -np.inf)",
         "scores = scores + mask", "test_mask_gives_exact_zero", "added to the scores as numbers",
         named="mask-added-as-numbers"),
    rewrite("attend rebuilt from scaled_dot_product_attention", "attention", """
def attend(query, keys, values):
    output, weights = scaled_dot_product_attention(np.asarray(query, dtype=float)[None], keys, values)
    return output[0], weights[0]
""", "test_two_number_example", "divided by sqrt(d)", named="attend-divided-by-sqrt-d"),
    rewrite("mask applied after softmax, then renormalised", "attention", """
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    weights = softmax(Q @ K.T / np.sqrt(K.shape[-1]), axis=-1)
    if mask is not None:
        weights = weights * mask
        weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights
""", "test_long_queries", "renormalising them is 0/0", named="mask-after-softmax"),
    edit("mask inverted, seen on long queries", "attention", "np.where(mask, scores, -np.inf)",
         "np.where(mask, -np.inf, scores)", "test_long_queries", "the mask is inverted", named="mask-inverted"),
    rewrite("attend shifts its scores by the first", "attention", """
def attend(query, keys, values):
    scores = np.asarray(keys, dtype=float) @ np.asarray(query, dtype=float)
    exps = np.exp(scores - scores[0])
    weights = exps / exps.sum()
    return weights @ np.asarray(values, dtype=float), weights
""", "test_long_queries", "subtract the largest score of each row", named="largest-not-subtracted"),
    edit("attend squeezes a single key away", "attention", "weights = softmax(scores)\n",
         "weights = softmax(np.squeeze(scores))\n    values = np.squeeze(values)\n",
         "test_attend_matches_reference", "attend"),
    edit("attention squeezes single queries away", "attention",
         "Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))",
         "Q, K, V = (np.squeeze(np.asarray(a, dtype=float)) for a in (Q, K, V))",
         "test_sdpa_matches_reference", "attention"),
    edit("causal mask capped at 8 tokens", "attention", "np.ones((n, n)", "np.ones((min(n, 8), min(n, 8))",
         "test_causal_mask_matches_reference", "expected shape"),
    rewrite("attend's own softmax without the largest score subtracted", "attention", """
def attend(query, keys, values):
    exps = np.exp(np.asarray(keys, dtype=float) @ np.asarray(query, dtype=float))
    weights = exps / exps.sum()
    return weights @ np.asarray(values, dtype=float), weights
""", "test_long_queries", "subtract the largest score", named="largest-not-subtracted"),
    rewrite("attention's own softmax without the largest score subtracted", "attention", """
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    exps = np.exp(Q @ K.T / np.sqrt(K.shape[-1]))
    if mask is not None:
        exps = np.where(mask, exps, 0.0)
    weights = exps / exps.sum(axis=-1, keepdims=True)
    return weights @ V, weights
""", "test_long_queries", "subtract the largest score", named="largest-not-subtracted"),
    edit("queries scaled in place", "attention", "    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1])\n",
         "    Q /= np.sqrt(K.shape[-1])\n    scores = Q @ np.swapaxes(K, -1, -2)\n",
         "test_arguments_unchanged", "changed its argument `Q` in place", named="changed-in-place"),
    # The same flipped sign on a query of the judge's own: the weights follow the scores backwards.
    edit("attend score sign flipped, seen on a random query", "attention", "weights = softmax(scores)\n",
         "weights = softmax(-scores)\n", "test_output_mixes_values", "do not follow the scores",
         named="weights-do-not-follow-scores"),
    edit("attend takes the mean of the weighted values", "attention",
         "return weights @ np.asarray(values, dtype=float), weights",
         "return np.mean(weights[:, None] * np.asarray(values, dtype=float), axis=0), weights",
         "test_output_mixes_values", "weights[j] * values[j]", named="output-not-weights-times-values"),
    edit("attend normalises the scores without exp", "attention", "weights = softmax(scores)\n",
         "weights = scores / scores.sum()\n", "test_attend_weights_sum_to_one", "not positive",
         named="weights-not-positive"),
    rewrite("attend gives all the weight to the best key", "attention", """
def attend(query, keys, values):
    scores = np.asarray(keys, dtype=float) @ np.asarray(query, dtype=float)
    weights = np.zeros_like(scores)
    weights[np.argmax(scores)] = 1.0  # the best key takes everything
    return weights @ np.asarray(values, dtype=float), weights
""", "test_output_mixes_values", "a hard lookup", named="hard-lookup"),
    # On a tie the hard lookup gives the first of the best keys everything.
    rewrite("attend gives all the weight to the best key, seen on a tie", "attention", """
def attend(query, keys, values):
    scores = np.asarray(keys, dtype=float) @ np.asarray(query, dtype=float)
    weights = np.zeros_like(scores)
    weights[np.argmax(scores)] = 1.0  # the best key takes everything
    return weights @ np.asarray(values, dtype=float), weights
""", "test_long_queries", "half the weight each", named="tie-not-shared"),
    edit("scores clipped to [-50, 50] against overflow", "attention",
         "    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1])\n",
         "    scores = np.clip(Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1]), -50, 50)\n",
         "test_long_queries", "a sharp lookup", named="long-query-not-sharp"),
    # Allowed scores far below 0: a finite stand-in for -inf above them outscores them (issue 48).
    edit("masked scores written as -1e4", "attention", "scores = np.where(mask, scores, -np.inf)",
         "scores = np.where(mask, scores, -1e4)  # a large negative stand-in for -inf",
         "test_mask_over_scores_far_below_zero", "below the stand-in for -inf", named="masked-score-not-low-enough"),
    edit("an additive mask of -10000, as BERT's", "attention", "scores = np.where(mask, scores, -np.inf)",
         "scores = scores + (1.0 - np.asarray(mask, dtype=float)) * -10000.0",
         "test_mask_over_scores_far_below_zero", "below the stand-in for -inf", named="masked-score-not-low-enough"),
    # -- gpt2_heads ------------------------------------------------------------------------
    edit("decoded words instead of tokens", "gpt2_heads",
         "    tokens = tokenizer.convert_ids_to_tokens(ids[0].tolist())\n    return tokens, attentions[layer][0, head]",
         "    tokens = [tokenizer.decode([i]) for i in ids[0].tolist()]\n    return tokens, attentions[layer][0, head]",
         "test_tokens", "decoded words", named="decoded-words-not-tokens"),
    rewrite("<|endoftext|> put in front of the text", "gpt2_heads", """
def head_pattern(model, tokenizer, text, layer, head):
    ids = tokenizer("<|endoftext|>" + text, return_tensors="pt")["input_ids"]  # as GPT-2's training texts begin
    with torch.no_grad():
        attentions = model(ids, output_attentions=True).attentions
    return tokenizer.convert_ids_to_tokens(ids[0].tolist()), attentions[layer][0, head].numpy()
""", "test_tokens", "Nothing should be added in front", named="token-added-in-front"),
    edit("layer off by one", "gpt2_heads", "attentions[layer][0, head]", "attentions[layer - 1][0, head]",
         "test_head_pattern", "layers count from 0", named="layer-off-by-one"),
    edit("head off by one", "gpt2_heads", "attentions[layer][0, head]", "attentions[layer][0, head - 1]",
         "test_head_pattern", "heads count from 0", named="head-off-by-one"),
    edit("pattern transposed", "gpt2_heads", "attentions[layer][0, head].numpy()", "attentions[layer][0, head].T.numpy()",
         "test_pattern_is_causal_weights", "above the diagonal", named="pattern-transposed"),
    edit("the pattern on a log scale", "gpt2_heads", "attentions[layer][0, head].numpy()",
         "attentions[layer][0, head].clamp_min(1e-9).log().numpy()", "test_pattern_is_causal_weights",
         "negative entries", named="negative-weights"),
    edit("the pattern in percent", "gpt2_heads", "attentions[layer][0, head].numpy()",
         "100 * attentions[layer][0, head].numpy()", "test_pattern_is_causal_weights", "Each row is a softmax",
         named="rows-do-not-sum-to-one"),
    edit("share read from the wrong side", "gpt2_heads", "[row, column]", "[column, row]",
         "test_attention_share", "pattern[to, from]", named="row-and-column-swapped"),
    edit("share of the last occurrence", "gpt2_heads", "names.index(bare(from_token)), names.index(bare(to_token))",
         "len(names) - 1 - names[::-1].index(bare(from_token)), len(names) - 1 - names[::-1].index(bare(to_token))",
         "test_attention_share_matches_reference", "expected"),
    # 'the' occurs twice in the public check's tokens: there the verdict names the rule.
    edit("share of the last occurrence, seen on a repeated token", "gpt2_heads",
         "names.index(bare(from_token)), names.index(bare(to_token))",
         "len(names) - 1 - names[::-1].index(bare(from_token)), len(names) - 1 - names[::-1].index(bare(to_token))",
         "test_attention_share", "use its first occurrence", named="not-the-first-occurrence"),
    edit("tokens matched in lower case", "gpt2_heads", 'return token[1:] if token[:1] in ("Ġ", " ") else token',
         'return (token[1:] if token[:1] in ("Ġ", " ") else token).lower()', "test_attention_share", "Case counts",
         named="case-ignored"),
    edit("share without a ValueError", "gpt2_heads", "raise ValueError(f\"no token {token!r} in {list(tokens)}\")",
         "return 0.0", "test_attention_share_unknown_token", "raise ValueError",
         named="missing-token-not-a-valueerror"),
    edit("a ValueError that names nothing", "gpt2_heads", "raise ValueError(f\"no token {token!r} in {list(tokens)}\")",
         "raise ValueError(\"token not found\")", "test_attention_share_unknown_token", "name the token asked for",
         named="missing-token-message-unhelpful"),
    edit("a ValueError for the second token only", "gpt2_heads", "    for token in (from_token, to_token):\n",
         "    names.index(bare(from_token))  # a missing first token raises list.index's own ValueError\n"
         "    for token in (to_token,):\n", "test_attention_share_unknown_token", "list the tokens there are",
         named="missing-token-message-unhelpful"),
    edit("max over heads instead of mean", "gpt2_heads", "attentions[layer][0].mean(dim=0)",
         "attentions[layer][0].max(dim=0).values", "test_layer_average", "maximum over the heads",
         named="max-over-heads"),
    edit("sum over heads instead of mean", "gpt2_heads", "attentions[layer][0].mean(dim=0)",
         "attentions[layer][0].sum(dim=0)", "test_layer_average", "That is the sum over the heads;",
         named="sum-over-heads"),
    edit("the first head for the layer", "gpt2_heads", "attentions[layer][0].mean(dim=0)", "attentions[layer][0, 0]",
         "test_layer_average", "one head's pattern", named="one-head-for-the-layer"),
    edit("average of the previous layer", "gpt2_heads", "attentions[layer][0].mean(dim=0)",
         "attentions[layer - 1][0].mean(dim=0)", "test_layer_average_matches_reference", "expected"),
    edit("no causal mask", "gpt2_heads", "scores.masked_fill(future, -torch.inf)", "scores",
         "test_recompute_head_pattern", "future tokens", named="future-not-masked"),
    edit("no sqrt(d) scaling", "gpt2_heads", " / size**0.5", "", "test_recompute_head_pattern", "times too large",
         named="not-divided-by-sqrt-dk"),
    edit("scores divided by the head size", "gpt2_heads", " / size**0.5", " / size", "test_recompute_head_pattern",
         "times too small", named="divided-by-dk"),
    edit("softmax down the columns", "gpt2_heads", "masked_fill(future, -torch.inf), dim=-1)",
         "masked_fill(future, -torch.inf), dim=0)", "test_recompute_head_pattern", "apply softmax along each row",
         named="softmax-not-along-rows"),
    # The tiny model's heads are 16 wide: not "your scores are 4e32 times too small".
    edit("head size hard-coded to 64", "gpt2_heads", "size = model.config.n_embd // model.config.n_head", "size = 64",
         "test_recompute_head_pattern", "n_embd // n_head", named="head-columns-empty"),
    # Right for the standard tiny model (heads of 16, 4 of them): only its other shape (heads of 8, 6 of them) fails.
    edit("head size hard-coded to 16", "gpt2_heads", "size = model.config.n_embd // model.config.n_head", "size = 16",
         "test_recompute_head_pattern", "n_embd // n_head", named="head-columns-empty"),
    edit("head count hard-coded to 4", "gpt2_heads", "size = model.config.n_embd // model.config.n_head",
         "size = model.config.n_embd // 4", "test_recompute_head_pattern", "n_embd // n_head",
         named="head-columns-empty"),
    edit("scores divided by sqrt(16) written in", "gpt2_heads", " / size**0.5", " / 4",
         "test_recompute_head_pattern", "n_embd // n_head"),
    edit("layer average over 4 heads written in", "gpt2_heads", "attentions[layer][0].mean(dim=0)",
         "(attentions[layer][0].sum(dim=0) / 4)", "test_layer_average", "this model has 6 heads",
         named="head-count-written-in"),
    edit("ln_1 skipped", "gpt2_heads", "x = block.ln_1(hidden)", "x = hidden",
         "test_recompute_head_pattern", "block.ln_1", named="ln1-skipped"),
    # The tiny models' biases and LayerNorms are random, as GPT-2 small's are far from their defaults: each slip shows.
    edit("c_attn's bias left out", "gpt2_heads", "x @ block.attn.c_attn.weight + block.attn.c_attn.bias",
         "x @ block.attn.c_attn.weight", "test_recompute_head_pattern", "without c_attn's bias",
         named="c-attn-bias-left-out"),
    edit("ln_2 in place of ln_1", "gpt2_heads", "x = block.ln_1(hidden)", "x = block.ln_2(hidden)",
         "test_recompute_head_pattern", "made from block.ln_2", named="ln2-instead-of-ln1"),
    edit("ln_f in place of ln_1", "gpt2_heads", "x = block.ln_1(hidden)", "x = base.ln_f(hidden)",
         "test_recompute_head_pattern", "made from the model's ln_f", named="lnf-instead-of-ln1"),
    edit("the next block's hidden state", "gpt2_heads", "hidden_states[layer][0]", "hidden_states[layer + 1][0]",
         "test_recompute_head_pattern", "hidden_states[layer]"),
    edit("another head's keys", "gpt2_heads", "k[:, columns].T",
         "k[:, (head + 1) % model.config.n_head * size:][:, :size].T",
         "test_recompute_head_pattern", "head h is columns"),
    edit("recompute only for GPT2LMHeadModel", "gpt2_heads", 'getattr(model, "transformer", model)',
         "model.transformer", "test_recompute_matches_reference", "transformer"),
    edit("bertviz's outputs[-1] for the attentions", "gpt2_heads", "model(ids, output_attentions=True).attentions",
         "model(ids, output_attentions=True)[-1]", "test_head_pattern", "name the field",
         named="attentions-read-as-last-output"),
    rewrite("tokens matched as substrings", "gpt2_heads", """
def attention_share(tokens, pattern, from_token, to_token):
    def position(token):
        name = token.removeprefix("Ġ").strip()
        for index, candidate in enumerate(tokens):
            if name in candidate:
                return index
        raise ValueError(f"no token {token!r} in {list(tokens)}")

    return float(np.asarray(pattern)[position(from_token), position(to_token)])
""", "test_attention_share", "match whole tokens", named="matched-as-substrings"),
    rewrite("the space markers stripped from the caller's tokens", "gpt2_heads", """
def attention_share(tokens, pattern, from_token, to_token):
    tokens[:] = [token.removeprefix("Ġ") for token in tokens]  # in place: the caller's list
    row, column = tokens.index(from_token.strip().removeprefix("Ġ")), tokens.index(to_token.strip().removeprefix("Ġ"))
    return float(np.asarray(pattern)[row, column])
""", "test_arguments_unchanged", "changed its argument `tokens` in place", named="changed-in-place"),
    edit("q, k and v side by side within each head", "gpt2_heads",
         "q, k, _ = qkv.split(model.config.n_embd, dim=-1)",
         "q, k, _ = (part.reshape(len(qkv), -1) for part in qkv.reshape(len(qkv), model.config.n_head, 3, size)"
         ".unbind(2))", "test_recompute_head_pattern", "GPT-NeoX's layout", named="qkv-side-by-side-per-head"),
    edit("a head's columns strided", "gpt2_heads", "scores = q[:, columns] @ k[:, columns].T",
         "scores = q.reshape(len(q), size, -1)[:, :, head] @ k.reshape(len(k), size, -1)[:, :, head].T",
         "test_recompute_head_pattern", "every n_head-th column", named="head-columns-strided"),
    edit("head_pattern cut to the lesson's 10 tokens", "gpt2_heads", "return tokens, attentions[layer][0, head].numpy()",
         "return tokens[:10], attentions[layer][0, head].numpy()[:10, :10]",
         "test_head_pattern_matches_reference", "tokens"),
]

MISTAKES += [
    # A text of one token, a text with a space before or after (issue 48).
    edit("the batch axis squeezed away", "gpt2_heads", "return tokens, attentions[layer][0, head].numpy()",
         "return tokens, attentions[layer].squeeze()[head].numpy()  # (1, n_head, T, T) -> (n_head, T, T)",
         "test_short_and_spaced_texts", "never squeeze()"),
    edit("the text stripped before tokenizing", "gpt2_heads",
         'ids = tokenizer(text, return_tensors="pt")["input_ids"]',
         'ids = tokenizer(text.strip(), return_tensors="pt")["input_ids"]', "test_short_and_spaced_texts",
         "Hand the text to the tokenizer as it is", named="text-changed"),
    # -- learning --------------------------------------------------------------------------
    # Integers where the lesson passes them, float32 where the docstring asks for float64 (issue 48).
    edit("soft answer's tensors made without a dtype", "learning",
         "    query, keys, values, sharpness = (torch.as_tensor(x, dtype=torch.float64)\n",
         "    query, keys, values, sharpness = (torch.as_tensor(x)\n", "test_soft_answer", "may be integers",
         named="integers-not-floats"),
    edit("the query made a tensor without a dtype", "learning",
         "    query = torch.tensor(float(query), dtype=torch.float64, requires_grad=True)\n    answer = soft_answer(",
         "    query = torch.tensor(query, requires_grad=True)\n    answer = soft_answer(", "test_answer_slope_lesson",
         "may be integers", named="integers-not-floats"),
    edit("soft answer in float32", "learning",
         "    query, keys, values, sharpness = (torch.as_tensor(x, dtype=torch.float64)\n",
         "    query, keys, values, sharpness = (torch.as_tensor(x, dtype=torch.float32)\n",
         "test_sharp_slope_needs_float64", "float32's 7 digits", named="float32-not-float64"),
    edit("soft answer averages the keys", "learning", "return torch.softmax(scores, dim=-1) @ values",
         "return torch.softmax(scores, dim=-1) @ keys", "test_soft_answer", "average the values",
         named="keys-averaged"),
    edit("softmax across the queries", "learning", "torch.softmax(scores, dim=-1)", "torch.softmax(scores, dim=0)",
         "test_soft_answer", "Answer i belongs to query i alone", named="queries-mixed"),
    edit("nearest picks the farthest key", "learning", "torch.argmin(", "torch.argmax(",
         "test_nearest_answer", "torch.argmin"),
    rewrite("slope with respect to the sharpness", "learning", """
def answer_slope(query, keys, values, sharpness):
    sharpness = torch.tensor(float(sharpness), dtype=torch.float64, requires_grad=True)
    answer = soft_answer(query, keys, values, sharpness)
    answer.backward()
    return answer.item(), sharpness.grad.item()
""", "test_answer_slope_lesson", "d(answer)/d(sharpness)", named="slope-by-sharpness"),
    edit(".item() cuts the slope's graph", "learning", "answer = soft_answer(query, keys, values, sharpness)",
         "answer = soft_answer(query.item(), keys, values, sharpness)", "test_answer_slope_lesson",
         "Torch lost track", named="graph-cut"),
    edit("softmax's normalising sum detached", "learning", "return torch.softmax(scores, dim=-1) @ values",
         "exps = scores.exp()\n    return (exps / exps.sum(dim=-1, keepdim=True).detach()) @ values",
         "test_answer_slope_matches_finite_differences", "nothing detached", named="sum-detached"),
    rewrite("nearest slope by finite differences", "learning", """
def nearest_slope(query, keys, values):
    step = 1e-3
    ahead, behind = nearest_answer(query + step, keys, values), nearest_answer(query - step, keys, values)
    return nearest_answer(query, keys, values).item(), ((ahead - behind) / (2 * step)).item()
""", "test_nearest_slope_is_zero", "finite difference", named="finite-difference"),
    edit("nearest slope returns None", "learning", "return answer.item(), 0.0", "return answer.item(), None",
         "test_nearest_slope_is_zero", "return 0.0", named="slope-none"),
    edit("learning rate's sign flipped", "learning", "log_sharpness -= lr * log_sharpness.grad",
         "log_sharpness += lr * log_sharpness.grad", "test_fit_losses_go_down", "uphill", named="stepped-uphill"),
    edit("gradient never reset", "learning", "        log_sharpness.grad.zero_()\n", "",
         "test_fit_losses_go_down", "never set back to zero", named="gradient-not-zeroed"),
    edit("loss summed, not averaged", "learning", "log_sharpness.exp()) - answers) ** 2).mean()",
         "log_sharpness.exp()) - answers) ** 2).sum()", "test_fit_losses_are_mean_squared_error", "take their mean",
         named="sum-not-mean"),
    rewrite("loss recorded after the step", "learning", """
def fit_sharpness(queries, answers, keys, values, start=0.1, steps=200, lr=5e-4):
    answers = torch.as_tensor(answers, dtype=torch.float64)
    log_sharpness = torch.tensor(math.log(start), dtype=torch.float64, requires_grad=True)
    losses = []
    for _ in range(steps):
        ((soft_answer(queries, keys, values, log_sharpness.exp()) - answers) ** 2).mean().backward()
        with torch.no_grad():
            log_sharpness -= lr * log_sharpness.grad
            losses.append(((soft_answer(queries, keys, values, log_sharpness.exp()) - answers) ** 2).mean().item())
        log_sharpness.grad.zero_()
    return log_sharpness.exp().item(), losses
""", "test_fit_losses_are_mean_squared_error", "before you step", named="loss-after-step"),
    edit(".item() cuts the fit's graph", "learning", "soft_answer(queries, keys, values, log_sharpness.exp())",
         "soft_answer(queries, keys, values, log_sharpness.exp().item())", "test_fit_recovers_sharpness",
         "Torch lost track", named="graph-cut"),
    edit("fit returns the logarithm", "learning", "return log_sharpness.exp().item(), losses",
         "return log_sharpness.item(), losses", "test_fit_recovers_sharpness", "logarithm of 1.5",
         named="log-returned"),
    rewrite("sharpness learned directly, free to go negative", "learning", """
def fit_sharpness(queries, answers, keys, values, start=0.1, steps=200, lr=5e-4):
    answers = torch.as_tensor(answers, dtype=torch.float64)
    sharpness = torch.tensor(float(start), dtype=torch.float64, requires_grad=True)
    losses = []
    for _ in range(steps):
        loss = ((soft_answer(queries, keys, values, sharpness) - answers) ** 2).mean()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            sharpness -= lr * sharpness.grad
        sharpness.grad.zero_()
    return sharpness.item(), losses
""", "test_fit_keeps_sharpness_positive", "rewards the *farthest* keys", named="sharpness-negative"),
    edit("mean absolute error", "learning", "log_sharpness.exp()) - answers) ** 2).mean()",
         "log_sharpness.exp()) - answers).abs()).mean()", "test_fit_noisy_answers", "least mean squared error",
         named="not-least-squares"),
    edit("learning rate ignored", "learning", "log_sharpness -= lr * log_sharpness.grad",
         "log_sharpness -= 5e-4 * log_sharpness.grad", "test_fit_matches_reference", "out of control",
         named="loss-blew-up"),
    edit("the guess written into the caller's keys", "learning",
         "        keys_now = torch.cat([keys[:which], key[None], keys[which + 1:]])\n",
         "        with torch.no_grad():\n            keys[which] = key  # torch.as_tensor shares the numpy memory\n"
         "        keys_now = torch.cat([keys[:which], key[None], keys[which + 1:]])\n",
         "test_arguments_unchanged", "changed its argument `keys` in place", named="changed-in-place"),
    rewrite("slope by a forward difference, step 0.001", "learning", """
def answer_slope(query, keys, values, sharpness):
    step = 1e-3
    here = soft_answer(float(query), keys, values, sharpness).item()
    return here, (soft_answer(float(query) + step, keys, values, sharpness).item() - here) / step
""", "test_answer_slope_lesson", "a forward difference with a step of 0.001", named="finite-difference"),
    # A hang is told it is one only after it has computed for its whole limit twice, the second time on a fresh
    # worker: right code on a busy machine is not (tests/engine/test_clock.py).
    rewrite("a descent that never stops", "learning", """
def fit_sharpness(queries, answers, keys, values, start=0.1, steps=200, lr=5e-4):
    step = 0
    while step != steps:  # step grows by 3 and never equals 200: the loop goes on for ever
        step += 3
    return start, []
""", "test_fit_recovers_sharpness", "is there a loop that never ends"),
    rewrite("Adam in place of the docstring's descent", "learning", """
def fit_sharpness(queries, answers, keys, values, start=0.1, steps=200, lr=5e-4):
    answers = torch.as_tensor(answers, dtype=torch.float64)
    log_sharpness = torch.tensor(math.log(start), dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.Adam([log_sharpness], lr=lr)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = ((soft_answer(queries, keys, values, log_sharpness.exp()) - answers) ** 2).mean()
        losses.append(loss.item())
        loss.backward()
        optimizer.step()
    return log_sharpness.exp().item(), losses
""", "test_fit_recovers_sharpness", "Adam", named="adam-steps"),
    rewrite("gradient descent with momentum", "learning", """
def fit_sharpness(queries, answers, keys, values, start=0.1, steps=200, lr=5e-4):
    answers = torch.as_tensor(answers, dtype=torch.float64)
    log_sharpness = torch.tensor(math.log(start), dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.SGD([log_sharpness], lr=lr, momentum=0.9)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = ((soft_answer(queries, keys, values, log_sharpness.exp()) - answers) ** 2).mean()
        losses.append(loss.item())
        loss.backward()
        optimizer.step()
    return log_sharpness.exp().item(), losses
""", "test_fit_follows_gradient_descent", "momentum", named="momentum-steps"),
    edit("one step fewer", "learning",
         "    for _ in range(steps):\n        loss = ((soft_answer(queries, keys, values, log_sharpness.exp())",
         "    for _ in range(steps - 1):\n        loss = ((soft_answer(queries, keys, values, log_sharpness.exp())",
         "test_fit_follows_gradient_descent", "exactly one per step", named="not-one-loss-per-step"),
    edit("half the steps", "learning",
         "    for _ in range(steps):\n        loss = ((soft_answer(queries, keys, values, log_sharpness.exp())",
         "    for _ in range(steps // 2):\n        loss = ((soft_answer(queries, keys, values, log_sharpness.exp())",
         "test_fit_recovers_sharpness", "losses for its 200 steps", named="not-one-loss-per-step"),
    rewrite("the lesson's constant loss written in", "learning", """
def fit_nearest_key(queries, answers, keys, values, which, start, steps=50, lr=1e-3):
    return float(start), [2588.89] * steps  # the docstring says the loss never changes
""", "test_nearest_fit_makes_no_progress", "with the guessed key in place of", named="nearest-loss-not-mse"),
    edit("nearest fit lets backward fail", "learning",
         "torch.autograd.grad(loss, key)[0] if loss.requires_grad else torch.zeros(())",
         "torch.autograd.grad(loss, key)[0]", "test_nearest_fit_makes_no_progress", "argmin cut every path",
         named="no-gradient-not-zero"),
    edit("nearest fit through the soft lookup", "learning", "((nearest_answer(queries, keys_now, values) - answers)",
         "((soft_answer(queries, keys_now, values, 1.5) - answers)", "test_nearest_fit_makes_no_progress",
         "moved", named="nearest-fit-moved"),
    rewrite("nearest lookup assumes sorted keys", "learning", """
def nearest_answer(query, keys, values):
    query, keys, values = (torch.as_tensor(x, dtype=torch.float64) for x in (query, keys, values))
    return values[torch.bucketize(query, (keys[1:] + keys[:-1]) / 2)]
""", "test_lookups_match_reference", "expected"),
    edit("slope at a fixed sharpness", "learning", "answer = soft_answer(query, keys, values, sharpness)",
         "answer = soft_answer(query, keys, values, 1.5)", "test_slopes_match_reference", "expected"),
    edit("soft answer as a kernel divided by its sum", "learning",
         "    return torch.softmax(scores, dim=-1) @ values\n",
         "    kernel = torch.exp(scores)\n    return (kernel @ values) / kernel.sum(dim=-1)\n",
         "test_very_sharp_answers", "underflow", named="exp-over-sum-underflows"),
    # New wrong implementations, one for each mistake learning's checks name that none above is told.
    rewrite("nearest lookup by midpoints, ties to the later key", "learning", """
def nearest_answer(query, keys, values):
    query, keys, values = (torch.as_tensor(x, dtype=torch.float64) for x in (query, keys, values))
    return values[torch.bucketize(query, (keys[1:] + keys[:-1]) / 2, right=True)]
""", "test_nearest_answer", "the first in `keys` wins", named="tie-not-to-first"),
    edit("slope negated, as gradient descent steps", "learning", "return answer.item(), query.grad.item()",
         "return answer.item(), -query.grad.item()", "test_answer_slope_lesson", "The sign is flipped",
         named="slope-sign-flipped"),
    rewrite("nearest slope through a very sharp soft lookup", "learning", """
def nearest_slope(query, keys, values):
    query = torch.tensor(float(query), dtype=torch.float64, requires_grad=True)
    answer = soft_answer(query, keys, values, 100.0)  # sharp enough to give the nearest answers
    answer.backward()
    return answer.item(), query.grad.item()
""", "test_nearest_slope_is_zero", "not by a soft lookup", named="nearest-slope-of-soft-lookup"),
    edit("gradient zeroed before the step", "learning", "        loss.backward()\n        with torch.no_grad():\n",
         "        loss.backward()\n        log_sharpness.grad.zero_()\n        with torch.no_grad():\n",
         "test_fit_recovers_sharpness", "It never moved from the start", named="never-moved"),
    edit("loss summed, seen on the lesson's fit", "learning", "log_sharpness.exp()) - answers) ** 2).mean()",
         "log_sharpness.exp()) - answers) ** 2).sum()", "test_fit_recovers_sharpness", "A step too large",
         named="step-too-large"),
    edit("loss divided by the number of keys", "learning", "log_sharpness.exp()) - answers) ** 2).mean()",
         "log_sharpness.exp()) - answers) ** 2).sum() / len(keys)", "test_fit_losses_are_mean_squared_error",
         "the mean of the squared differences", named="losses-not-mse"),
    edit("loss recorded as its square root", "learning", "losses.append(loss.item())",
         "losses.append(math.sqrt(loss.item()))", "test_fit_losses_are_mean_squared_error", "square root",
         named="root-of-mse"),
    edit("learning rate ignored, seen on a short fit", "learning", "log_sharpness -= lr * log_sharpness.grad",
         "log_sharpness -= 5e-4 * log_sharpness.grad", "test_fit_follows_gradient_descent",
         "was not lr times the gradient", named="not-plain-descent"),
    rewrite("sharpness returned from before the last step", "learning", """
def fit_sharpness(queries, answers, keys, values, start=0.1, steps=200, lr=5e-4):
    answers = torch.as_tensor(answers, dtype=torch.float64)
    log_sharpness = torch.tensor(math.log(start), dtype=torch.float64, requires_grad=True)
    losses = []
    for _ in range(steps):
        sharpness = log_sharpness.exp()
        loss = ((soft_answer(queries, keys, values, sharpness) - answers) ** 2).mean()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            log_sharpness -= lr * log_sharpness.grad
        log_sharpness.grad.zero_()
    return sharpness.item(), losses  # the sharpness of the last loss, before its step
""", "test_fit_follows_gradient_descent", "After the last loss comes one more step", named="last-step-missing"),
    # -- gpt2_values -----------------------------------------------------------------------
    edit("the token axis squeezed away with the batch axis", "gpt2_values",
         "hidden = base(ids, output_hidden_states=True).hidden_states[layer][0]",
         "hidden = base(ids, output_hidden_states=True).hidden_states[layer].squeeze()  # (1, T, d) -> (T, d)",
         "test_one_token_text", "never squeeze()", named="token-axis-squeezed"),
    edit("head size hard-coded to 64", "gpt2_values", "size = width // model.config.n_head", "size = 64",
         "test_head_vectors", "read both from model.config", named="head-size-written-in"),
    # Right for the standard tiny model: only its other shape (heads of 8, 6 of them) fails.
    edit("head size hard-coded to 16", "gpt2_values", "size = width // model.config.n_head", "size = 16",
         "test_head_vectors", "read both from model.config", named="head-size-written-in"),
    edit("head count hard-coded to 4", "gpt2_values", "size = width // model.config.n_head", "size = width // 4",
         "test_head_vectors", "read both from model.config", named="head-size-written-in"),
    edit("ln_1 skipped", "gpt2_values", "block.attn.c_attn(block.ln_1(hidden))", "block.attn.c_attn(hidden)",
         "test_head_vectors", "apply block.ln_1", named="ln1-skipped"),
    edit("c_attn's bias left out", "gpt2_values", "block.attn.c_attn(block.ln_1(hidden))",
         "(block.ln_1(hidden) @ block.attn.c_attn.weight)", "test_head_vectors", "without c_attn's bias",
         named="c-attn-bias-left-out"),
    edit("ln_2 in place of ln_1", "gpt2_values", "block.attn.c_attn(block.ln_1(hidden))",
         "block.attn.c_attn(block.ln_2(hidden))", "test_head_vectors", "made from block.ln_2", named="ln2-instead-of-ln1"),
    edit("ln_f in place of ln_1", "gpt2_values", "block.attn.c_attn(block.ln_1(hidden))",
         "block.attn.c_attn(base.ln_f(hidden))", "test_head_vectors", "made from the model's ln_f",
         named="lnf-instead-of-ln1"),
    edit("a head's columns strided", "gpt2_values",
         "return tuple(third[:, head * size:(head + 1) * size].numpy() for third in thirds)",
         "return tuple(third.reshape(len(third), size, -1)[:, :, head].numpy() for third in thirds)",
         "test_head_vectors", "every n_head-th column", named="head-columns-strided"),
    rewrite("ids given a batch axis in place", "gpt2_values", """
def head_vectors(model, input_ids, layer, head):
    ids = np.asarray(input_ids)
    ids.shape = (1, -1)  # a batch of one: reshaped where the caller keeps its ids, when they are an array
    base = getattr(model, "transformer", model)
    width = model.config.n_embd
    size = width // model.config.n_head
    with torch.no_grad():
        block = base.h[layer]
        hidden = base(torch.as_tensor(ids), output_hidden_states=True).hidden_states[layer][0]
        thirds = block.attn.c_attn(block.ln_1(hidden)).split(width, dim=-1)
    return tuple(third[:, head * size:(head + 1) * size].numpy() for third in thirds)
""", "test_arguments_unchanged", "changed its argument `input_ids` in place", named="changed-in-place"),
    edit("keys and values swapped", "gpt2_values", "for third in thirds)", "for third in (thirds[0], thirds[2], thirds[1]))",
         "test_head_vectors", "in that order", named="thirds-out-of-order"),
    edit("keys mixed instead of values", "gpt2_values",
         "output, _ = scaled_dot_product_attention(queries, keys, values,",
         "output, _ = scaled_dot_product_attention(queries, keys, keys,", "test_head_output", "the keys mixed",
         named="keys-for-values"),
    rewrite("pattern transposed", "gpt2_values", """
def head_output(model, input_ids, layer, head):
    queries, keys, values = head_vectors(model, input_ids, layer, head)
    _, weights = scaled_dot_product_attention(queries, keys, values, causal_mask(len(queries)))
    return weights.T @ values
""", "test_head_output", "the pattern transposed", named="pattern-transposed"),
    rewrite("another head's values", "gpt2_values", """
def head_output(model, input_ids, layer, head):
    queries, keys, _ = head_vectors(model, input_ids, layer, head)
    _, _, values = head_vectors(model, input_ids, layer, (head + 1) % model.config.n_head)
    return scaled_dot_product_attention(queries, keys, values, causal_mask(len(queries)))[0]
""", "test_head_output", "this head's pattern applied to head", named="values-of-another-head"),
    edit("no causal mask", "gpt2_values",
         "output, _ = scaled_dot_product_attention(queries, keys, values, causal_mask(len(queries)))",
         "output, _ = scaled_dot_product_attention(queries, keys, values)",
         "test_first_token_moves_only_itself", "Is the future masked", named="future-not-masked"),
    edit("contributions not normalised", "gpt2_values", "return sizes / sizes.sum()", "return sizes",
         "test_value_contributions", "divided by their sum", named="not-divided-by-sum"),
    edit("attention weights as value shares", "gpt2_values", "sizes = weights[position] * np.linalg.norm(values, axis=1)",
         "sizes = weights[position]", "test_value_contributions", "the attention weights alone",
         named="weights-alone"),
    edit("shares read from the pattern's column", "gpt2_values", "sizes = weights[position] *",
         "sizes = weights[:, position] *", "test_value_contributions", "column", named="pattern-transposed"),
    edit("every head's columns kept", "gpt2_values", "third[:, head * size:(head + 1) * size].numpy()",
         "third.numpy()", "test_head_vectors", "every head together", named="every-head-together"),
    edit("heads counted from 1", "gpt2_values", "third[:, head * size:(head + 1) * size]",
         "third[:, (head - 1) * size:head * size]", "test_head_vectors", "head h owns columns h*s to (h+1)*s",
         named="head-off-by-one"),
    edit("layers counted from 1", "gpt2_values",
         "base.h[layer]\n        hidden = base(ids, output_hidden_states=True).hidden_states[layer][0]",
         "base.h[layer - 1]\n        hidden = base(ids, output_hidden_states=True).hidden_states[layer - 1][0]",
         "test_head_vectors", "block 4's input is hidden_states[4]", named="layer-off-by-one"),
    edit("q, k and v side by side within each head", "gpt2_values",
         "thirds = block.attn.c_attn(block.ln_1(hidden)).split(width, dim=-1)",
         "qkv = block.attn.c_attn(block.ln_1(hidden))\n"
         "        thirds = [part.reshape(len(qkv), -1) for part in qkv.reshape(len(qkv), -1, 3, size).unbind(2)]",
         "test_head_vectors", "GPT-NeoX's layout", named="qkv-side-by-side-per-head"),
    edit("values returned unmixed", "gpt2_values", "    return output\n", "    return values\n", "test_head_output",
         "unmixed", named="values-not-mixed"),
    edit("no causal mask in the shares", "gpt2_values",
         "_, weights = scaled_dot_product_attention(queries, keys, values, causal_mask(len(queries)))",
         "_, weights = scaled_dot_product_attention(queries, keys, values)", "test_value_contributions",
         "gives shares to tokens after position", named="future-not-masked"),
    edit("value vectors summed, not their lengths", "gpt2_values", "np.linalg.norm(values, axis=1)",
         "values.sum(axis=1)", "test_value_contributions", "sizes are lengths", named="sizes-not-lengths"),
    edit("sizes squared", "gpt2_values", "sizes = weights[position] * np.linalg.norm(values, axis=1)",
         "sizes = (weights[position] * np.linalg.norm(values, axis=1)) ** 2", "test_value_contributions",
         "squared sizes", named="sizes-squared"),
    edit("head vectors only for GPT2LMHeadModel", "gpt2_values", 'getattr(model, "transformer", model)',
         "model.transformer", "test_head_vectors_matches_reference", "transformer"),
    edit("head output cut to the lesson's 10 tokens", "gpt2_values", "    return output\n",
         "    return output[:10]\n", "test_head_output_matches_reference", "expected shape"),
    edit("shares of the last token, whatever the position", "gpt2_values", "sizes = weights[position] *",
         "sizes = weights[-1] *", "test_value_contributions_matches_reference", "expected"),
]

MISTAKES += [
    # Return types the docstrings promise, judged by one rule (issue 48): values right, types not.
    edit("softmax returns a list", "softmax", "return exps / np.sum(exps, axis=axis, keepdims=True)",
         "return (exps / np.sum(exps, axis=axis, keepdims=True)).tolist()", "test_return_types",
         "wrap it in `np.asarray`", named="wrong-return-type"),
    edit("soft lookup's weights as a list", "lookup", "return float(answers), weights",
         "return float(answers), list(weights)", "test_return_types", "wrap it in `np.asarray`",
         named="wrong-return-type"),
    edit("slopes returned as tensors", "learning", "return answer.item(), query.grad.item()",
         "return answer, query.grad", "test_return_types", "`.item()`, which also drops its gradient history",
         named="wrong-return-type"),
    edit("nearest answer's tensors made without a dtype", "learning",
         "query, keys, values = (torch.as_tensor(x, dtype=torch.float64) for x in (query, keys, values))",
         "query, keys, values = (torch.as_tensor(x) for x in (query, keys, values))", "test_return_types",
         "integers in, integers out", named="wrong-return-type"),
    edit("losses kept as tensors", "learning", "losses.append(loss.item())", "losses.append(loss)",
         "test_return_types", "item [1][0] of what", named="wrong-return-type"),
    edit("a float32 share", "gpt2_heads", "return float(np.asarray(pattern)[row, column])",
         "return np.asarray(pattern)[row, column]", "test_return_types", "float32 is not what the docstring asks",
         named="wrong-return-type"),
    edit("the pattern squeezed", "gpt2_heads", "return tokens, attentions[layer][0, head].numpy()",
         "return tokens, attentions[layer][0, head].squeeze().numpy()", "test_return_types",
         "keep all 2 dimensions", named="wrong-return-type"),
    edit("attend's weights as a list", "attention", "return weights @ np.asarray(values, dtype=float), weights",
         "return weights @ np.asarray(values, dtype=float), weights.tolist()", "test_return_types",
         "wrap it in `np.asarray`", named="wrong-return-type"),
    edit("shares as a list", "gpt2_values", "return sizes / sizes.sum()", "return (sizes / sizes.sum()).tolist()",
         "test_return_types", "wrap it in `np.asarray`", named="wrong-return-type"),
    # The caller's arguments changed in place, where a mistake would write (issue 48).
    edit("the mask inverted in place", "attention", "scores = np.where(mask, scores, -np.inf)",
         "forbidden = np.asarray(mask)\n        np.logical_not(forbidden, out=forbidden)  # True: forbidden\n"
         "        scores[forbidden] = -np.inf", "test_arguments_unchanged", "changed its argument `mask` in place",
         named="changed-in-place"),
    edit("prices scaled in place", "learning", "return torch.softmax(scores, dim=-1) @ values",
         "values /= 1000  # in millions of pounds, for smaller numbers\n    return torch.softmax(scores, dim=-1) @ values "
         "* 1000", "test_arguments_unchanged", "changed its argument `values` in place", named="changed-in-place"),
]
