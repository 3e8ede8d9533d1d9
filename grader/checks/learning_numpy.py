"""Exercise 5 as the judge computes it, in numpy: soft and nearest answers, slopes, and gradient descent.

The soft answer's slope is in closed form, and a learner's slope is matched
against finite differences of several steps, so a verdict can say when a
slope is one. The fits are compared step by step with :func:`descend` (the
docstring's rule: ``log_sharpness -= lr * gradient``), and a trajectory that
differs is matched against the same descent made by another rule, so the
verdict names what the code did: Adam's steps, momentum, a gradient never
set back to zero, a step uphill. Everything is float64 and closed-form: the
loss is the mean squared error of the soft answers, and its gradient with
respect to the log of the sharpness comes from the softmax's own derivative.
"""

from __future__ import annotations

import functools

import numpy as np

from grader.lesson import lesson

BEDROOMS, PRICES = np.array(lesson.BEDROOMS), np.array(lesson.PRICES)
NINE_QUERIES = np.arange(1.0, 5.01, 0.5)  # 1, 1.5, ..., 5: the queries the fits are made on
TRUE_SHARPNESS = 1.5  # the lesson's: the sharpness its fit's answers are made at


def soft_answers(queries, sharpness, keys=BEDROOMS, values=PRICES):
    """(answers, weights) of the soft lookup, shifted by the largest score so that any sharpness stays finite."""
    scores = -np.asarray(sharpness, dtype=float) * (np.asarray(queries, dtype=float)[..., None] - keys) ** 2
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights @ values, weights


def nearest_answers(queries, keys=BEDROOMS, values=PRICES):
    """The nearest lookup; np.argmin takes the first of equally close keys, the kit's tie rule."""
    return values[np.argmin(np.abs(np.asarray(queries, dtype=float)[..., None] - keys), axis=-1)]


def soft_slope(query, sharpness, keys=BEDROOMS, values=PRICES):
    """d(answer)/d(query) = 2 * sharpness * (weighted mean of value*key - weighted means' product)."""
    _, w = soft_answers(query, sharpness, keys, values)
    return 2 * sharpness * (w @ (values * keys) - (w @ values) * (w @ keys))


def sharpness_slope(query, sharpness):
    """d(answer)/d(sharpness): a wrong variable a learner may differentiate by."""
    _, w = soft_answers(query, sharpness)
    distance = (query - BEDROOMS) ** 2
    return -(w @ (PRICES * distance) - (w @ PRICES) * (w @ distance))


def wrong_slope_hint(slope, query, sharpness) -> tuple[str, str]:
    """Why ``slope`` is not the soft answer's slope at ``query``, and the mistake's name: differentiated by the
    sharpness, or its sign flipped; else (no name) how autograd gives it."""
    if np.isclose(slope, sharpness_slope(query, sharpness), atol=1e-6):
        return "That is d(answer)/d(sharpness): the query is the tensor to differentiate by.", "slope-by-sharpness"
    if np.isclose(slope, -soft_slope(query, sharpness), atol=1e-6):
        return "The sign is flipped: the answer rises as the query moves from 2 towards 4.", "slope-sign-flipped"
    return ("Make the query a tensor with requires_grad=True, compute soft_answer from it, call .backward() on the "
            "answer and return query.grad."), ""


def mse(sharpness, queries, answers):
    """The mean squared error at one sharpness, or at each of an array of them."""
    sharpness = np.asarray(sharpness, dtype=float)[..., None, None]
    return np.mean((soft_answers(queries, sharpness)[0] - answers) ** 2, axis=-1)


def nearest_loss(queries, answers, which: int, key: float) -> float:
    """The mean squared error of the nearest answers with keys[which] moved to ``key``: a nearest fit's every loss,
    argmin giving it no gradient to move by."""
    keys = BEDROOMS.copy()
    keys[which] = key
    return float(np.mean((nearest_answers(queries, keys) - answers) ** 2))


# test_very_sharp_answers' (query, sharpness, answer, slope, keys, values): the answers and slopes in closed form,
# where exp() of the scores underflows. Query 20 leaves key 5 alone: answer 420, slope 0 (to 1e-100). Query 3 at
# sharpness s is shared by keys 2 and 4: key 4 gets sigmoid(4s(query - 3)) of the weight, whose slope at 3 is s, so
# the answer is 275 and its slope (340 - 210) * s = 130,000 £k per bedroom. Query 15 with a 25-bedroom house at
# £900k added lies 10 from keys 5 and 25: the weight of key 25 is sigmoid(40 s (query - 15)), so the answer is 660
# and its slope (900 - 420) * 10 s = 48,000 £k per bedroom.
MANSION = (np.append(BEDROOMS, 25.0), np.append(PRICES, 900.0))
VERY_SHARP = {"sharp": [(3.0, 1000.0, 275.0, 130_000.0, BEDROOMS, PRICES)],
              "far": [(20.0, 10.0, 420.0, 0.0, BEDROOMS, PRICES), (15.0, 10.0, 660.0, 48_000.0, *MANSION)]}


def least_squares_sharpness(queries, answers, low=0.5, high=4.0, step=1e-4, coarse=100) -> float:
    """The sharpness of least squared error on the grid ``low, low + step, ...`` below ``high``.

    Searched coarsely first (every ``coarse``-th point), then finely within one coarse step of the best: the
    point a search of the whole fine grid finds (the squared error has one valley there), in a hundredth of the
    time (0.4 ms, not 27).
    """
    grid = np.arange(low, high, step)
    best = int(np.argmin(mse(grid[::coarse], queries, answers))) * coarse
    near = grid[max(best - coarse, 0): best + coarse + 1]
    return float(near[np.argmin(mse(near, queries, answers))])


def finite_difference(slope, query, sharpness, keys=BEDROOMS, values=PRICES) -> str | None:
    """"a forward difference with a step of 0.001", say, if ``slope`` is one (and not the slope itself)."""
    if np.isclose(slope, soft_slope(query, sharpness, keys, values), rtol=1e-9, atol=1e-9):
        return None
    for step in 10.0 ** -np.arange(1, 9):
        ahead, behind, here = (float(soft_answers(query + shift, sharpness, keys, values)[0])
                               for shift in (step, -step, 0.0))
        for kind, estimate in [("forward", (ahead - here) / step), ("backward", (here - behind) / step),
                               ("central", (ahead - behind) / (2 * step))]:
            if np.isclose(slope, estimate, rtol=1e-7, atol=1e-7):
                return f"a {kind} difference with a step of {step:g}"
    return None


def slope_hint(slope, query, sharpness, otherwise: str, keys=BEDROOMS, values=PRICES) -> str:
    """``otherwise``, unless the slope is a finite difference: then say so, and what it costs."""
    difference = finite_difference(slope, query, sharpness, keys, values)
    if difference is None:
        return otherwise
    return (f"That is {difference}, not the slope: a difference quotient is off by an amount that grows with the step "
            "and with how sharply the answer bends (here more than the tolerance). Let autograd give the slope "
            "itself: backward() on the answer, then query.grad.")



# Another rule's descent, as a verdict names it: "that is what <rule> gives".
RULES = {
    "adam": "Adam (torch.optim.Adam), whose steps are about lr long whatever the gradient's size, so that it creeps "
            "where plain descent strides",
    "momentum": "gradient descent with momentum (torch.optim.SGD(..., momentum=0.9)), each step adding most of the "
                "one before",
    "accumulated": "gradient descent whose gradient is never set back to zero: torch adds each new gradient to the "
                   "old ones until log_sharpness.grad.zero_() (or optimizer.zero_grad())",
    "uphill": "a descent that steps *with* the gradient, uphill: move against it, log_sharpness -= lr * "
              "log_sharpness.grad",
}


def loss_and_gradient(log_sharpness: float, queries, answers, keys=BEDROOMS, values=PRICES) -> tuple[float, float]:
    """The mean squared error of the soft answers at ``exp(log_sharpness)``, and its derivative by the log."""
    sharpness = np.exp(log_sharpness)
    squared = (np.asarray(queries, dtype=float)[:, None] - np.asarray(keys, dtype=float)) ** 2
    scores = -sharpness * squared
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    prices = np.asarray(values, dtype=float)
    errors = weights @ prices - np.asarray(answers, dtype=float)
    # d(answer)/d(sharpness) = -(weighted mean of value * d^2) + (weighted mean of value) * (weighted mean of d^2)
    slopes = -(weights * prices * squared).sum(axis=1) + (weights @ prices) * (weights * squared).sum(axis=1)
    return float(np.mean(errors**2)), float(sharpness * np.mean(2 * errors * slopes))


def descend(queries, answers, start: float, steps: int, lr: float, rule: str = "plain", keys=BEDROOMS,
            values=PRICES) -> tuple[float, list[float]]:
    """``(sharpness, losses)`` of ``steps`` steps from ``start`` by ``rule`` ("plain", or one of :data:`RULES`).

    Its inputs are the checks' own (a learner's fit can only make a replay shorter), so every grading, every
    student of a class, asks for the same descents: each is computed once per process, and each caller gets a
    list of its own.
    """
    arrays = [np.asarray(array, dtype=float) for array in (queries, answers, keys, values)]
    sharpness, losses = _descent(*[(array.shape, array.tobytes()) for array in arrays], float(start), int(steps),
                                 float(lr), rule)
    return sharpness, list(losses)


@functools.lru_cache(maxsize=256)
def _descent(queries, answers, keys, values, start, steps, lr, rule) -> tuple[float, tuple[float, ...]]:
    """:func:`descend` of arrays given as ``(shape, bytes)``."""
    queries, answers, keys, values = (np.frombuffer(data).reshape(shape) for shape, data in
                                      (queries, answers, keys, values))
    theta, losses, moment, second, gradients = float(np.log(start)), [], 0.0, 0.0, 0.0
    for step in range(1, steps + 1):
        loss, gradient = loss_and_gradient(theta, queries, answers, keys, values)
        losses.append(loss)
        if not np.isfinite(theta + gradient):
            break
        if rule == "plain":
            theta -= lr * gradient
        elif rule == "uphill":
            theta += lr * gradient
        elif rule == "momentum":  # torch's SGD: the buffer starts as the first gradient
            moment = gradient if step == 1 else 0.9 * moment + gradient
            theta -= lr * moment
        elif rule == "accumulated":
            gradients += gradient
            theta -= lr * gradients
        elif rule == "adam":  # torch's defaults: betas (0.9, 0.999), eps 1e-8, bias corrected
            moment = 0.9 * moment + 0.1 * gradient
            second = 0.999 * second + 0.001 * gradient**2
            theta -= lr * (moment / (1 - 0.9**step)) / (np.sqrt(second / (1 - 0.999**step)) + 1e-8)
        else:
            raise ValueError(f"no rule {rule!r}")
    with np.errstate(over="ignore"):
        return float(np.exp(theta)), tuple(losses)


def other_rule(losses, sharpness: float, queries, answers, start: float, steps: int, lr: float, keys=BEDROOMS,
               values=PRICES) -> str | None:
    """The rule of :data:`RULES` whose descent gives these losses, or ends at this sharpness where plain descent
    does not (its key); else None."""
    plain, _ = descend(queries, answers, start, steps, lr, "plain", keys, values)
    for rule in RULES:
        end, expected = descend(queries, answers, start, steps, lr, rule, keys, values)
        if len(losses) == len(expected) and np.allclose(losses, expected, rtol=1e-4, atol=0):
            return rule
        distinct = np.isfinite(end) and not np.isclose(end, plain, rtol=1e-3, atol=0)
        if distinct and np.isclose(sharpness, end, rtol=1e-6, atol=0):
            return rule
    return None


# Each rule of RULES as the mistake it is (the names of exercises.toml's learning mistakes).
RULE_MISTAKES = {"adam": "adam-steps", "momentum": "momentum-steps", "accumulated": "gradient-not-zeroed",
                 "uphill": "stepped-uphill"}


def rule_hint(sharpness, losses, answers, start=0.1, steps=200, lr=5e-4) -> tuple[str | None, str]:
    """"That is what Adam gives...", when another optimiser's descent explains the fit (see RULES), and the
    mistake's name; (None, "") when none does."""
    found = other_rule(losses, sharpness, NINE_QUERIES, answers, start, steps, lr)
    if found is None:
        return None, ""
    return f"That is what {RULES[found]} gives. The docstring's descent steps by lr times the gradient.", \
        RULE_MISTAKES[found]


def recovery_hint(sharpness, losses, answers, truth, start) -> tuple[str, str]:
    """Why a fit did not end at the sharpness that made its answers, the likeliest cause first, and its name."""
    rule, mistake = rule_hint(sharpness, losses, answers, start)
    if rule:
        return rule, mistake
    if np.isclose(sharpness, np.log(truth), atol=0.005):
        return f"That is the logarithm of {truth:g}: return log_sharpness.exp().", "log-returned"
    if np.isclose(sharpness, start):
        return ("It never moved from the start: does the gradient reach log_sharpness, and do you step with it?",
                "never-moved")
    if sharpness > 10:
        return ("A step too large threw it onto the flat part, where the soft lookup has become the nearest one and "
                "the slope is almost 0. Is the loss the mean (not the sum), and do you step in the logarithm, with "
                "the given learning rate?"), "step-too-large"
    return "Follow the docstring's steps: the mean squared error, backward, a step against the gradient.", ""


def first_loss_hint(first: float, expected: float, count: int) -> tuple[str, str]:
    """Why losses[0] is not ``expected``, the mean squared error of ``count`` answers at the start, and the mistake's
    name: the sum of the squared errors, its root, or the loss after the first step."""
    if np.isclose(first, count * expected):
        return f"That is {count} times too much: the sum of the squared errors; take their mean.", "sum-not-mean"
    if np.isclose(first, np.sqrt(expected)):
        return ("That is the square root of the mean squared error; the loss is the mean squared error itself.",
                "root-of-mse")
    if first < expected:
        return ("Record the loss of the current sharpness before you step, so losses[0] belongs to `start`.",
                "loss-after-step")
    return ("losses[0] is the mean of the squared differences between the answers at `start` and the observed "
            "ones."), "losses-not-mse"
