"""Exercise 1: softmax, the step that turns match scores into weights.

Every lookup in this kit ends the same way: some scores say how well each
entry matches, and softmax turns them into weights that are positive and add
up to 1. Run the checks with ``softlookup check`` (or ``pytest``) after editing.
"""

import numpy as np


def softmax(x, axis=-1):
    """Turn scores into positive weights that sum to 1 along ``axis``.

    Each weight is ``exp(score)`` divided by the sum of ``exp`` over the axis,
    so a higher score always gets a bigger share, and no share is ever
    negative. Worked example with the scores of three keys:

        scores   [2.0, 1.0, 0.0]
        exp      [7.389, 2.718, 1.000]      sum 11.107
        weights  [0.665, 0.245, 0.090]      sum 1

    Three facts the checks test:

    * Adding the same number to every score changes nothing: the factor
      ``exp(c)`` appears above and below the fraction and cancels. So subtract
      the largest score first; then ``exp`` never sees a large number and
      scores of 1000 or -1000 cannot overflow to ``inf`` or turn into ``nan``.
    * A score of ``-inf`` (a masked entry) gets a weight of exactly 0,
      because ``exp(-inf) == 0``.
    * Multiplying all scores by a big factor pushes the weights towards a
      one-hot vector on the largest score; a factor near 0 makes them equal.

    Args:
        x: array of scores, any shape.
        axis: the axis along which the weights must sum to 1 (default: last).

    Returns:
        A float array of the same shape as ``x``.
    """
    # YOUR CODE HERE
    raise NotImplementedError("softmax(): replace this line with your code")
