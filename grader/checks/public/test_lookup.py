"""Public checks for exercise 2: exact, nearest and soft lookup of house prices."""

import numpy as np
import pytest

from grader.engine import verify
from grader.checks.promised import promised
from grader.engine.errors import SubmissionError
from grader.engine.results import ErrorKind
from grader.checks.learning_numpy import soft_answers
from grader.checks.lookup_weights import (BEDROOMS, PRICES, expect_closer_keys_weigh_more, expect_found,
                                         fail_if_look_alike, right_weights, soft, underflow_cause)

# Every kind of input the lookups' docstrings and the lesson allow, and the checks (public and hidden) that try it:
# the one place to see what is covered. tests/checks/test_inputs.py holds each check named here to exist.
INPUTS = {
    "the lesson's records, queries on a key, between keys, beyond both ends": (
        "test_exact_lookup_finds_key", "test_exact_lookup_missing_key", "test_nearest_lookup", "test_lesson_table",
        "test_soft_answer_within_values"),
    "integer queries, keys and prices (3 bedrooms, the docstring's examples)": (
        "test_exact_lookup_finds_key", "test_nearest_lookup", "test_lesson_table", "test_arguments_unchanged"),
    "a query equal to a key of another type (2.0 and integer keys, 4 and float keys)": (
        "test_exact_lookup_awkward_records",),
    "a found value of 0": ("test_exact_lookup_awkward_records",),
    "two keys closer than 0.001": ("test_exact_lookup_awkward_records",),
    "a key listed twice; equally near keys (the tie rule), in either order": (
        "test_exact_lookup_first_of_repeated_key", "test_nearest_tie_rule"),
    "keys and values as lists and as arrays": ("test_arguments_unchanged", "hidden"),
    "random float records": ("hidden", "hidden",
                             "hidden"),
    "sharpness 0, near 0, 1.0 by default, and very sharp (200, 1000)": (
        "test_sharpness_limits", "test_squared_distance_scores", "test_very_sharp_and_far_queries"),
    "a query far from every key, above or below them": ("test_very_sharp_and_far_queries",),
    "an array of queries; an array of one query; a batch with one query far from every key": (
        "test_many_queries", "hidden"),
    "integer records and queries, judged by the type the docstring promises": ("test_return_types",),
}
# Left out on purpose: string keys (the module's docstring says keys are integers or floats), an empty table of
# records (nearest_lookup has nothing to return, and the docstrings say nothing of it), a 2-D array of queries
# (soft_lookup's docstring allows a number or a 1-D array).

# The lesson's table for query 3 and sharpness 1.5.
LESSON_WEIGHTS = [0.0054935, 0.4945065, 0.4945065, 0.0054935]
LESSON_ANSWER = 275.1099


@pytest.mark.points(1)
def test_exact_lookup_finds_key(submission):
    """An exact lookup finds the price of a key that is in the records, integers included (the docstring's example)."""
    for query, price in zip(BEDROOMS, PRICES):
        expect_found(submission, query, price)
    keys, values = [int(key) for key in BEDROOMS], [int(price) for price in PRICES]
    what = "exact_lookup(2, [1, 2, 4, 5], [150, 210, 340, 420])"
    found = submission.lookup.exact_lookup(2, keys, values)
    verify.expect(found is not None, f"{what}, all integers as in the docstring, returned None: key 2 is there.")
    verify.close(verify.number(found, what), 210, what, hint="Integer keys and queries match as floats do.")


@pytest.mark.points(1)
@pytest.mark.parametrize("query", [3.0, 0.0, 2.5, 6.0])
def test_exact_lookup_missing_key(submission, query):
    """An exact lookup of a key that is not there returns None; the closest key that is there is found."""
    found = submission.lookup.exact_lookup(query, BEDROOMS, PRICES)
    verify.expect(found is None, f"exact_lookup({query:g}, ...) returned {verify.show(found)}; no house has "
                  f"{query:g} bedrooms, so the answer is None: an exact lookup finds nothing when nothing matches.",
                  mistake="missing-key-not-none")
    closest = int(np.argmin(np.abs(np.array(BEDROOMS) - query)))
    expect_found(submission, BEDROOMS[closest], PRICES[closest])


@pytest.mark.points(1)
def test_exact_lookup_first_of_repeated_key(submission):
    """A key listed twice gives the value of its first occurrence."""
    keys, values = [4.0, 2.0, 5.0, 2.0], [340.0, 210.0, 420.0, 199.0]
    hint = ("Key 2 is listed twice, with 210 first and 199 later: the docstring asks for the first. A dict built "
            "from the pairs keeps the last value written for a key, so stop at the first match instead.")
    expect_found(submission, 2.0, 210.0, keys, values, hint=hint, mistake="last-of-repeated-key")
    expect_found(submission, 5.0, 420.0, keys, values)


# Records where a careless match goes wrong: a price of 0 (a house given away), a query of another type than the
# keys (2.0 against integer keys, 4 against float ones), two keys closer than 0.001. Each: (query, keys, values, price).
AWKWARD_RECORDS = {
    "a price of 0": (2.0, [1.0, 2.0, 4.0], [150.0, 0.0, 340.0], 0.0),
    "a float query, integer keys": (2.0, [1, 2, 4, 5], [150, 210, 340, 420], 210.0),
    "an integer query, float keys": (4, [1.0, 2.0, 4.0, 5.0], [150.0, 210.0, 340.0, 420.0], 340.0),
    "keys 0.0004 apart": (2.0004, [2.0, 2.0004, 4.0], [210.0, 215.0, 340.0], 215.0),
}


@pytest.mark.points(1)
@pytest.mark.parametrize("query,keys,values,price", AWKWARD_RECORDS.values(), ids=AWKWARD_RECORDS.keys())
def test_exact_lookup_awkward_records(submission, query, keys, values, price):
    """A price of 0 is found (it is not None); 2 and 2.0 are equal keys; keys 0.0004 apart are different keys."""
    what = f"exact_lookup({query!r}, keys={keys}, values={values})"
    found = submission.lookup.exact_lookup(query, keys, values)
    verify.expect(found is not None, f"{what} returned None, but key {query!r} is there" + (
        f" with a price of 0: 0 is a value like any other, and only 'no key matched' answers None (`value or None`, "
        "or `if value:`, takes a found 0 for nothing found)." if price == 0 else
        ": keys and queries are numbers, and 2 == 2.0 in Python and numpy alike; compare them with ==, not as text "
        "or by type."), mistake="found-value-lost" if price == 0 else "equal-key-not-found")
    verify.close(verify.number(found, what), price, what, atol=0, rtol=0, hint=(
        "The key equal to the query, not one near it: keys 2.0 and 2.0004 are different keys, and an exact lookup "
        "compares with ==, never within a tolerance."), mistake="near-key-taken-as-equal")
    if price == 0 or isinstance(query, int):
        return
    near = nearest_lookup_of(submission, query - 0.0001, keys, values)  # nearer 2.0004 by 0.0002 than 2.0
    expected = values[int(np.argmin(np.abs(np.asarray(keys, dtype=float) - (query - 0.0001))))]
    verify.close(near, expected, f"nearest_lookup({query - 0.0001:g}, keys={keys}, ...)", atol=0, rtol=0,
                 hint="The key at the smallest |query - key|, however small the differences: never round them.",
                 mistake="not-the-nearest-key")


def nearest_lookup_of(submission, query, keys, values):
    return verify.number(submission.lookup.nearest_lookup(query, keys, values), f"nearest_lookup({query:g}, ...)")


@pytest.mark.points(2)
def test_nearest_lookup(submission):
    """The nearest match returns the price of the closest key, and jumps between keys."""
    for query, price in [(1.2, 150.0), (2.2, 210.0), (2.9, 210.0), (3.1, 340.0), (4.6, 420.0), (9.0, 420.0),
                         (-3.0, 150.0)]:
        found = verify.number(submission.lookup.nearest_lookup(query, BEDROOMS, PRICES),
                              f"nearest_lookup({query:g}, ...)")
        hint, mistake = "Pick the key with the smallest |query - key| and return its value.", "not-the-nearest-key"
        if found in PRICES and found != price:
            far = PRICES[int(np.argmax(np.abs(np.array(BEDROOMS) - query)))]
            if found == far:
                hint, mistake = "That is the value of the *farthest* key: use argmin, not argmax.", "farthest-key"
        verify.close(found, price, f"nearest_lookup({query:g}, ...)", hint=hint, mistake=mistake)
    keys, values = [int(key) for key in BEDROOMS], [int(price) for price in PRICES]
    what = "nearest_lookup(2.2, [1, 2, 4, 5], [150, 210, 340, 420])"
    try:
        found = submission.lookup.nearest_lookup(2.2, keys, values)
    except SubmissionError as error:
        if error.kind != ErrorKind.EXCEPTION:
            raise
        verify.fail(f"{what}, with integer keys, raised {error.message}. Keys may be integers: compute the distances "
                    "in a new float array (np.abs(np.asarray(keys, dtype=float) - query)), not in the keys' own dtype.",
                    "distances-in-key-dtype")
    verify.close(verify.number(found, what), 210, what, hint="Integer keys are keys too: the closest to 2.2 is 2.",
                 mistake="distances-in-key-dtype")


@pytest.mark.points(1)
def test_nearest_tie_rule(submission):
    """Equally close keys: the one that comes first in `keys` wins."""
    found = verify.number(submission.lookup.nearest_lookup(3.0, BEDROOMS, PRICES), "nearest_lookup(3, ...)")
    verify.close(found, 210.0, "nearest_lookup(3, ...) with keys [1, 2, 4, 5]",
                 hint="Keys 2 and 4 are both 1 away from 3; the tie rule gives the first of them in `keys`.",
                 mistake="tie-not-first")
    reordered = verify.number(submission.lookup.nearest_lookup(3.0, [5.0, 4.0, 2.0, 1.0], [420.0, 340.0, 210.0, 150.0]),
                              "nearest_lookup(3, ...) with keys [5, 4, 2, 1]")
    verify.close(reordered, 340.0, "nearest_lookup(3, ...) with keys [5, 4, 2, 1]",
                 hint="With the keys listed as [5, 4, 2, 1], key 4 comes before key 2, so it wins the tie.",
                 mistake="tie-not-first")


@pytest.mark.points(3)
def test_lesson_table(submission):
    """Query 3, sharpness 1.5: weights 0.55% / 49.45% / 49.45% / 0.55%, answer £275.11k."""
    answer, weights = soft(submission, 3.0, 1.5)
    hint, mistake = "Score each key with -sharpness * (query - key)**2, then softmax.", "score-formula-wrong"
    if np.allclose(weights, 0.25, atol=1e-3):
        hint, mistake = ("All weights are equal: are the scores computed from the distance to the query?",
                         "scores-ignore-distance")
    verify.close(weights, LESSON_WEIGHTS, "the weights for query 3", atol=5e-6, rtol=0,
                 hint=f"You gave {verify.percent(weights)}. {hint}", mistake=mistake)
    keys_mix = float(np.dot(weights, BEDROOMS))
    hint, mistake = "The answer is sum(weights * values).", "answer-not-weighted-sum"
    if np.isclose(answer, keys_mix, atol=1e-6):
        hint, mistake = ("That is the weighted average of the *keys* (bedrooms); average the values (prices) "
                         "instead."), "keys-averaged"
    verify.close(answer, LESSON_ANSWER, "the answer for query 3", atol=1e-3, rtol=0, hint=hint, mistake=mistake)
    answer, weights = soft(submission, 4.3, 0.8)  # beyond the lesson's example: weights the judge computes
    expected = right_weights(4.3, 0.8)
    verify.close(weights, expected, "the weights for query 4.3, sharpness 0.8", atol=1e-6,
                 hint=f"You gave {verify.percent(weights)}; scores then softmax give {verify.percent(expected)}.",
                 mistake="score-formula-wrong")
    answer, weights = soft(submission, 3, 1.5, [int(key) for key in BEDROOMS], [int(price) for price in PRICES])
    verify.close(answer, LESSON_ANSWER, "the answer for query 3 with integer keys and prices", atol=1e-3, rtol=0,
                 hint="Integer queries, keys and prices are numbers like any other: turn them into floats first.",
                 mistake="integers-not-floats")


@pytest.mark.points(1)
@pytest.mark.parametrize("sharpness", [0.1, 1.5, 10.0])
def test_soft_weights_sum_to_one(submission, sharpness):
    """Soft-lookup weights are positive and sum to 1."""
    for query in (0.5, 2.5, 4.2):
        _, weights = soft(submission, query, sharpness)
        verify.expect(np.all(weights >= 0), f"negative weights {verify.show(weights)} for query {query:g}.")
        verify.close(weights.sum(), 1.0, f"the sum of the weights for query {query:g}", atol=1e-6,
                     hint="Turn the scores into weights with softmax, which divides by the sum.",
                     mistake="weights-not-normalised")
        expect_closer_keys_weigh_more(weights, query, sharpness=sharpness)


@pytest.mark.points(1)
def test_soft_answer_within_values(submission):
    """The soft answer is a weighted average: it never leaves the range of the prices."""
    for sharpness in (0.05, 1.5, 20.0):
        for query in np.linspace(-2, 8, 11):
            answer, weights = soft(submission, float(query), sharpness)
            bound = min(PRICES) if answer < min(PRICES) else max(PRICES)
            verify.expect(min(PRICES) - 1e-9 <= answer <= max(PRICES) + 1e-9,
                          f"soft_lookup({query:g}, sharpness={sharpness:g}) answered "
                          f"{verify.show(answer, verify.digits_to_differ(bound, answer))}, outside the "
                          f"prices' range [{min(PRICES):g}, {max(PRICES):g}]. Weights that are positive and sum "
                          "to 1 can only average the values, never go beyond them.", mistake="answer-outside-values")
            expect_closer_keys_weigh_more(weights, float(query), sharpness=sharpness)


@pytest.mark.points(2)
def test_squared_distance_scores(submission):
    """Weights follow score = -sharpness * (query - key)^2: ratios match exp(score differences)."""
    query, sharpness = 2.6, 0.7
    _, weights = soft(submission, query, sharpness)
    verify.expect(np.all(weights > 0), f"weights {verify.show(weights)} must all be positive.")
    distances = np.array(BEDROOMS) - query
    log_ratios = np.log(weights) - np.log(weights[1])  # relative to key 2, the closest
    expected = -sharpness * (distances**2 - distances[1] ** 2)
    if not np.allclose(log_ratios, expected, atol=1e-6):  # soft() has told the scores it knows: not those
        verify.fail(f"For query {query:g} and sharpness {sharpness:g} your weights {verify.percent(weights)} "
                    "do not follow score = -sharpness * (query - key)^2.", "score-formula-wrong")
    answer, weights = verify.pair(submission.lookup.soft_lookup(query, BEDROOMS, PRICES), "soft_lookup(2.6, keys, "
                                  "values), with no sharpness", "(answer, weights)")
    weights = verify.array(weights, "the weights of soft_lookup(2.6, keys, values)", shape=(len(BEDROOMS),))
    default = np.exp(-(distances**2)) / np.exp(-(distances**2)).sum()
    hint = "The docstring's default is sharpness=1.0: def soft_lookup(query, keys, values, sharpness=1.0)."
    if np.allclose(weights, np.exp(-1.5 * distances**2) / np.exp(-1.5 * distances**2).sum(), atol=1e-6):
        hint = "Those are the weights of sharpness 1.5, the lesson's: the default is 1.0. " + hint
    verify.close(weights, default, "the weights of soft_lookup(2.6, keys, values), with no sharpness", atol=1e-6,
                 hint=hint, mistake="default-sharpness-not-one")


@pytest.mark.points(1)
def test_soft_answer_is_smooth(submission):
    """The soft answer moves smoothly with the query, where the nearest match jumps."""
    queries = np.round(np.arange(1.0, 5.0001, 0.05), 10)
    answers = np.array([soft(submission, float(q), 1.5)[0] for q in queries])
    steps = np.abs(np.diff(answers))
    worst = int(np.argmax(steps))
    verify.expect(steps[worst] < 15.0,
                  f"between queries {queries[worst]:g} and {queries[worst + 1]:g} the soft answer jumps from "
                  f"{answers[worst]:.2f} to {answers[worst + 1]:.2f}. A soft lookup blends all values, so a small "
                  "move of the query should move the answer only a little: is it picking one value instead?",
                  mistake="hard-lookup")
    for end in (0, -1):  # smooth, but not flat: the answer follows the query from one end of the records to the other
        closest = PRICES[int(np.argmin(np.abs(np.array(PRICES) - answers[end])))]
        verify.expect(closest == PRICES[end],
                      f"for query {queries[end]:g} the soft answer is {answers[end]:.2f}, nearer £{closest:g}k than "
                      f"£{PRICES[end]:g}k, the price of {BEDROOMS[end]:g} bedrooms: the answer must move with the "
                      "query, towards the values of the keys it comes close to.", mistake="answer-not-following-query")


@pytest.mark.points(2)
def test_sharpness_limits(submission):
    """High sharpness approaches the nearest match; sharpness near 0 approaches the mean price."""
    for query, nearest in [(2.2, 210.0), (4.6, 420.0), (1.4, 150.0)]:
        answer, _ = soft(submission, query, 200.0)
        verify.close(answer, nearest, f"soft_lookup({query:g}, sharpness=200)", atol=0.01,
                     hint="A very sharp lookup should give all the weight to the closest key.",
                     mistake="not-sharp-in-the-limit")
    answer, _ = soft(submission, 3.7, 1e-7)
    verify.close(answer, float(np.mean(PRICES)), "soft_lookup(3.7, sharpness=0.0000001)", atol=0.01,
                 hint="With sharpness near 0 every score is near 0, the weights are equal, and the answer "
                     "is the plain mean of the prices.", mistake="not-flat-in-the-limit")
    try:  # sharpness 0 itself is allowed (>= 0): every score is 0
        answer, weights = soft(submission, 3.7, 0.0)
    except SubmissionError as error:
        if error.kind != ErrorKind.EXCEPTION:
            raise
        verify.fail(f"soft_lookup(3.7, sharpness=0) raised {error.message}. A sharpness of 0 is allowed (the "
                    "docstring says >= 0): every score is then 0, the weights are equal and the answer is the mean "
                    "price. Multiply the squared distances by the sharpness; never divide by it.",
                    "divided-by-sharpness")
    verify.close(weights, [0.25] * 4, "the weights of soft_lookup(3.7, sharpness=0)", atol=1e-9,
                 hint="A sharpness of 0 makes every score 0: equal weights.", mistake="not-flat-in-the-limit")
    verify.close(answer, float(np.mean(PRICES)), "soft_lookup(3.7, sharpness=0)", atol=1e-6,
                 hint="Equal weights average the prices: the plain mean.", mistake="not-flat-in-the-limit")


# Arrays of queries: four near the keys; one alone (an array still, not a number); one near the keys beside one far
# from every key, at a sharpness where each row's scores lie hundreds apart from the other row's.
BATCHES = {"four": ([1.0, 2.5, 3.0, 4.75], 1.5), "one-in-an-array": ([3.0], 1.5), "one-far": ([3.0, 20.0], 10.0)}


@pytest.mark.points(2)
@pytest.mark.parametrize("queries,sharpness", BATCHES.values(), ids=BATCHES.keys())
def test_many_queries(submission, queries, sharpness):
    """An array of queries gives an array of answers and a (queries x keys) weight matrix, even of one query."""
    queries, count = np.array(queries), len(queries)
    what = f"soft_lookup(an array of {count} queries {verify.show(queries)}, ..., sharpness={sharpness:g})"
    result = verify.pair(submission.lookup.soft_lookup(queries, BEDROOMS, PRICES, sharpness), what,
                         "(answers, weights)")
    one = ("" if count > 1 else " An array of one query is still an array: its answers have shape (1,) and its "
           "weights (1, number of keys); only a number as the query gives a number as the answer.")
    weights = verify.array(result[1], f"the weights of {what} (one row per query){one}", shape=(count, 4),
                           finite=False)
    weights = verify.finite(weights, f"the weights of {what}", cause=(
        f"Each query's row of scores needs its own largest score subtracted: here one query lies far from every key, "
        "so its scores lie hundreds below the other's, and one shift for the whole table underflows its row to 0/0. "
        "Pass the table of scores to your softmax along the last axis (axis=-1), which shifts each row by its own "
        "largest score."), mistake="one-shift-for-all-queries")
    answers = verify.array(result[0], f"the answers of {what}{one}", shape=(count,))
    for row, query in enumerate(queries):
        one_answer, one_weights = soft(submission, float(query), sharpness)
        verify.close(weights[row], one_weights, f"row {row} of the weights (query {query:g})", atol=1e-6,
                     hint="Row i must be the weights of query i alone: give the queries a new axis, "
                         "queries[:, None] - keys, and softmax along the last axis.", mistake="rows-not-per-query")
        verify.close(answers[row], one_answer, f"answer {row} (query {query:g})", atol=1e-6)
        expect_closer_keys_weigh_more(weights[row], float(query), sharpness=sharpness)


# A 25-bedroom house sold for £900k: query 15 then lies 10 from keys 5 and 25 alike, far from both; a -30 (a
# typo, say) at £40k leaves query -14.5 15.5 from keys -30 and 1.
MANSION = (BEDROOMS + [25.0], PRICES + [900.0])
SHARP_AND_FAR = {"sharp": [(3.0, 1000.0, BEDROOMS, PRICES)],
                 "far": [(20.0, 10.0, BEDROOMS, PRICES), (15.0, 10.0, *MANSION)],
                 "far-below": [(-15.0, 10.0, BEDROOMS, PRICES), (-14.5, 10.0, [-30.0] + BEDROOMS, [40.0] + PRICES)]}


@pytest.mark.points(2)
@pytest.mark.parametrize("lookups", SHARP_AND_FAR.values(), ids=SHARP_AND_FAR.keys())
def test_very_sharp_and_far_queries(submission, lookups):
    """A very sharp lookup, or a query far from every key, still answers: all the weight on the nearest key(s)."""
    for query, sharpness, keys, values in lookups:
        what = f"soft_lookup({query:g}, ..., sharpness={sharpness:g})"
        if keys is not BEDROOMS:
            what = f"soft_lookup({query:g}, keys {keys}, prices {values}, sharpness={sharpness:g})"
        scores = -sharpness * (query - np.array(keys)) ** 2
        answer, weights = verify.pair(submission.lookup.soft_lookup(query, keys, values, sharpness), what,
                                      "(answer, weights)")
        weights = verify.array(weights, f"the weights of {what}", shape=(len(keys),), finite=False)
        if not np.all(np.isfinite(weights)):
            cause, mistake = underflow_cause(submission, scores)
            verify.finite(weights, f"the weights of {what}", cause=cause, mistake=mistake)
        fail_if_look_alike(submission, weights, query, sharpness, keys)
        expected = verify.all_on_the_best(scores)  # the runner-up trails by hundreds: exp() of that is below 1e-100
        verify.close(weights, expected, f"the weights of {what}", atol=1e-6,
                     hint="Only the nearest key (or the two equally near) should get weight.",
                     mistake="not-sharp-in-the-limit")
        verify.close(verify.number(answer, f"the answer of {what}"), float(expected @ values), f"the answer of {what}",
                     atol=1e-3, rtol=0, hint="The answer is sum(weights * values).",
                     mistake="answer-not-weighted-sum")


# Every kind of input the docstrings allow: a number or an array of queries, lists or arrays of records, integers.
ARGUMENTS = {
    "arrays": (np.array(BEDROOMS), np.array(PRICES), 2.0, 2.4, 3.0),
    "lists": (list(BEDROOMS), list(PRICES), 4.0, 4.4, np.array([1.5, 4.0])),
    "integer-arrays": (np.array(BEDROOMS, dtype=int), np.array(PRICES, dtype=int), 5, 3.3, np.array([3.0])),
}


@pytest.mark.points(1)
@pytest.mark.parametrize("keys,values,exact,nearest,soft_query", ARGUMENTS.values(), ids=ARGUMENTS.keys())
def test_arguments_unchanged(submission, keys, values, exact, nearest, soft_query):
    """The lookups leave the queries, keys and values they are given as they were, whatever their kind."""
    calls = {"exact_lookup": (exact, keys, values), "nearest_lookup": (nearest, keys, values),
             "soft_lookup": (soft_query, keys, values, 1.5)}
    for name, args in calls.items():
        what = f"{name}({verify.show(args[0])}, keys, values{', 1.5' if name == 'soft_lookup' else ''})"
        value, after = getattr(submission.lookup, name).arguments_after(*args)
        verify.unchanged(dict(zip(("query", "keys", "values", "sharpness"), args)), after, what)
        # About the arguments: a wrong answer loses its own checks; here it need only be the kind of answer it is.
        if name == "soft_lookup":
            weights = verify.array(verify.pair(value, what, "(answers, weights)")[1], f"the weights of {what}")
            for row, query in zip(weights.reshape(-1, len(keys)), np.ravel(soft_query)):
                fail_if_look_alike(submission, row, float(query), 1.5, keys)  # its name, not a consequence's
                expect_closer_keys_weigh_more(row, float(query), keys, sharpness=1.5)
        else:
            verify.expect(verify.number(value, what) in list(np.asarray(values, dtype=float)),
                          f"{what} returned {verify.show(value)}: besides leaving the arrays alone, a lookup returns "
                          "one of the values.")


@pytest.mark.points(1)
@pytest.mark.parametrize("kind", ["integers", "floats"])
def test_return_types(submission, kind):
    """soft_lookup answers a number with a float and 1-D weights, an array of queries with arrays, of floats (the
    right ones)."""
    made = (lambda x: np.array(x, dtype=int)) if kind == "integers" else (lambda x: np.array(x, dtype=float))
    keys, values = made(BEDROOMS), made(PRICES)
    for query, case, sharpness in [(3, "one query", 1.5), (made([3]).reshape(()), "one query", 1000),
                                   (made([1, 3]), "several queries", 1.5), (made([2]), "several queries", 1000)]:
        promised(submission.lookup.soft_lookup, query, keys, values, sharpness, case=case,
                 what=f"soft_lookup({verify.show(query)}, {kind} keys and prices, sharpness={sharpness:g})",
                 expected=soft_answers(query, sharpness, keys, values))
