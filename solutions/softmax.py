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

    Two rules the checks hold you to:

    * Each row gets its own shift. In a 2-D array whose rows lie far apart
      (one near +1000, one near -1000), subtracting one largest score for the
      whole array leaves the far row at -2000, where every ``exp`` underflows
      to 0 and the weights become ``0/0 = nan``: subtract the largest score
      along ``axis``.
    * ``x`` is left as it was: the caller still needs its scores. Make a new
      array (``shifted = x - x.max(...)``), never ``x -= ...`` on the
      caller's array.

    Args:
        x: scores of any shape, as an array or a (nested) list, integers
            or floats (the example above works with ``[2, 1, 0]`` too).
        axis: the axis along which the weights must sum to 1 (default: last).

    Returns:
        A numpy array of floats of the same shape as ``x`` (float32 is fine,
        and so is a torch tensor with no gradient history; a list is not).
    """
    ### BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    shifted = x - np.max(x, axis=axis, keepdims=True)
    exps = np.exp(shifted)
    return exps / np.sum(exps, axis=axis, keepdims=True)
    ### END SOLUTION
