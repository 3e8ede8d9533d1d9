"""What checks use to verify plain data: shape, type and closeness, with hints.

A failed check raises :class:`CheckFailure`, whose message is what the learner
reads: what was expected, what was received, and a hint in the lesson's
words. The checks never show reference code, only numbers.

Where a verdict diagnoses a mistake, it also names it (``mistake=``): one of
the names its exercise lists under ``mistakes`` in
``grader/checks/exercises.toml``. The name is what stays when the numbers
and the wording change: the class summary counts students by it, the
feedback shows it, and the kit's catalogue of wrong implementations
(``tests/mistakes.py``) says which name each one must be told.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from grader.engine import promises
from grader.engine.confinement.codec import Unsupported


class CheckFailure(AssertionError):
    """A check's verdict: the message is shown to the learner as it is; ``mistake`` names the diagnosis, if any."""

    def __init__(self, message: str, mistake: str = ""):
        super().__init__(message)
        self.mistake = mistake


def fail(message: str, mistake: str = ""):
    raise CheckFailure(message, mistake)


SHOWN_ITEMS = 24  # items of an array, list or tuple shown in full; a longer one shows its ends (or its start)


def show(value, digits: int = 4) -> str:
    """A short, readable rendering of a received or expected value, to ``digits`` digits, on one line.

    numpy writes the rows of a matrix (and a long vector) on lines of their
    own; in a sentence, a table cell or a feedback file the second row would
    then start flush left, cut off from the verdict it belongs to. One line
    keeps the brackets that show the rows: ``[[nan nan] [nan nan]]``.
    """
    if isinstance(value, np.ndarray):
        text = np.array2string(value, precision=digits, threshold=SHOWN_ITEMS, edgeitems=2, max_line_width=100)
        return " ".join(line.strip() for line in text.splitlines())
    if type(value) in (list, tuple):  # item by item, as short: repr would write each array whole, on many lines
        items = [show(item, digits) for item in value[:SHOWN_ITEMS]]
        items += [f"... {len(value) - SHOWN_ITEMS} more"] if len(value) > SHOWN_ITEMS else []
        text = ", ".join(items)
        return f"[{text}]" if isinstance(value, list) else f"({text}{',' if len(value) == 1 else ''})"
    if isinstance(value, float):
        keep_zeros = "#" if digits > 4 else ""  # extra digits were asked for: show them, zeros too (1.000000)
        return f"{value:{keep_zeros}.{digits}g}" if abs(value) < 1e5 else f"{value:.{digits}e}"
    return repr(value)


def digits_to_differ(expected, received, start: int = 4) -> int:
    """How many digits ``show`` needs so that the two values, where they differ most, read differently.

    "expected 0.5379, received 0.5379" tells a learner nothing; this finds the
    precision at which the largest difference becomes visible (fixed-point
    decimals for arrays, significant digits for numbers).
    """
    a, b = np.asarray(expected, dtype=float), np.asarray(received, dtype=float)
    if a.shape != b.shape or a.size == 0:
        return start
    gap = np.abs(a - b)
    worst = int(np.argmax(np.where(np.isnan(gap), -1, gap)))
    x, y = a.flat[worst], b.flat[worst]
    style = "g" if a.ndim == 0 else "f"
    return next((d for d in range(start, 18) if f"{x:.{d}{style}}" != f"{y:.{d}{style}}"), 17)


def percent(weights) -> str:
    return "[" + ", ".join(f"{100 * w:.2f}%" for w in np.ravel(weights)) + "]"


def _describe_type(value) -> str:
    if value is None:
        return "None (did you forget a `return`?)"
    if isinstance(value, Unsupported):
        return f"an object of type {value.type_name}"
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)} items"
    return f"a {type(value).__name__}"


def array(value, what: str, shape: tuple | None = None, finite: bool = True) -> np.ndarray:
    """``value`` as a float array, failing with a clear message if it is not one.

    Lists of numbers are accepted (the maths is the same); ``None``, objects,
    ragged lists, the wrong shape and, unless ``finite=False``, NaN or
    infinity are not.
    """
    if isinstance(value, (Unsupported, str)) or value is None:
        fail(f"{what}: expected an array of numbers, received {_describe_type(value)}.")
    try:
        result = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        fail(f"{what}: expected an array of numbers, received {_describe_type(value)}.")
    if shape is not None and result.shape != tuple(shape):
        fail(f"{what}: expected shape {tuple(shape)}, received shape {result.shape}.")
    if finite and np.any(np.isnan(result)):
        fail(f"{what} contains NaN: {show(result)}. Softmax gives NaN in two ways, and the numbers cannot tell "
             "which: exp() of a large score overflowed (inf/inf; subtract the largest score first), or every "
             "score of a row was -inf (0/0; a row where nothing may be attended, as when a mask is inverted).")
    if finite and not np.all(np.isfinite(result)):
        fail(f"{what} contains infinity: {show(result)}. exp() of a large score overflows to inf: subtract "
             "the largest score before exponentiating.")
    return result


def finite(value, what: str, cause: str, shape: tuple | None = None, mistake: str = "") -> np.ndarray:
    """``value`` as a float array; NaN or infinity fails with ``cause``, the likely mistake the check knows."""
    result = array(value, what, shape=shape, finite=False)
    if not np.all(np.isfinite(result)):
        fail(f"{what} contains {'NaN' if np.any(np.isnan(result)) else 'infinity'}: {show(result)}. {cause}", mistake)
    return result


def all_on_the_best(scores) -> np.ndarray:
    """Weights shared equally by the highest scores of each row: softmax's limit when the best leads by far.

    The stability checks pick scores whose runners-up trail by hundreds, where
    softmax differs from this by less than exp(-100), so their expected values
    need no softmax (a student bundle ships this file).
    """
    scores = np.asarray(scores, dtype=float)
    best = scores == np.max(scores, axis=-1, keepdims=True)
    return best / np.sum(best, axis=-1, keepdims=True)


def number(value, what: str, cause: str = "", mistake: str = "") -> float:
    """``value`` as a float; a numpy scalar, a 0-d or one-element array counts as a number (the value's type is
    :func:`returns`'s to judge). ``cause``: why it could be NaN."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number, np.ndarray)):
        fail(f"{what}: expected a number, received {_describe_type(value)}.")
    if isinstance(value, np.ndarray):
        if value.size != 1:
            fail(f"{what}: expected a single number, received an array of shape {value.shape}.")
        value = value.reshape(())
    result = float(value)
    if not np.isfinite(result):
        fail(f"{what}: expected a finite number, received {result}." + (f" {cause}" if cause else ""), mistake)
    return result


def pair(value, what: str, names: str = "(output, weights)"):
    """A function that must return two things returned exactly two."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        fail(f"{what} must return a pair {names}; received {_describe_type(value)}.")
    return value


def close(received, expected, what: str, hint: str = "", atol: float = 1e-6, rtol: float = 1e-6,
          mistake: str = ""):
    """Fail unless ``received`` matches ``expected`` within ``atol + rtol*|expected|`` (``mistake``: the hint's)."""
    received_array = np.asarray(received, dtype=float)
    expected_array = np.asarray(expected, dtype=float)
    if received_array.shape != expected_array.shape:
        fail(f"{what}: expected shape {expected_array.shape}, received shape {received_array.shape}.")
    if np.allclose(received_array, expected_array, atol=atol, rtol=rtol, equal_nan=False):
        return
    if received_array.size == 1:
        a, b = expected_array.item(), received_array.item()
        digits = digits_to_differ(a, b)
        message = f"{what}: expected {show(a, digits)}, received {show(b, digits)}"
    else:
        wrong = ~np.isclose(received_array, expected_array, atol=atol, rtol=rtol)
        worst = np.unravel_index(np.argmax(np.where(wrong, np.abs(received_array - expected_array), -1)),
                                 received_array.shape)
        index = tuple(int(i) for i in worst)
        a, b = float(expected_array[index]), float(received_array[index])
        if received_array.size <= 24:
            digits = digits_to_differ(expected_array, received_array)
            message = f"{what}: expected {show(expected_array, digits)}, received {show(received_array, digits)}"
        else:
            message = f"{what}: {int(wrong.sum())} of {wrong.size} entries are off"
        digits = digits_to_differ(a, b)
        message += f" (largest difference at index {index}: expected {show(a, digits)}, received {show(b, digits)})"
    fail(message + (f". {hint}" if hint else "."), mistake)


def average_atol(values, weight_atol: float = 1e-6) -> float:
    """The absolute tolerance a weighted average of ``values`` inherits from weights right to ``weight_atol``.

    An answer sum_j w_j v_j with every weight off by up to ``weight_atol`` is
    off by up to ``weight_atol * sum_j |v_j|``: float32 weights (off by ~1e-7)
    averaging prices near 100 miss a small answer by more than 1e-6 of it.
    """
    return weight_atol * float(np.max(np.sum(np.abs(np.asarray(values, dtype=float)), axis=0)))


def ranked_like(weights, scores, axis: int = -1) -> bool:
    """Whether, along ``axis``, the weights follow the order of the scores.

    A higher score never gets a smaller weight, and among the finite scores
    of a slice that differ some weight is larger (exp() may round far-off
    weights to 0, so ties among tiny weights are allowed). Softmax keeps this
    order; equal weights, a constant or an echo of the input do not, so
    property checks (sums to 1, shift invariance, ...) ask it too and a
    degenerate answer cannot pass them.
    """
    weights, scores = np.asarray(weights, dtype=float), np.asarray(scores, dtype=float)
    order = np.argsort(scores, axis=axis)
    sorted_scores = np.take_along_axis(scores, order, axis)
    rise_in_weight = np.diff(np.take_along_axis(weights, order, axis), axis=axis)
    with np.errstate(invalid="ignore"):  # -inf - -inf is NaN: two masked scores, no order between them
        rise_in_score = np.diff(sorted_scores, axis=axis) > 0
    finite = np.isfinite(sorted_scores)
    finite_rise = rise_in_score & np.delete(finite, 0, axis) & np.delete(finite, -1, axis)
    never_falls = np.all(rise_in_weight[rise_in_score] >= 0)
    rises = np.any(finite_rise & (rise_in_weight > 0), axis=axis) | ~np.any(finite_rise, axis=axis)
    return bool(never_falls and np.all(rises))


def returns(value, promise: str, what: str):
    """Fail unless ``value`` is of the type its docstring promises: ``promise``, the function's ``returns`` in
    ``exercises.toml`` (:func:`grader.engine.registry.promise` finds it), in :mod:`grader.engine.promises`'s words.

    The one rule every exercise's checks use for types: kind (float, array, tensor, list, tuple), dtype family
    (floats, booleans) and number of dimensions; the values are the other checks'.
    """
    if problem := promises.broken(value, promises.parse(promise), what):
        fail(problem, "wrong-return-type")


def unchanged(sent: dict, after: list, what: str):
    """Fail if a call changed an argument it was given: ``sent`` names each argument as the judge sent it.

    ``after`` is what the worker reports back (``arguments_after``); only the
    checks of this rule ask, so an in-place change costs those checks alone.
    """
    for (name, value), later in zip(sent.items(), after):
        if not _same(value, later):
            fail(f"{what} changed its argument `{name}` in place: work on a copy (`x = x - x.max()` makes a new "
                 "array, `x -= x.max()` changes the caller's), because the caller still needs its values.",
                 "changed-in-place")


def _same(sent, after) -> bool:
    if isinstance(sent, np.ndarray):
        return isinstance(after, np.ndarray) and after.shape == sent.shape and np.array_equal(after, sent,
                                                                                              equal_nan=True)
    if isinstance(sent, (list, tuple)):
        return type(after) is type(sent) and len(after) == len(sent) and all(map(_same, sent, after))
    if isinstance(after, (np.ndarray, list, tuple)):
        return False
    return bool(after == sent) or (sent != sent and after != after)  # NaN stays NaN


def expect(condition, message: str | Callable[[], str], mistake: str = ""):
    """Fail with ``message`` unless ``condition`` holds. A message that shows arrays may be given as a function
    that writes it: most checks pass, and writing one costs more than the check (a tenth of a millisecond)."""
    if not condition:
        fail(message() if callable(message) else message, mistake)
