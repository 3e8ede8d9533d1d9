"""Exercise 2: three ways to look up a house price.

An estate agent kept the prices of four sold houses, keyed by bedrooms:

    bedrooms (key)   1     2     4     5
    price (value)   150   210   340   420     (in thousands of pounds)

A client asks about a 3-bedroom house: the query is 3. Each function below
answers that question in its own way. They take ``keys`` and ``values`` as
lists or 1-D arrays of the same length, in the order given, of integers or
floats (queries too), and leave the arrays they are given unchanged (the
caller still needs them: compute new arrays, never ``keys -= query``).
"""

import numpy as np

from softmax import softmax


def exact_lookup(query, keys, values):
    """Return the value whose key equals ``query``, or ``None`` if there is none.

    This is a Python dict, or ``WHERE bedrooms = 3`` in SQL: a key either
    matches or it does not. With the records above:

        exact_lookup(2, keys, values)  ->  210
        exact_lookup(3, keys, values)  ->  None     (no 3-bedroom house was sold)

    If a key appears twice, return the value of its first occurrence.
    """
    ### BEGIN SOLUTION
    for key, value in zip(keys, values):
        if key == query:
            return value
    return None
    ### END SOLUTION


def nearest_lookup(query, keys, values):
    """Return the value of the key closest to ``query``.

    Never empty-handed, but it jumps: as the query slides from 2.9 to 3.1
    bedrooms, the answer leaps from 210 to 340 with nothing in between.

        nearest_lookup(2.2, keys, values)  ->  210
        nearest_lookup(4.6, keys, values)  ->  420

    Tie rule: when several keys are equally close, return the value of the
    one that comes *first in ``keys``*. For the lesson's query 3, keys 2 and 4
    are both 1 away, so the answer is 210 (key 2 comes first). ``np.argmin``
    already follows this rule.
    """
    ### BEGIN SOLUTION
    distances = np.abs(np.asarray(keys, dtype=float) - query)
    return values[int(np.argmin(distances))]
    ### END SOLUTION


def soft_lookup(query, keys, values, sharpness=1.0):
    """Blend every value, weighted by how well its key matches: ``(answer, weights)``.

    1. score each key: ``score_j = -sharpness * (query - key_j) ** 2``
       (0 for a perfect match, more negative the further away);
    2. ``weights = softmax(scores)``: positive, summing to 1;
    3. ``answer = sum_j weights_j * values_j``.

    The lesson's numbers, for query 3 and sharpness 1.5:

        key   score   weight    weight x value
         1    -6.00    0.55%         0.82
         2    -1.50   49.45%       103.85
         4    -1.50   49.45%       168.13
         5    -6.00    0.55%         2.31
                                answer 275.11  (about £275k)

    The answer is a weighted average, so it always lies between the smallest
    and largest value, and it moves smoothly as the query moves. A large
    sharpness makes it approach the nearest match; a sharpness near 0 makes
    it approach the plain mean of the values. Even a very sharp lookup
    (sharpness 1000), or a query far from every key (20 bedrooms), must
    answer: there every ``exp(score)`` underflows to 0, so dividing
    ``exp(score)`` by its sum gives ``0/0 = nan``, while softmax, which
    subtracts the largest score first, still works. (Statisticians know this as
    Nadaraya-Watson kernel regression with a Gaussian kernel.)

    Args:
        query: a number, or a 1-D array of several queries.
        keys, values: 1-D sequences of the same length.
        sharpness: how strongly the distance counts (>= 0; at 0 every key
            gets the same weight); 1.0 when it is not given.

    Returns:
        For a number: ``(answer, weights)`` with a float answer (a Python
        float or np.float64, not a 0-d array or tensor) and weights, a numpy
        array of floats, of shape ``(len(keys),)``. For ``q`` queries: an array of ``q``
        answers and a weights matrix of shape ``(q, len(keys))`` whose row
        ``i`` belongs to query ``i``. Use your ``softmax`` from exercise 1.
    """
    ### BEGIN SOLUTION
    keys = np.asarray(keys, dtype=float)
    values = np.asarray(values, dtype=float)
    queries = np.asarray(query, dtype=float)
    scores = -sharpness * (queries[..., None] - keys) ** 2
    weights = softmax(scores, axis=-1)
    answers = weights @ values
    if queries.ndim == 0:
        return float(answers), weights
    return answers, weights
    ### END SOLUTION
