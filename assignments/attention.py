"""Exercise 3: queries, keys and values as vectors.

In a transformer every token makes three vectors. Its *query* asks "what am I
looking for?", its *key* says "what do I contain?", and its *value* is "what I
hand over if someone attends to me". A query scores every key with a dot
product, softmax turns the scores into weights, and the output is the
weighted average of the values: the soft lookup of exercise 2, with vectors.

The functions leave the arrays they are given unchanged (the caller still
needs them): compute new arrays, never ``Q /= ...`` on the caller's.
"""

import numpy as np

from softmax import softmax


def attend(query, keys, values):
    """One query attends to every key: return ``(output, weights)``.

    The score of key ``j`` is the dot product ``query . keys[j]``: large when
    the two point the same way, near 0 at right angles, negative when they
    point apart. Then ``weights = softmax(scores)`` and
    ``output = sum_j weights[j] * values[j]``.

    Two-number example for "The cat sat on the": axis 1 means "is a thing",
    axis 2 "is an action". The last "the" needs a noun, so its query is
    (1.40, 0.30):

        token   key            score   weight
        The     (-0.9, -0.9)   -1.53    1.47%
        cat     ( 1.7,  0.2)    2.44   77.68%
        sat     ( 0.2,  1.7)    0.79   14.92%
        on      (-0.9,  0.7)   -1.05    2.37%
        the     (-0.2, -1.2)   -0.64    3.57%

    The key decides *who* gets attention; the value decides *what* moves.
    Doubling the query doubles every score, so a longer query is a sharper
    lookup, exactly like ``sharpness`` in exercise 2. A query 400 times as
    long scores "cat" 976: ``exp(976)`` overflows to ``inf``, so turn the
    scores into weights with your softmax, which subtracts the largest
    score first, not with a bare ``exp``.

    Args:
        query: shape ``(d,)``.
        keys: shape ``(n, d)``, one row per token.
        values: shape ``(n, d_v)``, one row per token.

    Returns:
        ``output`` of shape ``(d_v,)`` and ``weights`` of shape ``(n,)``.
    """
    # YOUR CODE HERE
    raise NotImplementedError("attend(): replace this line with your code")


def scaled_dot_product_attention(Q, K, V, mask=None):
    """Every query attends at once: return ``(output, weights)``.

    All the scores are one matrix product, ``Q @ K.T``, with row ``i`` for
    query ``i`` and column ``j`` for key ``j``. Transformers divide them by
    ``sqrt(d_k)`` (``d_k`` = the length of a key): dot products of long
    vectors grow with the length, and unscaled they would make softmax
    nearly one-hot before training has even started.

    ``mask`` (optional) is a boolean array of the scores' shape, ``True``
    where query ``i`` may attend to key ``j`` (not a float mask of 0 and
    ``-inf`` to add to the scores, as some libraries use). A forbidden pair
    must get a weight of exactly 0: give it a score of ``-inf`` before
    softmax, even where its score is the row's largest. Every row must allow
    at least one key.

    Example with ``d_k = 4``: a query equal to a key that has entries of 1
    scores ``4 / sqrt(4) = 2`` against it, not 4.

    Args:
        Q: shape ``(m, d_k)``; K: shape ``(n, d_k)``; V: shape ``(n, d_v)``.
        mask: ``None`` or a boolean array of shape ``(m, n)``.

    Returns:
        ``output`` of shape ``(m, d_v)`` and ``weights`` of shape ``(m, n)``,
        each row of weights summing to 1.
    """
    # YOUR CODE HERE
    raise NotImplementedError("scaled_dot_product_attention(): replace this line with your code")


def causal_mask(n):
    """The mask of a decoder: token ``i`` may look at tokens ``0..i`` only.

    ``True`` on and below the diagonal, ``False`` above it, so no token sees
    the future. For ``n = 3``:

        [[ True, False, False],
         [ True,  True, False],
         [ True,  True,  True]]

    Returns:
        A boolean array of shape ``(n, n)``.
    """
    # YOUR CODE HERE
    raise NotImplementedError("causal_mask(): replace this line with your code")
