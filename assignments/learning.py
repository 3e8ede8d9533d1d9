"""Exercise 5: why attention is soft.

A lookup that is learned must have a slope. Gradient descent changes a
parameter in the direction that lowers the loss, and it finds that direction
by differentiating the loss. The soft lookup of exercise 2 moves smoothly
with its query, its keys and its sharpness, so every one of them has a slope.
The nearest lookup picks one value with ``argmin`` and then stands still
until it jumps to the next: its slope is 0 almost everywhere and undefined
at the jump, so there is nothing for gradient descent to follow. That is why
attention uses softmax weights and not a hard choice.

Here torch computes the slopes for you (autograd). Torch can only
differentiate what it computed itself, so your numpy ``soft_lookup`` from
exercise 2 is no use here: you write it again in torch, in a few lines, as
``soft_answer``. Work in float64 (``dtype=torch.float64``): the fits below
are measured to a millionth, finer than float32 rounding is comfortable with.

Every function leaves the arrays and lists it is given as they were (a
tensor made by ``torch.as_tensor`` shares a numpy array's memory: writing
into it writes into the caller's array). The house records of exercise 2
again, keys = bedrooms, values = prices in thousands of pounds:

    bedrooms (key)   1     2     4     5
    price (value)   150   210   340   420
"""

import math

import torch


def soft_answer(query, keys, values, sharpness):
    """The soft lookup of exercise 2, in torch: return the answer as a tensor.

    The same three steps as ``soft_lookup``, with torch functions:
    ``scores = -sharpness * (query - keys) ** 2``, then ``torch.softmax``
    over the keys, then the weighted sum of the values. Only the answer is
    returned, not the weights. Query 3 with sharpness 1.5 gives 275.11, as
    in exercise 2. ``torch.softmax`` is what keeps a very sharp lookup
    (sharpness 1000) or a far query (20 bedrooms) finite, and its slope too:
    ``exp(score)`` divided by its sum underflows there to ``0/0 = nan``.

    Every argument may be a number, a list, a numpy array or a tensor. Turn
    each into a float64 tensor with ``torch.as_tensor(x, dtype=torch.float64)``:
    a tensor that already is one comes back unchanged, so a query or a
    sharpness that torch is tracking for gradients stays tracked.

    Args:
        query: one query, or a 1-D collection of queries.
        keys, values: 1-D, of the same length.
        sharpness: a number or a 0-d tensor (> 0).

    Returns:
        A 0-d tensor for one query; a tensor of shape (number of queries,)
        for several, answer ``i`` belonging to query ``i``.
    """
    # YOUR CODE HERE
    raise NotImplementedError("soft_answer(): replace this line with your code")


def nearest_answer(query, keys, values):
    """The nearest lookup of exercise 2, in torch: the value of the closest key.

    ``torch.argmin`` of ``|query - keys|`` gives the closest key's index; it
    returns the first of equally close keys, the tie rule of exercise 2
    (query 3 gives 210). Index ``values`` with it.

    Arguments as for ``soft_answer``; the result is a 0-d tensor for one
    query and a tensor of shape (number of queries,) for several.
    """
    # YOUR CODE HERE
    raise NotImplementedError("nearest_answer(): replace this line with your code")


def answer_slope(query, keys, values, sharpness):
    """The soft answer and how fast it moves with the query: ``(answer, d(answer)/d(query))``, by autograd.

    Make the query a tensor that torch tracks
    (``torch.tensor(query, dtype=torch.float64, requires_grad=True)``),
    compute ``soft_answer`` from it, call ``.backward()`` on the answer and
    read the query's ``.grad``. Return the answer and the slope as Python
    floats (``.item()``); the slope is in thousands of pounds per bedroom.
    At query 3 and sharpness 1.5 that is ``(275.11, 201.76)``.

    With the house records:

        query   sharpness 0.5   1.5      5       20
          2          43.20     28.66    3.99    0.00
          3         102.40    201.76  650.00  2600.00
          3.5        81.43     46.06    0.15    0.00

    Read the columns from left to right: as the sharpness grows, the soft
    lookup turns into the nearest lookup. Its slope dies away everywhere
    except at query 3, halfway between keys 2 and 4, where the nearest
    lookup jumps from 210 to 340; there it grows without bound. In the
    limit nothing is left but flat steps and one vertical cliff.

    Args:
        query: one number. keys, values, sharpness: as for ``soft_answer``.

    Returns:
        ``(answer, slope)``, two Python floats (``.item()``), not tensors.
    """
    # YOUR CODE HERE
    raise NotImplementedError("answer_slope(): replace this line with your code")


def nearest_slope(query, keys, values):
    """The nearest answer and what autograd makes of its slope: ``(answer, d(answer)/d(query))``.

    Do as in ``answer_slope``, with ``nearest_answer``. You will find that
    the answer does not depend on the query through anything torch can
    differentiate: ``argmin`` returns an index, and an index has no slope.
    The answer's ``requires_grad`` is False, and ``.backward()`` on it
    raises an error. That *is* the result: there is no path from the answer
    back to the query, so the slope autograd gives is 0. Return 0.0 then,
    as a float, not None.

    At query 2.9 that is ``(210.0, 0.0)``, at 3.1 ``(340.0, 0.0)``, and at 3
    itself, where the answer jumps by 130, ``(210.0, 0.0)``: gradient
    descent on a nearest lookup never learns where to move.

    Returns:
        ``(answer, slope)``, two Python floats (``.item()``), not tensors.
    """
    # YOUR CODE HERE
    raise NotImplementedError("nearest_slope(): replace this line with your code")


def fit_sharpness(queries, answers, keys, values, start=0.1, steps=200, lr=5e-4):
    """Learn the sharpness from observed answers by gradient descent: ``(sharpness, losses)``.

    Somebody answered ``queries`` with a soft lookup of the house records at
    a sharpness they did not tell you. Recover it:

    1. Learn the *logarithm* of the sharpness, ``log_sharpness``, starting
       at ``math.log(start)``, as a float64 tensor with
       ``requires_grad=True``; use ``sharpness = log_sharpness.exp()``. Any
       real number is allowed for the logarithm, and its exp is always
       positive: a negative sharpness would reward the *farthest* keys.
    2. Each of the ``steps`` steps: compute the answers of
       ``soft_answer(queries, keys, values, sharpness)``, the loss (the
       *mean* of the squared differences from ``answers``), append
       ``loss.item()`` to ``losses``, call ``loss.backward()``, then move
       against the gradient: ``log_sharpness -= lr * log_sharpness.grad``
       (inside ``with torch.no_grad():``), and set the gradient back to
       zero (``log_sharpness.grad.zero_()``): torch adds new gradients to
       old ones until you do. ``torch.optim.SGD`` (without momentum) does
       the same; Adam, momentum or LBFGS take other steps, and the checks
       compare the losses step by step with this descent.
    3. Return the final sharpness as a float and the list of losses:
       ``losses[0]`` is the loss at ``start``, before any step, and there
       are ``steps`` of them.

    Keep the sharpness a tensor until the end: ``.item()`` or ``float()``
    in the middle gives a plain number, which torch cannot trace back.

    The nine queries 1, 1.5, ..., 5, answered at sharpness 1.5:

        step      0        10      25      50       100       199
        loss   2702.98   25.97   1.354   0.0035   2.1e-08   9.5e-19
        sharpness 1.500000 after 200 steps, from 0.1

    Noisy answers cannot be fitted exactly; the descent then settles where
    the mean squared error is smallest. With about 2 £k of noise on each of
    the nine answers that is near 1.5 but not on it (1.426 for the noise
    the checks add, with a loss of 1.47).

    Args:
        queries, answers: the observed questions and answers (1-D, same length).
        keys, values: the records.
        start: the first guess for the sharpness (> 0).
        steps: how many gradient steps.
        lr: the learning rate (step size) for the logarithm.

    Returns:
        ``(sharpness, losses)``: a float and a list of ``steps`` floats.
    """
    # YOUR CODE HERE
    raise NotImplementedError("fit_sharpness(): replace this line with your code")


def fit_nearest_key(queries, answers, keys, values, which, start, steps=50, lr=1e-3):
    """Try to learn a key through the nearest lookup: ``(key, losses)``.

    The agent lost the bedroom count of one house, ``keys[which]``, and
    guesses ``start``. The same descent as ``fit_sharpness``, with the
    nearest lookup and the key as the parameter:

    1. ``key = torch.tensor(start, dtype=torch.float64, requires_grad=True)``;
       each step, put it in place of ``keys[which]`` (``torch.cat`` of the
       keys before it, ``key[None]``, and the keys after it). Do not write
       into ``keys`` itself: ``torch.as_tensor`` of a numpy array shares its
       memory, and a function must leave its arguments as they were.
    2. The loss is the mean squared difference between
       ``nearest_answer(queries, keys_now, values)`` and ``answers``;
       append ``loss.item()`` to ``losses``.
    3. Step: ``key = key - lr * gradient``. Here is the point of the
       exercise: ``loss.requires_grad`` is False, because ``argmin`` cut
       every path from the key to the loss. Autograd has no slope to give,
       so take the gradient to be 0 in that case rather than letting
       ``backward`` fail, and step anyway.

    Return the final key as a float and the ``steps`` losses. Take the
    nine queries of ``fit_sharpness``, answered by the nearest lookup of the
    true records, and guess the £340k house's key at 3.2 instead of 4:
    queries 3 and 4.5 now get 340 and 420 instead of 210 and 340, a loss
    of 2588.89, at every step, and the key is still 3.2 at the end. The
    same 50 steps through ``soft_answer`` at sharpness 1.5 would have moved
    it to 4.13.

    Returns:
        ``(key, losses)``: a float and a list of ``steps`` floats.
    """
    # YOUR CODE HERE
    raise NotImplementedError("fit_nearest_key(): replace this line with your code")
